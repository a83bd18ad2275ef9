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
import { sleep, waitFor } from './helpers/fixtures';
import { batchOutcomes, fetchCounts, pendingBatches, reachablePaths, recordStats, seconds } from './helpers/faults';

const KILLS = 3;
const CONCURRENCY = 6;

describe('faults: worker processes SIGKILLed repeatedly', () => {
  let env: TestTemporal;
  let site: SyntheticSite;
  const workers: WorkerProcess[] = [];
  let watching = false;

  before(async () => {
    env = await startTestTemporal();
    site = await startSyntheticSite({ pages: 5_000, latencyMs: 5 });
  });
  after(async () => {
    watching = false;
    for (const worker of workers) await worker.kill('SIGKILL');
    await site?.close();
    await env?.close();
  });

  it(`${KILLS} SIGKILLs of one of three workers: every page once, refetches bounded`, async () => {
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

    const kills: { at: number; identity: string; batches: string[]; requestsAtKill: number }[] = [];
    // Recovery per kill, watched in the background: the first moment one of the killed
    // worker's batches is started again by another worker (attempt > 1) or has completed.
    const restartedAt = new Map<number, number>();
    watching = true;
    const watcher = (async () => {
      const watchDeadline = Date.now() + 150_000;
      while (watching && Date.now() < watchDeadline) {
        const pending = await pendingBatches(handle).catch(() => undefined);
        if (pending) {
          kills.forEach((kill, index) => {
            if (restartedAt.has(index) || kill.batches.length === 0) return;
            const moved = pending.some((batch) => kill.batches.includes(batch.activityId) && !batch.identity.startsWith(kill.identity) && batch.attempt > 1);
            const gone = kill.batches.some((id) => !pending.some((batch) => batch.activityId === id));
            if (moved || gone) restartedAt.set(index, Date.now());
          });
        }
        await sleep(250);
      }
    })();
    for (let k = 0; k < KILLS; k += 1) {
      await waitFor(() => site.requests.length >= 300 + k * 700, 60_000, `${300 + k * 700} requests`);
      // The victim: the live worker running the most batches right now (there is always one).
      let victim: WorkerProcess | undefined;
      for (let tries = 0; tries < 40 && !victim; tries += 1) {
        const running = (await pendingBatches(handle)).filter((batch) => batch.state.endsWith('STARTED'));
        const load = live.map((worker) => running.filter((batch) => batch.identity.startsWith(`${worker.child.pid}@`)).length);
        const best = load.indexOf(Math.max(...load));
        if (load[best] > 0) victim = live[best];
        else await sleep(50);
      }
      assert.ok(victim, 'some worker was running a batch');
      await victim.kill('SIGKILL');
      const at = Date.now();
      const requestsAtKill = site.requests.length;
      // After the kill the server still shows the dead worker's batches as started by it until their heartbeat times out.
      const identity = `${victim.child.pid}@`;
      const batches = (await pendingBatches(handle)).filter((batch) => batch.identity.startsWith(identity) && batch.state.endsWith('STARTED')).map((b) => b.activityId);
      kills.push({ at, identity, batches, requestsAtKill });
      const replacement = spawn();
      live = [...live.filter((worker) => worker !== victim), replacement];
      await replacement.ready;
    }

    const summary = await handle.result();
    watching = false;
    await watcher;
    const totalSeconds = (Date.now() - started) / 1000;
    assert.equal(summary.status, 'completed');
    const expected = reachablePaths(site);
    const records = await readRecords(env.dataDir, 'faults-kill');
    const stats = recordStats(records, expected);
    assert.equal(stats.duplicated, 0, 'no page recorded twice');
    assert.equal(stats.lost, 0, 'every reachable page recorded');
    assert.equal(stats.extra, 0, 'nothing unreachable recorded');
    assert.ok(records.every((record) => record.status === 200), 'every record is a 200');

    const counts = fetchCounts(site);
    const refetched = [...counts.values()].filter((n) => n > 1).length;
    const maxFetches = Math.max(...counts.values());
    const killedBatches = kills.reduce((sum, kill) => sum + kill.batches.length, 0);
    assert.ok(maxFetches <= 2, `no page fetched more than twice (max ${maxFetches})`);
    assert.ok(refetched <= killedBatches, `at most one refetch per killed batch (${refetched} refetched, ${killedBatches} batches killed)`);
    assert.ok(refetched <= KILLS * CONCURRENCY, `refetches <= kills x window (${refetched})`);

    const { outcomes, eventTypes } = await batchOutcomes(handle);
    assert.ok(!eventTypes.some((type) => /ACTIVITY_TASK_(FAILED|TIMED_OUT)/.test(type)), 'no batch failed for good');
    kills.forEach((kill, index) => {
      const done = outcomes.filter((outcome) => kill.batches.includes(outcome.activityId) && outcome.closedAt !== undefined).map((outcome) => outcome.closedAt!);
      const firstDone = done.length ? Math.min(...done) - kill.at : NaN;
      const restart = restartedAt.has(index) ? restartedAt.get(index)! - kill.at : NaN;
      const nextRequest = site.requests.slice(kill.requestsAtKill).find((request) => request.startedAt >= kill.at);
      console.log(
        `worker-kill #${index + 1}: ${kill.batches.length} batches on the killed worker; retried elsewhere after ${seconds(restart)} s; first of them completed ${seconds(firstDone)} s after kill; next site request ${nextRequest ? nextRequest.startedAt - kill.at : NaN} ms after kill`,
      );
      if (kill.batches.length > 0) {
        assert.ok(done.length === kill.batches.length, `every batch of kill #${index + 1} completed`);
        assert.ok(firstDone < 45_000, `kill #${index + 1} recovered within 45 s (${firstDone} ms)`);
      }
    });
    const retried = outcomes.filter((outcome) => outcome.attempt > 1).length;
    console.log(
      `worker-kill: ${KILLS} SIGKILLs, 3 workers; pages expected ${expected.size}, recorded ${stats.recorded}, lost ${stats.lost}, duplicated ${stats.duplicated}; site requests ${counts.size} distinct pages, ${refetched} refetched (max ${maxFetches}x), ${killedBatches} batches killed, ${retried} batches retried; total ${totalSeconds.toFixed(1)} s`,
    );
  });
});
