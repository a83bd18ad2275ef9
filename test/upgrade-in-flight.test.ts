/**
 * A crawl in flight across an upgrade: the 0.2.0 release (checked out from git and built, see
 * test/helpers/releases.ts) starts a crawl with its own worker process, which is then stopped
 * with SIGTERM, as in a rolling deploy; a worker of this release takes the crawl over. It must
 * replay the 0.2.0 history (the workflow without the scheduler-v2 marker), run the 0.2.0
 * activities on the store file the release made (migrating it), and finish the crawl: every
 * reachable page recorded once and fetched once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { temporal } from '@temporalio/proto';
import { startCrawl } from '../src/client/crawl-client';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { SCHEDULER_V2_PATCH } from '../src/workflows/crawl-session';
import { reachablePagePaths, requestedPagePaths, sortedPaths, waitFor } from './helpers/fixtures';
import { decodePayload, historiesOf } from './helpers/histories';
import { spawnWorker } from './helpers/processes';
import { releaseBuild, type ReleaseBuild } from './helpers/releases';
import { readRecords, startTestTemporal, uniqueQueue, type TestTemporal } from './helpers/temporal';

/** Who ran each started activity of `type`, by worker identity. */
function activityWorkers(history: temporal.api.history.v1.IHistory, type: string): string[] {
  const events = history.events ?? [];
  const ofType = new Set(events.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === type).map((event) => String(event.eventId)));
  return events.flatMap((event) => {
    const started = event.activityTaskStartedEventAttributes;
    return started && ofType.has(String(started.scheduledEventId)) ? [started.identity ?? ''] : [];
  });
}

/** The patches (`patched()` IDs) a history's markers record. */
function patchIds(history: temporal.api.history.v1.IHistory): string[] {
  return (history.events ?? []).flatMap((event) => {
    const payload = event.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0];
    return payload ? [(decodePayload(payload) as { id: string }).id] : [];
  });
}

describe('a crawl started by the 0.2.0 release, finished by this one', () => {
  let env: TestTemporal;
  let site: SyntheticSite;
  let release: ReleaseBuild;

  before(async () => {
    // Built once per checkout (kept in test-output/releases by commit), so later runs skip it.
    release = releaseBuild('0.2.0');
    env = await startTestTemporal();
    site = await startSyntheticSite({ pages: 300, latencyMs: 20 });
  });
  after(async () => {
    await site?.close();
    await env?.close();
  });

  it("the release's worker leaves mid-crawl; a worker of this release replays its history and finishes the crawl, every page once", async () => {
    const taskQueue = uniqueQueue('upgrade');
    const crawlId = 'upgrade-in-flight';
    const old = spawnWorker({ cli: release.cli, address: env.address, taskQueue, dataDir: env.dataDir, logFile: join(env.dataDir, 'release-worker.log') });
    try {
      await old.ready;
      const handle = await startCrawl(env.client, crawlId, { seeds: [site.urlOf(0)], batchSize: 10, perHostConcurrency: 2 }, taskQueue);
      await waitFor(() => requestedPagePaths(site).length >= 60, 60_000, 'the release crawling 60 pages');
      await old.kill('SIGTERM');
      assert.equal(old.child.exitCode, 0, 'the release drained its batches and exited');
      const handedOverAt = requestedPagePaths(site).length;

      await env.startWorker(taskQueue);
      const summary = await handle.result();
      assert.equal(summary.status, 'completed');
      assert.ok(handedOverAt < reachablePagePaths(site).length, `the release left pages to crawl (${handedOverAt} fetched)`);

      const records = await readRecords(env.store, crawlId);
      assert.deepEqual(sortedPaths(records.map((record) => record.url)), reachablePagePaths(site), 'every reachable page recorded once');
      assert.deepEqual(requestedPagePaths(site), reachablePagePaths(site), 'every page fetched once');

      const runs = await historiesOf(env.client, crawlId);
      assert.ok(runs.length > 0);
      for (const { history } of runs) assert.ok(!patchIds(history).includes(SCHEDULER_V2_PATCH), 'the crawl ran as 0.2.0 runs it, to the end');
      const batchWorkers = runs.flatMap(({ history }) => activityWorkers(history, 'crawlBatch'));
      assert.equal(runs.flatMap(({ history }) => activityWorkers(history, 'fetchBatch')).length, 0, "no batch of this release's workflow");
      const oldIdentity = `${old.child.pid}@`;
      assert.ok(batchWorkers.some((identity) => identity.startsWith(oldIdentity)), 'the release ran batches');
      assert.ok(batchWorkers.some((identity) => !identity.startsWith(oldIdentity)), "this release's worker ran 0.2.0 batches");
    } finally {
      await old.kill('SIGKILL');
    }
  });
});
