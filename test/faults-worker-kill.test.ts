/**
 * Fault injection: worker processes SIGKILLed several times during one crawl, each replaced
 * by a fresh process. Every reachable page is recorded once, no page is fetched more than
 * twice, and refetches are bounded by the batches that were running on the killed workers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { startCrawl } from '../src/client/crawl-client';
import { readRecords, startTestTemporal, uniqueQueue, type TestTemporal } from './helpers/temporal';
import { spawnWorker, type WorkerProcess } from './helpers/processes';
import { sleep, sortedPaths, waitFor } from './helpers/fixtures';
import { batchOutcomes, fetchCounts, pendingBatches, reachablePaths, recordStats, seconds } from './helpers/faults';
import type { CrawlHandle } from '../src/client/crawl-client';
import { ACTIVITY_HEARTBEAT_TIMEOUT_MS, BATCH_RETRY_INITIAL_INTERVAL_MS } from '../src/shared/activity-timing';

const KILLS = 2;
/** Kills tried for each one that must catch batches in flight. */
const MAX_KILL_ATTEMPTS = 4;
const CONCURRENCY = 6;
/** How often the recovery watcher asks the server for the pending batches. */
const WATCH_INTERVAL_MS = 250;
/**
 * The server's own lateness: its timer queue fires a heartbeat timeout and dispatches the
 * retry a little after the due time, more so on a loaded 2-core machine.
 */
const SERVER_TIMER_SLACK_MS = 2_000;

interface Kill {
  at: number;
  identity: string;
  /** Batches the server still showed as started by the killed worker right after the kill. */
  batches: string[];
  requestsAtKill: number;
  /** How long the replacement worker took to be ready. */
  replacementStartMs: number;
}

/**
 * The latest a killed worker's batch may be running again elsewhere: its heartbeat times
 * out, the first retry waits its interval, and the retry may have to wait for the
 * replacement worker; plus the watcher's and the server's own delays.
 */
function recoveryBoundMs(kill: Kill): number {
  return ACTIVITY_HEARTBEAT_TIMEOUT_MS + BATCH_RETRY_INITIAL_INTERVAL_MS + kill.replacementStartMs + WATCH_INTERVAL_MS + SERVER_TIMER_SLACK_MS;
}

/**
 * The live worker running the most batches right now. With 6 batches on 3 workers there is
 * one, except while the crawl's next workflow task waits on a worker that was just killed (its
 * sticky queue, 5 s, or the task timeout, 4 s): the batches that end meanwhile get no successor.
 * So it waits longer than those.
 */
async function busiestWorker(handle: CrawlHandle, live: WorkerProcess[]): Promise<WorkerProcess> {
  for (let tries = 0; tries < 200; tries += 1) {
    const running = (await pendingBatches(handle)).filter((batch) => batch.state.endsWith('STARTED'));
    const load = live.map((worker) => running.filter((batch) => batch.identity.startsWith(`${worker.child.pid}@`)).length);
    const best = load.indexOf(Math.max(...load));
    if (load[best] > 0) return live[best];
    await sleep(50);
  }
  assert.fail('no worker was running a batch');
}

/**
 * Records, per kill, the first moment one of the killed worker's batches is started again by
 * another worker (attempt > 1) or has completed. Stops when `stop` is called.
 */
function watchRecoveries(handle: CrawlHandle, kills: Kill[]): { restartedAt: Map<number, number>; stop: () => Promise<void> } {
  const restartedAt = new Map<number, number>();
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const pending = await pendingBatches(handle).catch(() => undefined);
      kills.forEach((kill, index) => {
        if (!pending || restartedAt.has(index)) return;
        const moved = pending.some((batch) => kill.batches.includes(batch.activityId) && !batch.identity.startsWith(kill.identity) && batch.attempt > 1);
        const gone = kill.batches.some((id) => !pending.some((batch) => batch.activityId === id));
        if (moved || gone) restartedAt.set(index, Date.now());
      });
      await sleep(WATCH_INTERVAL_MS);
    }
  })();
  return { restartedAt, stop: async () => { watching = false; await watcher; } };
}

describe('faults: worker processes SIGKILLed repeatedly', () => {
  let env: TestTemporal;
  let site: SyntheticSite;
  const workers: WorkerProcess[] = [];

  before(async () => {
    env = await startTestTemporal();
    site = await startSyntheticSite({ pages: 5_000, latencyMs: 5 });
  });
  after(async () => {
    for (const worker of workers) await worker.kill('SIGKILL');
    await site?.close();
    await env?.close();
  });

  it(`${KILLS} SIGKILLs of one of three workers: every page once, refetches bounded, recovery within the heartbeat timeout`, async () => {
    const started = Date.now();
    const taskQueue = uniqueQueue('faults-kill');
    const logFile = join(env.dataDir, 'workers.log');
    const spawn = (): WorkerProcess => {
      const worker = spawnWorker({ address: env.address, taskQueue, dataDir: env.dataDir, logFile });
      workers.push(worker);
      return worker;
    };
    let live = [spawn(), spawn(), spawn()];
    await Promise.all(live.map((worker) => worker.ready));
    const handle = await startCrawl(
      env.client,
      'faults-kill',
      { seeds: [site.urlOf(0)], concurrency: CONCURRENCY, perHostConcurrency: CONCURRENCY, batchSize: 25, maxDepth: 1_000 },
      taskQueue,
    );

    const kills: Kill[] = [];
    const recoveries = watchRecoveries(handle, kills);
    try {
      for (let k = 0; k < KILLS; k += 1) {
        await waitFor(() => site.requests.length >= 300 + k * 700, 60_000, `${300 + k * 700} requests`);
        // A victim's batches can all end between choosing it and the kill (short batches early in a
        // crawl): such a kill proves nothing, so it is replaced and another worker is killed.
        let kill: Kill | undefined;
        for (let attempt = 1; kill === undefined; attempt += 1) {
          assert.ok(attempt <= MAX_KILL_ATTEMPTS, `kill #${k + 1} hit a worker with batches in flight within ${MAX_KILL_ATTEMPTS} tries`);
          const victim = await busiestWorker(handle, live);
          await victim.kill('SIGKILL');
          const at = Date.now();
          const requestsAtKill = site.requests.length;
          // The server shows the dead worker's batches as started by it until their heartbeat times out.
          const identity = `${victim.child.pid}@`;
          const batches = (await pendingBatches(handle)).filter((batch) => batch.identity.startsWith(identity) && batch.state.endsWith('STARTED')).map((b) => b.activityId);
          if (batches.length > 0) {
            kill = { at, identity, batches, requestsAtKill, replacementStartMs: 0 };
            kills.push(kill);
          }
          const replacement = spawn();
          live = [...live.filter((worker) => worker !== victim), replacement];
          await replacement.ready;
          if (kill) kill.replacementStartMs = Date.now() - at;
        }
      }
      const summary = await handle.result();
      assert.equal(summary.status, 'completed');
    } finally {
      await recoveries.stop();
    }
    const totalSeconds = (Date.now() - started) / 1000;
    const expected = reachablePaths(site);
    const records = await readRecords(env.dataDir, 'faults-kill');
    const stats = recordStats(records, expected);
    assert.deepEqual(sortedPaths(records.map((record) => record.url)), [...expected].sort(), 'the records are exactly the reachable pages, each once');
    assert.ok(records.every((record) => record.status === 200), 'every record is a 200');

    const counts = fetchCounts(site);
    const refetched = [...counts.values()].filter((n) => n > 1).length;
    const maxFetches = Math.max(...counts.values());
    const killedBatches = kills.reduce((sum, kill) => sum + kill.batches.length, 0);
    assert.ok(maxFetches <= 2, `no page fetched more than twice (max ${maxFetches})`);
    assert.ok(refetched <= killedBatches, `at most one refetch per killed batch (${refetched} refetched, ${killedBatches} batches killed)`);

    const { outcomes, eventTypes } = await batchOutcomes(handle);
    assert.ok(!eventTypes.some((type) => /ACTIVITY_TASK_(FAILED|TIMED_OUT)/.test(type)), 'no batch failed for good');
    kills.forEach((kill, index) => {
      const done = outcomes.filter((outcome) => kill.batches.includes(outcome.activityId) && outcome.closedAt !== undefined).map((outcome) => outcome.closedAt!);
      // A retry that starts and ends between two polls, as the crawl's last batch, is seen by
      // the watcher only if it polls again before the crawl ends: its completion in the history
      // is the same evidence, timed by the server.
      const restartMs = Math.min(recoveries.restartedAt.get(index) ?? Infinity, ...done) - kill.at;
      const nextRequest = site.requests.slice(kill.requestsAtKill).find((request) => request.startedAt >= kill.at);
      console.log(
        `worker-kill #${index + 1}: ${kill.batches.length} batches on the killed worker; retried elsewhere after ${seconds(restartMs)} s (bound ${seconds(recoveryBoundMs(kill))} s, replacement ready after ${seconds(kill.replacementStartMs)} s); first of them completed ${seconds(Math.min(...done) - kill.at)} s after kill; next site request ${nextRequest ? nextRequest.startedAt - kill.at : NaN} ms after kill`,
      );
      assert.equal(done.length, kill.batches.length, `every batch of kill #${index + 1} completed`);
      assert.ok(restartMs <= recoveryBoundMs(kill), `kill #${index + 1}: its batches ran again within ${recoveryBoundMs(kill)} ms (after ${restartMs} ms)`);
    });
    const retried = outcomes.filter((outcome) => outcome.attempt > 1).length;
    console.log(
      `worker-kill: ${KILLS} SIGKILLs, 3 workers; pages expected ${expected.size}, recorded ${stats.recorded}, lost ${stats.lost}, duplicated ${stats.duplicated}; site requests ${counts.size} distinct pages, ${refetched} refetched (max ${maxFetches}x), ${killedBatches} batches killed, ${retried} batches retried; total ${totalSeconds.toFixed(1)} s`,
    );
  });
});
