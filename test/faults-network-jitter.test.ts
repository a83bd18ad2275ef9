/**
 * Fault injection: network jitter. Responses are delayed by seeded random spikes of 0-5 s,
 * and a few by 12 s (longer than the 10 s heartbeat timeout). No batch activity may fail,
 * time out or be retried, every page is recorded once, and heartbeats keep flowing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request } from 'undici';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import type { WorkerHost } from '../src/workers/worker-host';
import { startCrawl } from '../src/client/crawl-client';
import { readRecords, startMeteredWorkerHost, uniqueQueue, type TestTemporal } from './helpers/temporal';
import { html, linkedRoutes, requestedPagePaths, sleep, sortedPaths } from './helpers/fixtures';
import { batchOutcomes, pendingBatches, recordStats, seededRandom, seconds } from './helpers/faults';
import { ACTIVITY_HEARTBEAT_TIMEOUT_MS } from '../src/shared/activity-timing';

const PAGES = 60;
const LONG_SPIKE_MS = 12_000;

/** Deterministic delay per page: mostly fast, ~30 % spikes of 0-5 s, three of 12 s. */
function delays(seed: number): number[] {
  const random = seededRandom(seed);
  const result = Array.from({ length: PAGES }, () => (random() < 0.3 ? Math.floor(random() * 5_000) : Math.floor(random() * 50)));
  for (const page of [7, 23, 41]) result[page] = LONG_SPIKE_MS;
  return result;
}

describe('faults: network jitter with spikes longer than the heartbeat timeout', () => {
  let env: TestTemporal;
  let host: WorkerHost;
  let site: SyntheticSite;
  let polling = false;
  const taskQueue = uniqueQueue('faults-jitter');
  const delayOf = delays(42);
  const timers = new Set<NodeJS.Timeout>();

  before(async () => {
    ({ env, host } = await startMeteredWorkerHost('faults-jitter', taskQueue));
    const jittery = (req: IncomingMessage, res: ServerResponse): void => {
      const index = Number(/(\d+)$/.exec(req.url ?? '')?.[1] ?? 0);
      const timer = setTimeout(() => {
        timers.delete(timer);
        html(res, `page ${index}`);
      }, delayOf[index] ?? 0);
      timers.add(timer);
    };
    site = await startSyntheticSite({ pages: 0, routes: linkedRoutes('/j/', PAGES, jittery) });
  });
  after(async () => {
    polling = false;
    for (const timer of timers) clearTimeout(timer);
    await site?.close();
    await host?.stop();
    await env?.close();
  });

  it('no batch fails, times out or retries; every page recorded once; heartbeats flow', async () => {
    const started = Date.now();
    const handle = await startCrawl(
      env.client,
      'faults-jitter',
      { seeds: [`${site.origin}/`], concurrency: 8, perHostConcurrency: 8, batchSize: 5, timeoutMs: 30_000 },
      taskQueue,
    );

    // Heartbeat gaps as the server sees them: poll pending activities every 250 ms.
    const lastBeat = new Map<string, number>();
    let maxServerGap = 0; // between two successive lastHeartbeatTime values (or start -> first beat)
    let maxStaleness = 0; // now - lastHeartbeatTime (or lastStartedTime) at a poll
    let polls = 0;
    polling = true;
    const poller = (async () => {
      const deadline = Date.now() + 80_000;
      while (polling && Date.now() < deadline) {
        const pending = await pendingBatches(handle).catch(() => []);
        const now = Date.now();
        polls += 1;
        for (const batch of pending) {
          if (!batch.state.endsWith('STARTED') || batch.lastStartedAt === undefined) continue;
          const key = `${batch.activityId}#${batch.attempt}`;
          const beat = batch.lastHeartbeatAt !== undefined && batch.lastHeartbeatAt >= batch.lastStartedAt ? batch.lastHeartbeatAt : undefined;
          const previous = lastBeat.get(key) ?? batch.lastStartedAt;
          if (beat !== undefined && beat > previous) {
            maxServerGap = Math.max(maxServerGap, beat - previous);
            lastBeat.set(key, beat);
          }
          maxStaleness = Math.max(maxStaleness, now - (beat ?? previous));
        }
        await sleep(250);
      }
    })();

    const summary = await handle.result();
    polling = false;
    await poller;
    const total = Date.now() - started;
    assert.equal(summary.status, 'completed');

    const { outcomes, eventTypes } = await batchOutcomes(handle);
    const bad = eventTypes.filter((type) => /ACTIVITY_TASK_(FAILED|TIMED_OUT)/.test(type));
    assert.deepEqual(bad, [], 'no batch activity failed or timed out');
    assert.ok(outcomes.length > 0 && outcomes.every((outcome) => outcome.attempt === 1), `every batch ran exactly once (attempts ${outcomes.map((o) => o.attempt)})`);
    assert.ok(outcomes.every((outcome) => outcome.closedAs === 'COMPLETED'), 'every batch completed');

    const expected = new Set(['/', ...Array.from({ length: PAGES }, (_, i) => `/j/${i}`)]);
    const records = await readRecords(env.dataDir, 'faults-jitter');
    const stats = recordStats(records, expected);
    assert.deepEqual(sortedPaths(records.map((record) => record.url)), [...expected].sort(), 'every page recorded once');
    assert.ok(records.every((record) => record.status === 200 && record.error === null), 'no page errored (no timeout at 12 s)');
    assert.deepEqual(requestedPagePaths(site, { prefix: '/j/' }), [...expected].filter((path) => path !== '/').sort(), 'every page fetched exactly once');

    const metrics = await (await request(host.metricsUrl!)).body.text();
    const heartbeatLines = metrics.split('\n').filter((line) => /^temporal_request(_total)?\{/.test(line) && line.includes('operation="RecordActivityTaskHeartbeat"'));
    const heartbeatsSent = heartbeatLines.reduce((sum, line) => sum + Number(line.split(/\s+/).pop()), 0);
    assert.ok(heartbeatsSent >= 1, `heartbeats were sent to the server (${heartbeatLines.join(' | ') || 'no temporal_request sample'})`);
    // What keeps a batch alive through a 12 s response: the server saw a heartbeat more often
    // than its timeout, and never went that long without one.
    assert.ok(maxServerGap > 0, `heartbeats were seen in ${polls} polls of the pending activities`);
    assert.ok(maxServerGap < ACTIVITY_HEARTBEAT_TIMEOUT_MS, `the largest gap between server-recorded heartbeats (${maxServerGap} ms) is under the ${ACTIVITY_HEARTBEAT_TIMEOUT_MS} ms heartbeat timeout`);
    assert.ok(maxStaleness < ACTIVITY_HEARTBEAT_TIMEOUT_MS, `no running batch went ${ACTIVITY_HEARTBEAT_TIMEOUT_MS} ms without a heartbeat (stalest ${maxStaleness} ms)`);
    const spikes = delayOf.filter((ms) => ms >= 1_000).length;
    console.log(
      `network-jitter: ${PAGES + 1} pages, ${spikes} spikes >= 1 s (max ${seconds(Math.max(...delayOf))} s, 3 x ${seconds(LONG_SPIKE_MS)} s > 10 s heartbeat timeout); recorded ${stats.recorded}, lost ${stats.lost}, duplicated ${stats.duplicated}; ${outcomes.length} batches, 0 failed/timed out/retried; ` +
        `heartbeats sent to server ${heartbeatsSent} (SDK temporal_request); max gap between server-recorded heartbeats ${seconds(maxServerGap)} s, max heartbeat staleness seen ${seconds(maxStaleness)} s (${polls} polls @250 ms); total ${seconds(total)} s`,
    );
  });
});
