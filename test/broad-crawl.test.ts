/**
 * A broad crawl through a real Temporal dev server: many small loopback hosts, a seed on
 * each, far more hosts than a batch report names (it names the 48 biggest). Batches take the
 * rest as ready work the store hands out, and the store's claims keep every host's
 * concurrency, with two workers claiming side by side: every page is fetched exactly once, no
 * host ever has more requests in flight than `perHostConcurrency`, and a page budget is spent
 * exactly.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startCrawl } from '../src/client/crawl-client';
import { startLinkedHosts, type LinkedHosts } from '../src/sites/linked-hosts';
import type { BatchOrder } from '../src/scheduling/crawl-plan';
import type { CrawlInput } from '../src/shared/crawl-config';
import type { BatchReport } from '../src/shared/crawl-types';
import { REPORT_HOSTS } from '../src/activities/crawl-batch';
import { LONG_WAIT_MS } from '../src/activities/url-processor';
import { gapsBetween, page, startRecordingSite, type Handler } from './helpers/recording-site';
import { readRecords, startTestTemporal, uniqueQueue, type TestTemporal } from './helpers/temporal';
import { completedResults, decodePayload, historiesOf, scheduledInputs } from './helpers/histories';

const HOSTS = 200;
/** How much closer two requests may reach a host than they left the crawler: the site's thread notes them when next scheduled (politeness.test.ts). */
const ARRIVAL_JITTER_MS = 25;
const PAGES_PER_HOST = 2;

describe(`a broad crawl: ${HOSTS} hosts, a seed on each, two workers`, () => {
  let env: TestTemporal;
  let site: LinkedHosts;
  const queue = uniqueQueue('broad');

  before(async () => {
    env = await startTestTemporal();
    await env.startWorker(queue);
    await env.startWorker(queue);
    site = await startLinkedHosts(HOSTS, PAGES_PER_HOST);
  });
  after(async () => {
    await site?.close();
    await env?.close();
  });

  const crawl = (maxPages?: number): CrawlInput => ({
    seeds: site.origins.map((origin) => `${origin}/`),
    concurrency: 8,
    perHostConcurrency: 1,
    batchSize: 20,
    respectRobots: false,
    allowPrivateNetwork: true,
    maxRetries: 0,
    ...(maxPages === undefined ? {} : { maxPages }),
  });

  it('batches fill from the store; every page once, one request in flight per host', async () => {
    assert.ok(HOSTS > REPORT_HOSTS * 2, 'more hosts than a report names');
    const handle = await startCrawl(env.client, 'broad-all', crawl(), queue);
    const summary = await handle.result();
    const records = await readRecords(env.store, 'broad-all');
    assert.deepEqual(records.map((record) => record.url).sort(), [...site.pages].sort(), 'every page recorded once');
    assert.deepEqual([...site.requests].filter(([, n]) => n !== 1), [], 'every page fetched once');
    assert.equal(summary.totals.fetched, site.pages.length);
    assert.deepEqual([...site.maxInFlight].filter(([, n]) => n > 1), [], 'no host had two requests in flight');

    const [{ history }] = await historiesOf(env.client, 'broad-all');
    const orders = scheduledInputs<BatchOrder>(history, 'fetchBatch');
    const reports = completedResults<BatchReport>(history, 'fetchBatch');
    const claimedBy = new Map(reports.map((report) => [report.batchId, report.kind === 'done' ? report.claimed : 0]));
    const onlyFilling = orders.filter((order) => order.hosts.length === 0 && (order.fill ?? 0) > 0);
    assert.ok(onlyFilling.length > 0, 'batches that only fill ran');
    assert.ok(onlyFilling.some((order) => (claimedBy.get(order.batchId) ?? 0) > 0), 'and the store handed them work');
    const claimed = reports.reduce((sum, report) => sum + (report.kind === 'done' ? report.claimed : 0), 0);
    assert.equal(claimed, site.pages.length, 'the batches claimed each page once between them');
    assert.ok(orders.every((order) => order.hosts.reduce((sum, share) => sum + share.limit, order.fill ?? 0) <= 20), 'no batch ordered more than the batch size');
  });

  it('a host that defers mid-claim gives back its own URLs, and its batch goes on with the keys claimed with it: each page fetched once, the deferred page twice', async () => {
    // 60 hosts seeded at once: batches claim several ready keys at a time. Every sixth host
    // answers its first /p0 with a Retry-After long enough to defer it: its batch gives back
    // the rest of that key and crawls its other keys.
    const limited = (host: number) => host % 6 === 0;
    const deferring = await startLinkedHosts(60, 2, {
      firstAnswer: (host, path) => (limited(host) && path === '/p0' ? { status: 429, headers: { 'retry-after': '11' } } : undefined),
    });
    try {
      const handle = await startCrawl(env.client, 'broad-deferring', { ...crawl(), seeds: deferring.origins.map((origin) => `${origin}/`), maxRetries: 2 }, queue);
      const summary = await handle.result();
      const records = await readRecords(env.store, 'broad-deferring');
      assert.deepEqual(records.map((record) => record.url).sort(), [...deferring.pages].sort(), 'every page recorded once');
      assert.deepEqual(records.filter((record) => record.status !== 200).map((record) => record.url), [], 'every page recorded with its 200');
      const limitedPages = deferring.origins.filter((_, host) => limited(host)).map((origin) => `${origin}/p0`);
      const askedTwice = [...deferring.requests].filter(([, n]) => n === 2).map(([url]) => url);
      assert.deepEqual(askedTwice.sort(), [...limitedPages].sort(), 'each deferred page asked twice: the 429, then its page');
      assert.deepEqual([...deferring.requests].filter(([, n]) => n > 2), [], 'no page asked more often');
      assert.equal(deferring.requests.size, deferring.pages.length, 'every page was asked for');
      assert.equal(summary.totals.fetched, deferring.pages.length);
      const [{ history }] = await historiesOf(env.client, 'broad-deferring');
      const deferredHosts = completedResults<BatchReport>(history, 'fetchBatch').flatMap((report) => (report.kind === 'done' ? report.deferred.map(({ host }) => host) : []));
      assert.deepEqual([...new Set(deferredHosts)].sort(), limitedPages.map((page) => new URL(page).host).sort(), 'each limited host deferred its batch');
    } finally {
      await deferring.close();
    }
  });

  it("ready claims take hosts not crawled yet before the backlogs of hosts being crawled, so every host's links are known early", async () => {
    // 600 hosts of a root and two pages, a seed on each, batches of 100 four at a time: the
    // first batches claim 400 roots, whose pages queue two links each, bigger backlogs than
    // the 200 roots left. Taken biggest backlog first, those roots waited for the others to
    // drain: the last was asked for as page 1,690-1,789 of 1,800, in the crawl's last moments.
    const linked = await startLinkedHosts(600, 2);
    try {
      const input = { seeds: linked.origins.map((origin) => `${origin}/`), concurrency: 4, perHostConcurrency: 1, batchSize: 100, respectRobots: false, allowPrivateNetwork: true };
      const summary = await (await startCrawl(env.client, 'broad-fresh-first', input, queue)).result();
      assert.equal(summary.totals.fetched, linked.pages.length);
      assert.deepEqual([...linked.requests].filter(([, n]) => n !== 1), [], 'every page fetched once');
      const asked = [...linked.askedAt].sort((a, b) => a[1] - b[1]).map(([url]) => new URL(url).pathname);
      const lastRoot = asked.lastIndexOf('/');
      assert.equal(asked.filter((path) => path === '/').length, linked.origins.length, 'every root asked for');
      assert.ok(lastRoot < (asked.length * 2) / 3, `every root asked for in the first two thirds of the crawl (the last as page ${lastRoot + 1} of ${asked.length})`);
    } finally {
      await linked.close();
    }
  });

  it("batches whose hosts all wait out a delay crawl other hosts' ready URLs meanwhile, in the slots the slow hosts hold", async () => {
    // 60 hosts of a root and two pages, four batches at a time: six slow hosts (1 s delay) need
    // 2 s each, the others (100 ms) 0.2 s. Batches that sat out their slow hosts' gaps in their
    // slots left the fast hosts' URLs queued until the slow hosts were done (at 2.2 s, after the
    // slow hosts' last pages); topping themselves up, they crawl them during those gaps.
    const linked = await startLinkedHosts(60, 2);
    const slow = linked.origins.filter((_, host) => host % 10 === 0);
    const fast = linked.origins.filter((origin) => !slow.includes(origin));
    try {
      const hosts = Object.fromEntries(slow.map((origin) => [new URL(origin).host, { delayMs: 1_000 }]));
      const input = { seeds: linked.origins.map((origin) => `${origin}/`), concurrency: 4, perHostConcurrency: 1, delayMs: 100, hosts, respectRobots: false, allowPrivateNetwork: true };
      const summary = await (await startCrawl(env.client, 'broad-top-up', input, queue)).result();
      assert.equal(summary.totals.fetched, linked.pages.length);
      assert.deepEqual([...linked.requests].filter(([, n]) => n !== 1), [], 'every page fetched once');
      assert.equal(linked.requests.size, linked.pages.length, 'every page was asked for');
      const askedOf = (origin: string) => linked.pages.filter((url) => url.startsWith(`${origin}/`)).map((url) => linked.askedAt.get(url)!).sort((a, b) => a - b);
      const start = Math.min(...linked.askedAt.values());
      const fastDone = Math.max(...fast.map((origin) => askedOf(origin)[2]));
      const slowLast = slow.map((origin) => askedOf(origin)[2]);
      assert.ok(fastDone < Math.min(...slowLast), `the fast hosts all done (at ${fastDone - start} ms) before any slow host's last page (at ${slowLast.map((at) => at - start)} ms)`);
      for (const origin of slow) assert.ok(Math.min(...gapsBetween(askedOf(origin))) >= 1_000 - ARRIVAL_JITTER_MS, `a slow host's requests 1 s apart (gaps ${gapsBetween(askedOf(origin))} ms)`);
      for (const origin of fast) assert.ok(Math.min(...gapsBetween(askedOf(origin))) >= 100 - ARRIVAL_JITTER_MS, `a fast host's requests 100 ms apart (gaps ${gapsBetween(askedOf(origin))} ms)`);
    } finally {
      await linked.close();
    }
  });

  it('a waiting batch that finds the only key held waits for its holder, then claims what is left', async () => {
    // Three slots and a budget of the site's five pages: the root's batch, and two batches that
    // wait for work with two URLs each. Of the root's four slow pages, one waiting batch claims
    // two and holds the key (per-host concurrency 1); the other must wait for it to let go.
    // Ending with nothing instead, its report could reach the workflow after the holder's and
    // close the store to launches for a second with URLs queued.
    const paths = ['/w/0', '/w/1', '/w/2', '/w/3'];
    const site = await startRecordingSite({ '/': (_req, res) => page(res, paths), ...Object.fromEntries(paths.map((path): [string, Handler] => [path, (_req, res) => setTimeout(() => page(res), 300)])) });
    try {
      const input = { seeds: [`${site.origin}/`], maxPages: 5, concurrency: 3, perHostConcurrency: 1, respectRobots: false, allowPrivateNetwork: true };
      const summary = await (await startCrawl(env.client, 'broad-held-key', input, queue)).result();
      assert.equal(summary.totals.fetched, 5);
      assert.deepEqual(site.pages().map(({ path }) => path).sort(), ['/', ...paths].sort(), 'every page asked once');
      const [{ history }] = await historiesOf(env.client, 'broad-held-key');
      const orders = scheduledInputs<BatchOrder>(history, 'fetchBatch');
      const claimed = completedResults<BatchReport>(history, 'fetchBatch').map((report) => (report.kind === 'done' ? report.claimed : -1));
      assert.deepEqual(orders.map((order) => order.waitsForWork === true), [false, true, true], 'the root, then two batches waiting for work');
      assert.deepEqual(claimed.sort(), [1, 2, 2], 'each waiting batch claimed two pages: none ended with nothing while the key was held');
    } finally {
      await site.close();
    }
  });

  it("a batch whose first host defers crawls its other host's share itself, not a later batch", async () => {
    // One batch at a time: the second holds the first site's six pages, the biggest share,
    // crawled first, and the other site's four. The first site's first page answers 429 with
    // Retry-After 11; giving back only that site's URLs, the batch crawls the other's four.
    const pagesOf = (paths: string[]) => Object.fromEntries(paths.map((path): [string, Handler] => [path, (_req, res) => page(res)]));
    const held = ['/s/0', '/s/1', '/s/2', '/s/3', '/s/4'];
    const deferring = await startRecordingSite({
      '/': (_req, res) => page(res, ['/r', ...held]),
      '/r': (_req, res, nth) => (nth === 1 ? res.writeHead(429, { 'retry-after': '11' }).end() : page(res)),
      ...pagesOf(held),
    });
    const paths = ['/b/0', '/b/1', '/b/2', '/b/3'];
    const other = await startRecordingSite({ '/': (_req, res) => page(res, paths), ...pagesOf(paths) });
    try {
      const input = { seeds: [`${deferring.origin}/`, `${other.origin}/`], concurrency: 1, perHostConcurrency: 1, respectRobots: false, allowPrivateNetwork: true };
      const handle = await startCrawl(env.client, 'broad-defer-one', input, queue);
      assert.equal((await handle.result()).totals.fetched, 12);
      assert.deepEqual(other.pages().map(({ path }) => path).sort(), ['/', ...paths].sort(), "each of the other site's pages once");
      const [{ history }] = await historiesOf(env.client, 'broad-defer-one');
      const orders = scheduledInputs<BatchOrder>(history, 'fetchBatch');
      const withOther = orders.filter((order) => order.hosts.some(({ host }) => host === other.host)).map((order) => order.batchId);
      const deferredBy = completedResults<BatchReport>(history, 'fetchBatch').filter((report) => report.kind === 'done' && report.deferred.some(({ host }) => host === deferring.host));
      assert.equal(deferredBy.length, 1, 'one batch deferred a.test');
      assert.deepEqual(withOther, [orders[0].batchId, deferredBy[0].batchId], 'the other site: its root in the first batch, its pages in the batch that deferred');
    } finally {
      await deferring.close();
      await other.close();
    }
  });

  it('every host held past what a batch waits out: the crawl asks the store again when the first key is claimable, not every second', async () => {
    // Each of 60 hosts answers its first /p0 with Retry-After 16, so once the front pages are
    // done every key with backlog is held, and the view names only 48 of them. A key held
    // less than a batch sits idle (LONG_WAIT_MS, 10 s) is claimable, so the holds end for the
    // store 6 s on.
    const retryAfterS = 16;
    const holding = await startLinkedHosts(60, 2, {
      firstAnswer: (_, path) => (path === '/p0' ? { status: 429, headers: { 'retry-after': String(retryAfterS) } } : undefined),
    });
    try {
      const handle = await startCrawl(env.client, 'broad-held', { ...crawl(), seeds: holding.origins.map((origin) => `${origin}/`), maxRetries: 2 }, queue);
      const summary = await handle.result();
      assert.equal(summary.totals.fetched, holding.pages.length);
      const p0 = holding.origins.map((origin) => `${origin}/p0`);
      assert.deepEqual([...holding.requests].filter(([, n]) => n === 2).map(([url]) => url).sort(), [...p0].sort(), 'each /p0 asked twice: the 429, then its page');
      assert.deepEqual([...holding.requests].filter(([, n]) => n > 2), [], 'no page asked more often');

      const [{ history }] = await historiesOf(env.client, 'broad-held');
      // A round of filling batches finds every key held, and the crawl waits for the first
      // to be claimable, ordering nothing meanwhile. Before: a round every second of the 6 s.
      const events = history.events ?? [];
      const heldWaits = events.filter((event) => event.timerStartedEventAttributes && decodePayload(event.userMetadata?.summary) === 'every key with backlog is held');
      assert.ok(heldWaits.length >= 1, 'the crawl waited for the store, until a key is claimable');
      // A batch that ends meanwhile moves the wait: the last one runs to its end.
      const last = heldWaits[heldWaits.length - 1];
      const { timerId, startToFireTimeout } = last.timerStartedEventAttributes!;
      const fired = events.findIndex((event) => event.timerFiredEventAttributes?.timerId === timerId);
      assert.ok(fired > 0, 'the wait ran to its end');
      const meanwhile = events.slice(events.indexOf(last) + 1, fired);
      assert.deepEqual(meanwhile.filter((event) => event.activityTaskScheduledEventAttributes), [], 'no batch ordered while every key was held');
      const waitedS = Number(startToFireTimeout!.seconds);
      const claimableS = retryAfterS - LONG_WAIT_MS / 1_000;
      assert.ok(waitedS >= 1 && waitedS <= claimableS, `the wait ends as the first key becomes claimable, ${claimableS} s after the holds began (${waitedS} s)`);
    } finally {
      await holding.close();
    }
  });

  it('spends a page budget exactly, with batches that fill', async () => {
    for (const key of site.requests.keys()) site.requests.delete(key);
    const handle = await startCrawl(env.client, 'broad-budget', crawl(400), queue);
    const summary = await handle.result();
    assert.equal(summary.status, 'max-pages-reached');
    assert.equal(summary.totals.processed, 400);
    assert.equal((await readRecords(env.store, 'broad-budget')).length, 400);
    assert.equal([...site.requests.values()].reduce((sum, n) => sum + n, 0), 400, 'the site served 400 pages');
    const [{ history }] = await historiesOf(env.client, 'broad-budget');
    assert.ok(scheduledInputs<BatchOrder>(history, 'fetchBatch').some((order) => (order.fill ?? 0) > 0), 'some batches filled');
  });
});
