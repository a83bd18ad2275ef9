/**
 * Politeness holds across workers: per-host concurrency and request spacing (delay,
 * robots Crawl-delay) are enforced for the whole crawl, not per process, and a long
 * Retry-After becomes a durable workflow timer before the host is asked again. Run with each
 * frontier store: with PostgreSQL each worker has its own connection pool, as on its own machine.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startSyntheticSite, type RouteHandler, type RequestLogEntry } from '../src/sites/synthetic-site';
import { historyEventTypes, runCrawlToEnd, startTestTemporal, STORE_KINDS, uniqueQueue, type TestTemporal } from './helpers/temporal';
import { html, linkedRoutes } from './helpers/fixtures';
import { startGaps } from './helpers/recording-site';

/** Smallest gap between the starts of consecutive page requests. */
function minStartGap(requests: RequestLogEntry[]): number {
  const starts = requests.filter((request) => request.path !== '/robots.txt').map((request) => request.startedAt).sort((a, b) => a - b);
  let gap = Infinity;
  for (let i = 1; i < starts.length; i++) gap = Math.min(gap, starts[i] - starts[i - 1]);
  return gap;
}

for (const store of STORE_KINDS) {
describe(`politeness across workers (${store} store)`, () => {
  let env: TestTemporal;
  const queue = uniqueQueue('polite');

  before(async () => {
    env = await startTestTemporal({ store });
    // Three workers, each with its own store connection (SQLite) or pool (PostgreSQL): as good
    // as three processes, or three machines, for politeness.
    for (let i = 0; i < 3; i++) await env.startWorker(queue);
  });
  after(async () => env?.close());

  it('never more than per-host-concurrency requests in flight, never two closer than the delay', async () => {
    const site = await startSyntheticSite({ pages: 40, latencyMs: 350 });
    try {
      const { records } = await runCrawlToEnd(env, queue, 'polite-delay', { seeds: [site.urlOf(0)], perHostConcurrency: 2, concurrency: 6, delayMs: 200, batchSize: 4 });
      assert.equal(records.length, site.graph.reachableFrom(0).size);
      const gap = minStartGap(site.requests);
      assert.equal(site.maxInFlight(), 2, 'two requests in flight at most (and the limit was reached)');
      // Slots are reserved 200 ms apart; a timer that fires a few ms late can shorten one observed gap.
      assert.ok(gap >= 185, `requests 200 ms apart, 15 ms timer tolerance (closest: ${gap} ms)`);
      console.log(`politeness (${store} store): ${records.length} pages, 3 workers, max in flight ${site.maxInFlight()}, closest requests ${gap} ms apart (delay 200 ms)`);
    } finally {
      await site.close();
    }
  });

  it('a host override of delay and per-host concurrency applies to its host only', async () => {
    const [strict, open] = await Promise.all([startSyntheticSite({ pages: 14, latencyMs: 200 }), startSyntheticSite({ pages: 30, latencyMs: 300 })]);
    try {
      const strictHost = new URL(strict.origin).host;
      const { records } = await runCrawlToEnd(env, queue, 'polite-host-override', {
        seeds: [strict.urlOf(0), open.urlOf(0)],
        perHostConcurrency: 2,
        concurrency: 6,
        batchSize: 3,
        hosts: { [strictHost]: { delayMs: 300, perHostConcurrency: 1 } },
      });
      assert.equal(records.length, strict.graph.reachableFrom(0).size + open.graph.reachableFrom(0).size);
      assert.equal(strict.maxInFlight(), 1, 'the overridden host: one batch at a time');
      // A request sent late (a busy event loop) shortens the gap after it, so the closest gap gets a tolerance and the median none.
      const gaps = startGaps(strict.requests.filter((request) => request.path !== '/robots.txt'));
      const median = [...gaps].sort((x, y) => x - y)[Math.floor(gaps.length / 2)];
      assert.ok(Math.min(...gaps) >= 240 && median >= 295, `the overridden host: requests 300 ms apart (gaps ${gaps} ms)`);
      assert.equal(open.maxInFlight(), 2, 'the other host keeps the crawl-wide limit of 2');
      assert.ok(minStartGap(open.requests) < 285, 'and no delay');
    } finally {
      await Promise.all([strict.close(), open.close()]);
    }
  });

  it('honours robots.txt Crawl-delay across batches', async () => {
    const site = await startSyntheticSite({ pages: 5, linksPerPage: 4, robotsTxt: 'User-agent: *\nCrawl-delay: 1\n' });
    try {
      const { records } = await runCrawlToEnd(env, queue, 'polite-crawl-delay', { seeds: [site.urlOf(0)], perHostConcurrency: 2, batchSize: 1 });
      assert.ok(records.length >= 4);
      const gap = minStartGap(site.requests);
      assert.ok(gap >= 990, `requests at least 1 s apart (closest: ${gap} ms)`);
    } finally {
      await site.close();
    }
  });

  it('a long Retry-After holds the host with a durable timer, then the page is fetched', async () => {
    let limited = false;
    const limitOnce: RouteHandler = (req, res) => {
      if (req.url === '/r/0' && !limited) {
        limited = true;
        res.writeHead(429, { 'retry-after': '11', 'content-type': 'text/plain' }).end('slow down');
        return;
      }
      html(res, req.url ?? '');
    };
    const site = await startSyntheticSite({ pages: 0, routes: linkedRoutes('/r/', 4, limitOnce) });
    try {
      const { records, handle } = await runCrawlToEnd(env, queue, 'polite-retry-after', { seeds: [`${site.origin}/`], perHostConcurrency: 1 });
      const limitedAt = site.requests.find((request) => request.path === '/r/0')!.endedAt!;
      const next = site.requests.filter((request) => request.startedAt > limitedAt && request.path !== '/robots.txt');
      assert.ok(next.length > 0);
      const waited = Math.min(...next.map((request) => request.startedAt)) - limitedAt;
      assert.ok(waited >= 10_900, `next request to the host ${waited} ms after the 429 (Retry-After: 11)`);
      assert.equal(records.find((record) => record.url.endsWith('/r/0'))?.status, 200, 'the limited page was fetched later');
      assert.ok((await historyEventTypes(handle)).includes('EVENT_TYPE_TIMER_STARTED'), 'the wait was a durable timer');
      const timers = ((await handle.fetchHistory()).events ?? []).filter((event) => event.timerStartedEventAttributes);
      const summaries = timers.map((event) => Buffer.from(event.userMetadata?.summary?.data ?? []).toString('utf8'));
      assert.ok(summaries.includes(JSON.stringify(`${new URL(site.origin).host} asked us to wait`)), `the timer says why (${summaries})`);
    } finally {
      await site.close();
    }
  });
});
}
