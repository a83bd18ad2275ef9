/**
 * The scheduling core through a real Temporal dev server: a batch that fails for good never
 * wedges the crawl (its URLs are recorded with the cause, other hosts go on), a crawl whose
 * every batch fails the same way fails fast with that cause (in the workflow's failure and in
 * `crawlflow crawl`), the totals progress shows are the store's, and batch IDs stay unique
 * after `temporal workflow reset`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { startCrawl } from '../src/client/crawl-client';
import { addSeedsUpdate, progressQuery } from '../src/shared/messages';
import { temporalBinaryPath } from '../src/temporal/project-paths';
import type { BatchOrder } from '../src/scheduling/crawl-plan';
import type { BatchReport } from '../src/shared/crawl-types';
import { failureCause, readRecords, runCrawlToEnd, startTestTemporal, uniqueQueue, type TestTemporal } from './helpers/temporal';
import { page, startRecordingSite } from './helpers/recording-site';
import { completedResults, historiesOf, scheduledInputs } from './helpers/histories';
import { embeddedServerEnv, runCli } from './helpers/processes';
import { heldRoutes, withAddedSeedCrawl } from './helpers/added-seed-crawl';
import { sleep, waitFor } from './helpers/fixtures';
import { fetchCounts, reachablePaths } from './helpers/faults';
import { claimsOf } from './helpers/store-claims';

const MISSING = 'CRAWLFLOW_TEST_VARIABLE_NOBODY_SET';
const MISSING_MESSAGE = new RegExp(`headersFromEnv\\.X-Token: environment variable ${MISSING} is not set on this worker`);

describe('scheduling core: failed batches, fail-fast, one truth for totals, resets', () => {
  let env: TestTemporal;
  let good: SyntheticSite;
  let bad: SyntheticSite;
  const queue = uniqueQueue('core');
  before(async () => {
    delete process.env[MISSING];
    env = await startTestTemporal();
    await env.startWorker(queue);
    good = await startSyntheticSite({ pages: 300, latencyMs: 10 });
    bad = await startSyntheticSite({ pages: 50 });
  });
  after(async () => {
    await good?.close();
    await bad?.close();
    await env?.close();
  });

  it('a host whose requests need a missing variable: its URLs are recorded with the cause, the other host is crawled to the end', async () => {
    const badHost = new URL(bad.origin).host;
    const handle = await startCrawl(
      env.client,
      'core-one-bad-host',
      { seeds: [good.urlOf(0), bad.urlOf(0), bad.urlOf(1)], concurrency: 4, perHostConcurrency: 2, batchSize: 5, hosts: { [badHost]: { headersFromEnv: { 'X-Token': MISSING } } } },
      queue,
    );
    const samples: Array<{ shown: number; stored: number }> = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const progress = await handle.query(progressQuery);
        // Before the first batch the crawl's store may not exist yet: nothing stored.
        const stored = await readRecords(env.store, 'core-one-bad-host').catch(() => []);
        samples.push({ shown: progress.processed, stored: stored.length });
        await sleep(200);
      }
    })();
    const summary = await handle.result();
    sampling = false;
    await sampler;
    const records = await readRecords(env.store, 'core-one-bad-host');

    assert.equal(summary.status, 'completed');
    const goodPaths = records.filter((record) => record.url.startsWith(good.origin)).map((record) => new URL(record.url).pathname).sort();
    assert.deepEqual(goodPaths, [...reachablePaths(good)].sort(), 'the good host was crawled to the end');
    assert.deepEqual(
      records.filter((record) => record.url.startsWith(bad.origin)).map(({ url, error, status }) => ({ url, error, status })),
      [bad.urlOf(0), bad.urlOf(1)].map((url) => ({ url, error: 'request-secret', status: null })),
      "the bad host's URLs are recorded with the cause's code",
    );
    assert.equal(bad.requests.length, 0, 'nothing was sent to the bad host');
    assert.equal(summary.failures?.length, 1);
    assert.equal(summary.failures?.[0].code, 'request-secret');
    assert.match(summary.failures?.[0].message ?? '', MISSING_MESSAGE, 'the summary names the variable');

    // One truth: what progress showed never ran ahead of the store, and ends equal to it.
    assert.ok(samples.length > 3);
    for (const { shown, stored } of samples) assert.ok(shown <= stored, `progress showed ${shown} pages when the store had ${stored}`);
    const final = await handle.query(progressQuery);
    assert.equal(final.status, 'completed');
    assert.deepEqual(
      { processed: final.processed, errors: final.errors, fetched: final.fetched },
      { processed: records.length, errors: records.filter((record) => record.error !== null).length, fetched: records.filter((record) => record.status !== null).length },
    );
    assert.equal(summary.totals.processed, records.length);
  });

  it('every batch failing the same way fails the crawl fast, naming the cause, and leaves the rest of the frontier queued', async () => {
    const seeds = Array.from({ length: 10 }, (_, page) => bad.urlOf(page));
    const handle = await startCrawl(env.client, 'core-all-bad', { seeds, concurrency: 1, perHostConcurrency: 1, batchSize: 2, headersFromEnv: { 'X-Token': MISSING } }, queue);
    const before = bad.requests.length;
    const cause = await failureCause(handle);
    assert.match(cause, /^every batch failed the same way, so the crawl stopped: /);
    assert.match(cause, MISSING_MESSAGE);
    assert.equal((await handle.describe()).status.name, 'FAILED', 'the Web UI and `temporal workflow describe` show it failed');
    const [history] = (await historiesOf(env.client, 'core-all-bad')).map((run) => run.history);
    assert.equal(scheduledInputs<BatchOrder>(history, 'fetchBatch').length, 2, 'two failed batches were enough to give up');
    const records = await readRecords(env.store, 'core-all-bad');
    assert.deepEqual(
      records.map(({ url, error }) => ({ url, error })),
      seeds.slice(0, 4).map((url) => ({ url, error: 'request-secret' })),
    );
    assert.equal(bad.requests.length, before, 'no request was sent');
    const progress = await handle.query(progressQuery);
    assert.equal(progress.status, 'failed');
    assert.equal(progress.queued, 6, 'the rest of the frontier is left queued, not recorded as failures');
  });

  it('a 0.2.0 run that continues as new after the upgrade goes on under the new workflow, its counters kept', async () => {
    const site = await startSyntheticSite({ pages: 60 });
    try {
      // What a 0.2.0 run hands to its next run: its config, and its counters under `continued`.
      const continued = {
        run: 3,
        startedAt: Date.now() - 60_000,
        deadlineAt: null,
        paused: false,
        totals: { processed: 0, fetched: 0, errors: 0, skipped: 0, bytes: 0 },
        batchSeq: 41,
        batchesCompleted: 40,
        frontier: { version: -1, queued: 0, hosts: [] },
        hostReadyAt: {},
        limits: { concurrency: 2, perHostConcurrency: 2, delayMs: 0 },
        addedSeeds: [],
        stopping: false,
      };
      const handle = await env.client.workflow.start('crawlSession', { workflowId: 'core-legacy-continued', taskQueue: queue, args: [{ seeds: [site.urlOf(0)], continued }] });
      const summary = (await handle.result()) as { status: string; runs: number; startedAt: number; totals: { processed: number } };
      assert.equal(summary.status, 'completed');
      assert.equal(summary.runs, 3, 'the run number goes on');
      assert.equal(summary.startedAt, continued.startedAt, 'the crawl keeps its start');
      const records = await readRecords(env.store, 'core-legacy-continued');
      assert.deepEqual(records.map((record) => new URL(record.url).pathname).sort(), [...reachablePaths(site)].sort());
    } finally {
      await site.close();
    }
  });

  it('scope "any" follows links to other hosts, bounded by depth and pages per host; scope "host" does not', async () => {
    const b = await startRecordingSite({
      '/': (_req, res) => page(res, ['/b1', '/b2', '/b3']),
      '/b1': (_req, res) => page(res, ['/b4']),
      '/b2': (_req, res) => page(res),
      '/b3': (_req, res) => page(res),
      '/b4': (_req, res) => page(res),
    });
    const a = await startRecordingSite({ '/': (_req, res) => page(res, ['/a1', `${b.origin}/`]), '/a1': (_req, res) => page(res) });
    try {
      const crawl = async (crawlId: string, scope: 'host' | 'any') => {
        const { records } = await runCrawlToEnd(env, queue, crawlId, { seeds: [`${a.origin}/`], scope, maxDepth: 2, maxPagesPerHost: 3, respectRobots: false });
        return records.map(({ url, status, skipped }) => `${url} ${status ?? skipped}`).sort();
      };
      assert.deepEqual(await crawl('core-scope-host', 'host'), [`${a.origin}/ 200`, `${a.origin}/a1 200`]);
      assert.equal(b.requests.length, 0, 'the other host is never asked under scope "host"');
      assert.deepEqual(
        await crawl('core-scope-any', 'any'),
        [`${a.origin}/ 200`, `${a.origin}/a1 200`, `${b.origin}/ 200`, `${b.origin}/b1 200`, `${b.origin}/b2 200`, `${b.origin}/b3 host-page-cap`].sort(),
      );
      assert.deepEqual(b.pages().map((request) => request.path), ['/', '/b1', '/b2'], '/b4 is past maxDepth; /b3 past the per-host cap');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("at a crawl's start the free slots wait for the seed's links: launched with the seed, they take one link each", async () => {
    const links = ['/a', '/b', '/c'];
    // The seed answers late, so the waiting batches are surely waiting when its links are queued.
    const site = await startRecordingSite({
      '/': (_req, res) => setTimeout(() => page(res, links), 500),
      ...Object.fromEntries(links.map((path) => [path, (_req: unknown, res: Parameters<typeof page>[0]) => setTimeout(() => page(res), 300)])),
    });
    try {
      const { summary } = await runCrawlToEnd(env, queue, 'core-ramp', { seeds: [`${site.origin}/`], concurrency: 4, perHostConcurrency: 4, batchSize: 50, delayMs: 0, respectRobots: false });
      assert.equal(summary.status, 'completed');
      assert.deepEqual(site.pages().map((request) => request.path).sort(), ['/', ...links], 'every page fetched once');

      const [{ history }] = await historiesOf(env.client, 'core-ramp');
      const orders = scheduledInputs<BatchOrder>(history, 'fetchBatch');
      assert.deepEqual(
        orders.slice(0, 4).map((order) => [order.hosts.map(({ host, limit }) => `${host}:${limit}`), order.fill, order.waitsForWork ?? false]),
        [[[`${site.host}:1`], 0, false], [[], 50, true], [[], 50, true], [[], 50, true]],
        'the seed, and a waiting batch in each other slot',
      );
      const events = history.events ?? [];
      const scheduled = events.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'fetchBatch').map((event) => String(event.eventId));
      const firstEnd = events.find((event) => scheduled.includes(String(event.activityTaskCompletedEventAttributes?.scheduledEventId)));
      assert.ok(
        Number(scheduled[3]) < Number(firstEnd?.eventId),
        `all four were launched before any batch ended (events ${scheduled.slice(0, 4).join(', ')}; first end ${firstEnd?.eventId}): no round trip through the workflow for the first links`,
      );
      const claimedBy = new Map(completedResults<BatchReport>(history, 'fetchBatch').map((report) => [report.batchId, report.kind === 'done' ? report.claimed : 0]));
      // A waiting batch claims after a notice or 250 ms: on a loaded machine it may still take the
      // seed, if the seed's batch starts later than that.
      const firstFour = orders.slice(0, 4).map((order) => claimedBy.get(order.batchId) ?? 0);
      const shares = JSON.stringify(firstFour.filter((n) => n > 0).sort());
      assert.ok(
        shares === '[1,1,1,1]' || shares === '[1,1,2]',
        `the four batches launched together fetched the four pages, one link each (plus the seed for one of them): ${firstFour}`,
      );
      const linkRequests = site.pages().filter((request) => request.path !== '/');
      assert.ok(
        linkRequests.every((request) => linkRequests.every((other) => request.startedAt < other.startedAt + 300)),
        `the three links were fetched side by side, not one after another: ${JSON.stringify(linkRequests.map((request) => request.startedAt))}`,
      );
    } finally {
      await site.close();
    }
  });

  it("seeds added while batches hang on slow pages are fetched at once, with their page's links, and progress counts them", async () => {
    const target = { env, taskQueue: queue, crawlId: 'core-added-seeds', limits: { concurrency: 8, perHostConcurrency: 2, batchSize: 10 }, hangWithinMs: 20_000 };
    await withAddedSeedCrawl(target, async ({ handle, added, bPaths, release }) => {
      // The batches launched to wait for links give up after 10 s: the two on A's pages run, six
      // slots are free, and the waiting batches' fruitless end has stopped launches.
      await waitFor(async () => (await handle.query(progressQuery)).batchesInFlight === 2, 30_000, 'the waiting batches to end');

      assert.equal(await handle.executeUpdate(addSeedsUpdate, { args: [[`${added.origin}/`]] }), 1);
      const addedAt = Date.now();
      assert.equal((await handle.query(progressQuery)).queued, 1, "the added seed is queued in the crawl's own count");
      await waitFor(() => added.pages().length === 11, 20_000, "B's page and its ten links to be fetched while A hangs");
      const lastStart = Math.max(...added.pages().map((request) => request.startedAt));
      assert.ok(lastStart - addedAt < 5_000, `B's pages were fetched within 5 s of the update, while 6 slots were free: the last ${lastStart - addedAt} ms after it`);
      // Once the batches that took B's links report, progress counts what the store holds: nothing queued.
      await waitFor(async () => (await handle.query(progressQuery)).processed === 11, 20_000, "B's batches to report");
      const progress = await handle.query(progressQuery);
      assert.deepEqual({ queued: progress.queued, processed: progress.processed, batchesInFlight: progress.batchesInFlight >= 2 }, { queued: 0, processed: 11, batchesInFlight: true });

      release();
      const summary = await handle.result();
      assert.equal(summary.status, 'completed');
      assert.equal(summary.totals.processed, 13);
      assert.deepEqual(
        added.pages().map((request) => request.path).sort(),
        ['/', ...bPaths].sort(),
        "every page of B fetched exactly once, all before A's pages were let go",
      );
      const records = await readRecords(env.store, 'core-added-seeds');
      assert.equal(records.filter((record) => record.url.startsWith(added.origin) && record.status === 200).length, 11);
    });
  });

  it("a seed added while every slot is busy is taken by a batch ordered before it, which crawls it under the config that has the seed: its links are followed", async () => {
    // Four slots, all busy when the seed is added: two batches hang on A's two seeds, and the two
    // others claim whatever is queued, those waiting for work for up to 10 s.
    const crawlId = 'core-added-to-busy';
    const target = { env, taskQueue: queue, crawlId, limits: { concurrency: 4, perHostConcurrency: 2, batchSize: 50 }, hangWithinMs: 5_000 };
    await withAddedSeedCrawl(target, async ({ handle, added, bPaths, release }) => {
      assert.equal(await handle.executeUpdate(addSeedsUpdate, { args: [[`${added.origin}/`]] }), 1);
      await waitFor(() => added.pages().length === 11, 8_000, "B's page and its ten links to be fetched by the waiting batches");
      release();
      const summary = await handle.result();
      assert.equal(summary.status, 'completed');
      assert.equal(summary.totals.processed, 13);
      assert.deepEqual(added.pages().map((request) => request.path).sort(), ['/', ...bPaths].sort(), 'every page of B fetched exactly once');

      // A batch that crawled B's seed under the config it was ordered with would have dropped
      // its links as out of scope: they were followed, so the batch took the newer config.
      const seedClaim = (await claimsOf(env, crawlId)).find((claim) => claim.url === `${added.origin}/`);
      const order = scheduledInputs<BatchOrder>(await handle.fetchHistory(), 'fetchBatch').find((candidate) => candidate.batchId === seedClaim?.batchId);
      assert.equal(order?.configVersion, 1, `B's seed was claimed by a batch ordered under the first config (${seedClaim?.batchId})`);
      const records = await readRecords(env.store, crawlId);
      assert.deepEqual(
        records.filter((record) => record.url.startsWith(added.origin)).map((record) => [new URL(record.url).pathname, record.status, record.depth]).sort(),
        [['/', 200, 0], ...bPaths.map((path) => [path, 200, 1])].sort(),
      );
    });
  });

  it('a page claimed before seeds were added and fetched more than a second after follows its links into the added site', async () => {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const added = await startRecordingSite({ '/': (_req, res) => page(res), '/deep': (_req, res) => page(res) });
    // One batch claims /hold and /next together; /next, fetched once /hold is let go, links to a
    // page of B that B's own seed does not link to.
    const held = await startRecordingSite({
      '/': (_req, res) => page(res, ['/hold', '/next']),
      ...heldRoutes(['/hold'], released),
      '/next': (_req, res) => page(res, [`${added.origin}/deep`]),
    });
    try {
      const handle = await startCrawl(env.client, 'core-added-during-claim', { seeds: [`${held.origin}/`], concurrency: 1, perHostConcurrency: 1, batchSize: 10 }, queue);
      await waitFor(() => held.pages().some((request) => request.path === '/hold'), 10_000, '/hold to hang');
      assert.equal(await handle.executeUpdate(addSeedsUpdate, { args: [[`${added.origin}/`]] }), 1);
      await sleep(1_200);
      release();
      const summary = await handle.result();
      assert.equal(summary.status, 'completed');
      assert.deepEqual(held.pages().map((request) => request.path), ['/', '/hold', '/next'], 'A fetched in claim order, each page once');
      assert.deepEqual(added.pages().map((request) => request.path).sort(), ['/', '/deep'], "B's seed and the page only A links to, each once");
      const records = await readRecords(env.store, 'core-added-during-claim');
      assert.deepEqual(
        records.filter((record) => record.url.startsWith(added.origin)).map((record) => [new URL(record.url).pathname, record.status, record.depth]).sort(),
        [['/', 200, 0], ['/deep', 200, 2]],
      );
    } finally {
      release();
      await held.close();
      await added.close();
    }
  });

  it('batch IDs stay unique after `temporal workflow reset`, and every page is still recorded once', async () => {
    const slow = await startSyntheticSite({ pages: 600, latencyMs: 30 });
    try {
      const crawlId = 'core-reset';
      await startCrawl(env.client, crawlId, { seeds: [slow.urlOf(0)], concurrency: 3, perHostConcurrency: 3, batchSize: 10 }, queue);
      await waitFor(() => slow.requests.filter((request) => request.path.startsWith('/page/')).length >= 100, 60_000, '100 pages fetched');
      await promisify(execFile)(temporalBinaryPath(), ['workflow', 'reset', '--address', env.address, '--workflow-id', crawlId, '--type', 'FirstWorkflowTask', '--reason', 'test', '--yes']);
      const summary = await env.client.workflow.getHandle(crawlId).result();
      assert.equal(summary.status, 'completed');

      const runs = await historiesOf(env.client, crawlId);
      assert.equal(runs.length, 2, 'the reset made a second run');
      const ids = runs.map((run) => scheduledInputs<BatchOrder>(run.history, 'fetchBatch').map((order) => order.batchId));
      for (const [i, run] of runs.entries()) assert.ok(ids[i].every((id) => id.startsWith(`${crawlId}/${run.runId}/`)), 'a batch ID carries its run');
      assert.deepEqual(ids[0].filter((id) => ids[1].includes(id)), [], 'no batch ID of the reset run is used again');

      const records = await readRecords(env.store, crawlId);
      const paths = records.map((record) => new URL(record.url).pathname);
      assert.deepEqual([...new Set(paths)].sort(), [...reachablePaths(slow)].sort());
      assert.equal(paths.length, new Set(paths).size, 'no page recorded twice');
      const refetched = [...fetchCounts(slow).values()].reduce((sum, n) => sum + n - 1, 0);
      assert.ok(refetched <= 3, `${refetched} refetches: at most the pages in flight at the reset`);
      assert.equal(summary.totals.processed, records.length, "the totals are the store's, across the reset");
    } finally {
      await slow.close();
    }
  });
});

describe('scheduling core: `crawlflow crawl` on a crawl that cannot progress', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'crawlflow-core-cli-'));
  let site: SyntheticSite;
  before(async () => {
    site = await startSyntheticSite({ pages: 20 });
  });
  after(async () => {
    await site?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('ends at once with one line naming the cause', async () => {
    const config = join(dataDir, 'crawl.json');
    writeFileSync(config, JSON.stringify({ seeds: [site.urlOf(0)], headersFromEnv: { 'X-Token': MISSING } }));
    const env = { ...(await embeddedServerEnv(dataDir)), [MISSING]: '' };
    const run = await runCli(['crawl', '--config', config, '--id', 'core-cli', '--out', join(dataDir, 'out.jsonl')], env);
    assert.equal(run.code, 1, run.stderr);
    const last = run.stderr.trim().split('\n').at(-1) ?? '';
    assert.match(last, /^crawlflow: crawl core-cli failed: every batch failed the same way, so the crawl stopped: /);
    assert.match(last, MISSING_MESSAGE);
  });
});
