/**
 * Fault injection: workers join and leave mid-crawl. One worker process starts the crawl, a
 * second and a third join, then the first and the second are stopped with SIGTERM. Every
 * page is recorded once and fetched once. How long page requests paused (from the site's log)
 * and the progress query's rate (sampled every 500 ms) are printed, not asserted: they are
 * performance, which a loaded machine moves, not correctness. Run with each frontier store:
 * with PostgreSQL every worker has its own data dir, so the workers share nothing but
 * Temporal and the database, as on separate machines.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { startCrawl } from '../src/client/crawl-client';
import { progressQuery } from '../src/shared/messages';
import { readRecords, startTestTemporal, STORE_KINDS, uniqueQueue, type TestTemporal } from './helpers/temporal';
import { spawnWorker, type WorkerProcess } from './helpers/processes';
import { requestedPagePaths, sleep, sortedPaths, waitFor } from './helpers/fixtures';
import { fetchCounts, pendingBatches, reachablePaths, recordStats, seconds } from './helpers/faults';

for (const store of STORE_KINDS) {
describe(`faults: workers joining and leaving mid-crawl (${store} store)`, () => {
  let env: TestTemporal;
  let site: SyntheticSite;
  const workers: WorkerProcess[] = [];
  let sampling = false;

  before(async () => {
    env = await startTestTemporal({ store });
    site = await startSyntheticSite({ pages: 2_000, latencyMs: 60 });
  });
  after(async () => {
    sampling = false;
    for (const worker of workers) await worker.kill('SIGKILL');
    await site?.close();
    await env?.close();
  });

  it('1 -> 2 -> 3 workers, then SIGTERM two of them: every page recorded once, fetched once', async () => {
    const taskQueue = uniqueQueue('faults-churn');
    const logFile = join(env.dataDir, 'workers.log');
    const spawn = (): WorkerProcess => {
      const worker = spawnWorker({ address: env.address, taskQueue, dataDir: env.workerDataDir(), storeUrl: env.store.storeUrl, logFile });
      workers.push(worker);
      return worker;
    };
    const [first] = [spawn()];
    await first.ready;
    const started = Date.now();
    const handle = await startCrawl(
      env.client,
      'faults-churn',
      { seeds: [site.urlOf(0)], concurrency: 6, perHostConcurrency: 6, batchSize: 10, maxDepth: 1_000 },
      taskQueue,
    );

    const samples: { t: number; processed: number; up: number }[] = [];
    const events: string[] = [];
    const up = (): number => workers.filter((worker) => worker.child.exitCode === null && worker.child.signalCode === null).length;
    const mark = (what: string): void => void events.push(`${seconds(Date.now() - started)}s ${what}`);
    sampling = true;
    const sampler = (async () => {
      const deadline = Date.now() + 85_000;
      while (sampling && Date.now() < deadline) {
        const progress = await handle.query(progressQuery).catch(() => undefined);
        if (progress) samples.push({ t: Date.now() - started, processed: progress.processed, up: up() });
        await sleep(500);
      }
    })();

    const processed = (): number => samples.at(-1)?.processed ?? 0;
    await waitFor(() => processed() >= 300, 60_000, '300 pages processed');
    const second = spawn();
    await second.ready;
    mark('worker 2 up');
    const third = spawn();
    await third.ready;
    mark('worker 3 up');
    // A worker has joined once it runs batches of the crawl (started since `since`); each stop comes after that.
    const runsBatches = async (worker: WorkerProcess, since = 0): Promise<boolean> =>
      (await pendingBatches(handle)).some(
        (batch) => batch.state.endsWith('STARTED') && batch.identity.startsWith(`${worker.child.pid}@`) && (batch.lastStartedAt ?? 0) >= since,
      );
    await waitFor(async () => (await runsBatches(second)) && (await runsBatches(third)), 30_000, 'workers 2 and 3 running batches');
    mark('workers 2 and 3 running batches');
    await first.kill('SIGTERM');
    const firstGoneAt = Date.now();
    mark(`worker 1 stopped (exit ${first.child.exitCode})`);
    await waitFor(async () => (await runsBatches(second, firstGoneAt)) && (await runsBatches(third, firstGoneAt)), 30_000, 'workers 2 and 3 running batches started after worker 1 left');
    mark('workers 2 and 3 running new batches');
    await second.kill('SIGTERM');
    mark(`worker 2 stopped (exit ${second.child.exitCode})`);

    const summary = await handle.result();
    sampling = false;
    await sampler;
    const total = Date.now() - started;
    assert.equal(summary.status, 'completed');
    assert.equal(first.child.exitCode, 0, 'worker 1 drained and exited cleanly');
    assert.equal(second.child.exitCode, 0, 'worker 2 drained and exited cleanly');

    const expected = reachablePaths(site);
    const records = await readRecords(env.store, 'faults-churn');
    const stats = recordStats(records, expected);
    assert.deepEqual(sortedPaths(records.map((record) => record.url)), [...expected].sort(), 'every reachable page recorded once');
    const counts = fetchCounts(site);
    assert.deepEqual(requestedPagePaths(site), [...expected].sort(), 'SIGTERM drains: every page fetched once');

    // Longest stretch without a page request (ground truth from the site), and the longest
    // gap between two answered progress queries (a slow query is not a stalled crawl). Before
    // workers set stickyQueueScheduleToStartTimeout to 2 s, ~10 s pauses were seen (a workflow
    // task waiting on a departed worker's sticky queue); since, 0.4-1.0 s.
    const pageStarts = site.requests.filter((request) => request.path.startsWith('/page/')).map((request) => request.startedAt).sort((a, b) => a - b);
    let stall = 0;
    let stallAt = 0;
    for (let i = 1; i < pageStarts.length; i += 1) {
      if (pageStarts[i] - pageStarts[i - 1] > stall) {
        stall = pageStarts[i] - pageStarts[i - 1];
        stallAt = pageStarts[i - 1] - started;
      }
    }
    let queryGap = 0;
    for (let i = 1; i < samples.length; i += 1) queryGap = Math.max(queryGap, samples[i].t - samples[i - 1].t);
    const rates = samples.slice(1).map((sample, i) => Math.round(((sample.processed - samples[i].processed) * 1000) / Math.max(1, sample.t - samples[i].t)));
    console.log(`workers-churn (${store} store): events ${events.join('; ')}`);
    console.log(`workers-churn: pages/s every ~500 ms: ${rates.join(' ')}`);
    console.log(
      `workers-churn: pages expected ${expected.size}, recorded ${stats.recorded}, lost ${stats.lost}, duplicated ${stats.duplicated}, fetched twice ${[...counts.values()].filter((n) => n > 1).length}; longest gap between page requests ${seconds(stall)} s from ${seconds(stallAt)}s, longest gap between progress-query answers ${seconds(queryGap)} s; total ${seconds(total)} s`,
    );
  });
});
}
