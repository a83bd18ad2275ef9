/**
 * End-to-end crawls of the synthetic site through a real Temporal dev server: the output is
 * exactly the reachable page set, each URL once, each page requested once; limits hold.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startSyntheticSite, SiteGraph } from '../src/sites/synthetic-site';
import { historyEventTypes, readRecords, runCrawlToEnd, startTestTemporal, startWithTemporalCli, uniqueQueue, type TestTemporal } from './helpers/temporal';
import type { crawlSession } from '../src/workflows';

function pageNumbers(urls: Iterable<string>): number[] {
  return [...urls].map((url) => Number(new URL(url).pathname.split('/').pop())).sort((a, b) => a - b);
}

describe('crawling a site', () => {
  let env: TestTemporal;
  const queue = uniqueQueue('crawl-site');

  before(async () => {
    env = await startTestTemporal();
    await env.startWorker(queue);
  });
  after(async () => env?.close());

  it('fetches exactly the reachable pages of a 2,000-page site, each once', async () => {
    const site = await startSyntheticSite({ pages: 2_000 });
    try {
      const started = Date.now();
      const { summary, records, handle } = await runCrawlToEnd(env, queue, 'site-2000', {
        seeds: [site.urlOf(0)],
        concurrency: 16,
        perHostConcurrency: 16,
        maxPages: 5_000,
        maxDepth: 1_000,
      });
      const seconds = (Date.now() - started) / 1000;
      const expected = [...site.graph.reachableFrom(0)].sort((a, b) => a - b);
      assert.ok(expected.length > 1_500 && expected.length < 2_000, `reachable set is non-trivial (${expected.length})`);

      const urls = records.map((record) => record.url);
      assert.equal(new Set(urls).size, urls.length, 'no URL has two records');
      assert.deepEqual(pageNumbers(urls), expected, 'records are exactly the reachable pages');
      assert.ok(records.every((record) => record.status === 200 && record.error === null && record.title === `Page ${pageNumbers([record.url])[0]}`));

      const pageRequests = site.requests.filter((request) => request.path.startsWith('/page/'));
      assert.deepEqual(pageNumbers(pageRequests.map((request) => site.origin + request.path)), expected, 'each reachable page requested exactly once');
      assert.ok(!pageRequests.some((request) => SiteGraph.isOrphan(Number(request.path.split('/').pop()))), 'orphans never requested');

      assert.equal(summary.status, 'completed');
      assert.equal(summary.totals.processed, expected.length);
      assert.equal(summary.totals.queued, 0);
      const events = (await historyEventTypes(handle)).length;
      console.log(
        `2,000-page site: ${expected.length} pages in ${seconds.toFixed(2)} s = ${(expected.length / seconds).toFixed(0)} pages/s, ${summary.batches} batches, ${events} history events (${(events / expected.length).toFixed(2)}/page)`,
      );
    } finally {
      await site.close();
    }
  });

  it("a crawl run again under its ID crawls with the settings it was started with, not its first run's", async () => {
    const site = await startSyntheticSite({ pages: 50 });
    try {
      const first = await runCrawlToEnd(env, queue, 'site-run-again', { seeds: [site.urlOf(0)], maxDepth: 0 });
      assert.deepEqual(pageNumbers(first.records.map((record) => record.url)), [0]);
      // A new workflow under the same ID, on the same store, as `temporal workflow start` may
      // start it (the ID reuse policy allows it), or `crawlflow crawl --id` once the first run's
      // history is past its retention: a second seed and one level of links.
      await startWithTemporalCli(env, queue, 'site-run-again', { seeds: [site.urlOf(0), site.urlOf(2)], maxDepth: 1 });
      const again = await env.client.workflow.getHandle<typeof crawlSession>('site-run-again').result();
      assert.equal(again.status, 'completed');
      const records = await readRecords(env.store, 'site-run-again');
      const expected = new Set([0, 2, ...site.graph.linksOf(2)]);
      assert.deepEqual(pageNumbers(records.map((record) => record.url)), [...expected].sort((a, b) => a - b), "page 2's links, at depth 1, were crawled too");
      assert.equal(site.requests.filter((request) => request.path === '/page/0').length, 1, 'the first seed was not fetched again');
    } finally {
      await site.close();
    }
  });

  it('stops at max-pages exactly and keeps within max-depth', async () => {
    const site = await startSyntheticSite({ pages: 500 });
    try {
      const limited = await runCrawlToEnd(env, queue, 'site-max-pages', { seeds: [site.urlOf(0)], maxPages: 37, perHostConcurrency: 4 });
      assert.equal(limited.records.length, 37);
      assert.equal(limited.summary.status, 'max-pages-reached');
      assert.equal(site.requests.filter((request) => request.path.startsWith('/page/')).length, 37);

      const shallow = await runCrawlToEnd(env, queue, 'site-depth-1', { seeds: [site.urlOf(0)], maxDepth: 1 });
      const expected = new Set([0, ...site.graph.linksOf(0)]);
      assert.deepEqual(pageNumbers(shallow.records.map((record) => record.url)), [...expected].sort((a, b) => a - b));
      assert.ok(shallow.records.every((record) => record.depth <= 1));
    } finally {
      await site.close();
    }
  });

  it('obeys robots.txt: disallowed pages are recorded as skipped and never requested', async () => {
    const site = await startSyntheticSite({ pages: 50, robotsTxt: 'User-agent: *\nDisallow: /page/1\n' });
    try {
      const { records } = await runCrawlToEnd(env, queue, 'site-robots', { seeds: [site.urlOf(0)] });
      const disallowed = records.filter((record) => new URL(record.url).pathname.startsWith('/page/1'));
      assert.ok(disallowed.length > 0, 'some disallowed pages were discovered');
      assert.ok(disallowed.every((record) => record.skipped === 'robots' && record.status === null));
      assert.equal(site.requests.filter((request) => request.path.startsWith('/page/1')).length, 0, 'no disallowed page was requested');
      assert.equal(site.requests.filter((request) => request.path === '/robots.txt').length, 1, 'robots.txt fetched once per crawl');
    } finally {
      await site.close();
    }
  });
});
