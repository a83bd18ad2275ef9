/**
 * Cancellation, deadlines, pause/resume and slow responses, with a real server and worker:
 * cancelling aborts in-flight HTTP requests; a deadline ends the crawl with complete partial
 * results; a response slower than the heartbeat timeout does not fail its batch.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { startSyntheticSite, type RouteHandler, type SyntheticSite } from '../src/sites/synthetic-site';
import { startCrawl, type CrawlHandle } from '../src/client/crawl-client';
import { pauseSignal, progressQuery, resumeSignal, stopUpdate } from '../src/shared/messages';
import { historyEventTypes, readCrawlEnd, readRecords, runCrawlToEnd, startTestTemporal, uniqueQueue, type TestTemporal } from './helpers/temporal';
import { html, linkedRoutes, reachablePagePaths, requestedPagePaths, sleep, sortedPaths, waitFor } from './helpers/fixtures';

describe('cancellation and time', () => {
  let env: TestTemporal;
  const queue = uniqueQueue('cancel');

  before(async () => {
    env = await startTestTemporal();
    await env.startWorker(queue);
  });
  after(async () => env?.close());

  it('cancelling a crawl aborts its in-flight requests and starts no new ones', async () => {
    const stall: RouteHandler = () => undefined; // never answers
    const site = await startSyntheticSite({ pages: 0, routes: linkedRoutes('/stall/', 20, stall) });
    try {
      const handle = await startCrawl(env.client, 'cancel-test', { seeds: [`${site.origin}/`], concurrency: 4, perHostConcurrency: 4, timeoutMs: 120_000, batchSize: 5 }, queue);
      await waitFor(() => site.inFlight() === 4, 30_000, 'four stalled requests');
      const cancelRequestedAt = Date.now();
      await handle.cancel();
      await assert.rejects(handle.result(), (err: unknown) => err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure);
      const cancelDoneAt = Date.now();
      // A quiet spell: a request started after the cancel would show up in it.
      await sleep(1_500);

      const stalled = site.requests.filter((request) => request.path.startsWith('/stall/'));
      assert.equal(stalled.length, 4, 'no request started after the cancel');
      assert.ok(stalled.every((request) => request.aborted && request.endedAt !== null), 'every stalled request was aborted');
      const closedAfter = Math.max(...stalled.map((request) => (request.endedAt ?? Infinity) - cancelRequestedAt));
      assert.ok(closedAfter <= cancelDoneAt - cancelRequestedAt + 1_000, 'sockets closed no later than 1 s after the cancel completed');
      // Heartbeats go out every 5 s at most; the abort comes through the store, whose stop order batches read every second.
      assert.ok(closedAfter < 2_000, `sockets closed within 2 s of the cancel request (${closedAfter} ms), not at a heartbeat up to 5 s later`);
      assert.equal(site.inFlight(), 0);
      const records = await readRecords(env.dataDir, 'cancel-test');
      assert.deepEqual(records.map((record) => new URL(record.url).pathname), ['/'], 'stalled URLs are not recorded as done');
      assert.deepEqual(await readCrawlEnd(env.store, 'cancel-test'), { status: 'cancelled', failure: null }, 'the crawl recorded how it ended');
      console.log(`cancel: ${stalled.length} in-flight requests closed ${closedAfter} ms after the cancel request; cancel completed in ${cancelDoneAt - cancelRequestedAt} ms`);
    } finally {
      await site.close();
    }
  });

  it('a deadline ends the crawl with complete partial results', async () => {
    const site = await startSyntheticSite({ pages: 2_000, latencyMs: 100 });
    try {
      const { summary, records } = await runCrawlToEnd(env, queue, 'deadline-test', { seeds: [site.urlOf(0)], deadline: '3s', perHostConcurrency: 4 });
      assert.equal(summary.status, 'deadline-exceeded');
      assert.deepEqual(await readCrawlEnd(env.store, 'deadline-test'), { status: 'deadline-exceeded', failure: null });
      // How many pages 3 s allow is throughput (printed, not asserted); what they are is not:
      // reachable pages, each once, each complete, and the rest still queued.
      const paths = sortedPaths(records.map((record) => record.url));
      const reachable = new Set(reachablePagePaths(site));
      console.log(`deadline: ${records.length} of ${reachable.size} reachable pages recorded in 3 s`);
      assert.ok(records.length > 0, 'the crawl got going before its deadline');
      assert.deepEqual(paths, [...new Set(paths)], 'no page recorded twice');
      assert.deepEqual(paths.filter((path) => !reachable.has(path)), [], 'only reachable pages');
      assert.ok(records.every((record) => record.status === 200 && record.title !== null), 'every recorded page is complete');
      assert.equal(summary.totals.processed, records.length);
      assert.ok(summary.totals.queued > 0, 'the rest is still queued');
      assert.ok(summary.finishedAt - summary.startedAt < 6_000, 'ended promptly after the deadline');
      // The crawl's end does not wait for the site to see its sockets close.
      await waitFor(() => site.inFlight() === 0, 5_000, 'nothing left in flight');
    } finally {
      await site.close();
    }
  });

  it('a response slower than the heartbeat timeout does not fail its batch', async () => {
    const slow: RouteHandler = (_req, res) => void setTimeout(() => html(res, 'finally'), 15_000);
    const site = await startSyntheticSite({ pages: 0, routes: linkedRoutes('/slow/', 1, slow) });
    try {
      const { records, handle } = await runCrawlToEnd(env, queue, 'slow-test', { seeds: [`${site.origin}/`], timeoutMs: 60_000 });
      const slowRecord = records.find((record) => record.url.endsWith('/slow/0'));
      assert.equal(slowRecord?.status, 200);
      assert.equal(slowRecord?.error, null);
      const events = await historyEventTypes(handle);
      assert.ok(events.includes('EVENT_TYPE_ACTIVITY_TASK_COMPLETED'), 'event names are readable');
      assert.ok(!events.some((type) => /TIMED_OUT|FAILED/.test(type)), `no timed-out or failed activity (${events.filter((t) => /TIMED_OUT|FAILED/.test(t))})`);
      const history = await handle.fetchHistory();
      const attempts = (history.events ?? []).flatMap((event) => event.activityTaskStartedEventAttributes?.attempt ?? []);
      assert.ok(attempts.every((attempt) => attempt === 1), 'every batch ran once');
    } finally {
      await site.close();
    }
  });

  /**
   * A crawl of two batches of 200 URLs on a site answering in 50 ms: each batch would run on
   * for about 10 s. Paused or stopped, each stops after its current page once its ticker reads
   * the store's stop order (every second).
   */
  async function withTwoLongBatches(crawlId: string, test: (site: SyntheticSite, handle: CrawlHandle) => Promise<void>): Promise<void> {
    const site = await startSyntheticSite({ pages: 300, latencyMs: 50 });
    try {
      const handle = await startCrawl(env.client, crawlId, { seeds: [site.urlOf(0)], batchSize: 200, concurrency: 2, perHostConcurrency: 2 }, queue);
      await waitFor(() => site.requests.length >= 20, 30_000, '20 requests');
      await test(site, handle);
    } finally {
      await site.close();
    }
  }
  /** The bound on a batch's stop: a tick of its ticker, the page it is on, and a loaded machine's slack. */
  const STOPS_WITHIN_MS = 2_500;
  /** Checks that no request of `site` started later than STOPS_WITHIN_MS after `at`, when the crawl was told to `what`. */
  function assertNoRequestLaterThanBound(site: SyntheticSite, at: number, what: string): void {
    const lastStart = Math.max(...site.requests.map((request) => request.startedAt));
    assert.ok(lastStart - at < STOPS_WITHIN_MS, `no request started later than ${STOPS_WITHIN_MS} ms after the ${what}: the last ${lastStart - at} ms after it`);
  }

  it('pause stops the running batches after their current page, within a tick; resume finishes the crawl, every page once', () =>
    withTwoLongBatches('pause-test', async (site, handle) => {
      const pausedAt = Date.now();
      await handle.signal(pauseSignal);
      await waitFor(async () => (await handle.query(progressQuery)).batchesInFlight === 0, 30_000, 'running batches to stop');
      assertNoRequestLaterThanBound(site, pausedAt, 'pause');
      const whilePaused = site.requests.length;
      await sleep(1_500);
      assert.equal(site.requests.length, whilePaused, 'no request while paused');
      const paused = await handle.query(progressQuery);
      assert.deepEqual([paused.status, paused.processed], ['paused', requestedPagePaths(site).length], 'progress counts every page fetched before the pause');
      await handle.signal(resumeSignal);
      const summary = await handle.result();
      assert.equal(summary.status, 'completed');
      assert.deepEqual(requestedPagePaths(site), reachablePagePaths(site), 'every reachable page requested once');
      assert.deepEqual(sortedPaths((await readRecords(env.dataDir, 'pause-test')).map((record) => record.url)), reachablePagePaths(site), 'every reachable page recorded once');
    }));

  it('stop ends the crawl after the running batches\' current pages, within a tick: what was fetched is recorded once, the rest stays queued', () =>
    withTwoLongBatches('stop-test', async (site, handle) => {
      const stoppedAt = Date.now();
      await handle.executeUpdate(stopUpdate);
      const summary = await handle.result();
      const endedAfter = Date.now() - stoppedAt;
      assert.equal(summary.status, 'stopped');
      assert.ok(endedAfter < STOPS_WITHIN_MS + 2_000, `the crawl ended ${endedAfter} ms after the stop, not at the end of its batches`);
      assertNoRequestLaterThanBound(site, stoppedAt, 'stop');
      const fetched = requestedPagePaths(site);
      assert.deepEqual(fetched, [...new Set(fetched)], 'no page requested twice');
      assert.deepEqual(sortedPaths((await readRecords(env.dataDir, 'stop-test')).map((record) => record.url)), fetched, 'every page requested is recorded, once');
      assert.equal(summary.totals.processed, fetched.length);
      assert.ok(summary.totals.queued > 0, 'the rest is still queued');
    }));
});
