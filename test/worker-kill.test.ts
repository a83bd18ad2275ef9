/**
 * A worker process is killed with SIGKILL mid-crawl and another takes over: the crawl
 * completes with no page missing or recorded twice, the dead worker's batches are retried
 * and resume from their heartbeat details. The SIGKILL scenario runs with each frontier
 * store; with PostgreSQL the two workers have separate data dirs, as on two machines, and the
 * WARC export of the bodies both stored is made from a third one.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { request } from 'undici';
import { crawlBodyDir } from '../src/bodies/body-store';
import type { PageRecord } from '../src/store/frontier-store';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { freeServerPort } from '../src/workers/runtime';
import { startCrawl } from '../src/client/crawl-client';
import { readRecords, startTestTemporal, STORE_KINDS, uniqueQueue, type TestTemporal } from './helpers/temporal';
import { PASSWORD } from './helpers/postgres';
import { runCli, spawnWorker } from './helpers/processes';
import { reachablePagePaths, requestedPagePaths, sortedPaths, waitFor } from './helpers/fixtures';
import { warcioRecords } from './helpers/warcio';

/**
 * warcio reads the file and it holds each record's body once: its response, hashing to the
 * record's contentHash. (Digests are checked by faults-worker-kill-bodies, on the same records.)
 */
async function assertWarcHoldsEachBodyOnce(file: string, records: PageRecord[]): Promise<void> {
  const responses = (await warcioRecords(file)).filter((record) => record.type === 'response');
  assert.deepEqual(sortedPaths(responses.map((record) => record.uri ?? '')), sortedPaths(records.map((record) => record.url)), 'a response per page, each once');
  const hashOf = new Map(records.map((record) => [record.url, record.contentHash]));
  assert.ok(responses.every((record) => record.payloadSha256 === hashOf.get(record.uri ?? '')), 'each response holds the body its page record hashed');
}

/** Rows in `crawlflow.bodies`, for a crawl whose body store is the database. */
async function storedBodyRows(storeUrl: string): Promise<number> {
  const client = new Client({ connectionString: storeUrl });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM crawlflow.bodies')).rows[0].n);
  } finally {
    await client.end();
  }
}

for (const store of STORE_KINDS) {
describe(`worker killed mid-crawl (${store} store)`, () => {
  let env: TestTemporal;
  let site: SyntheticSite;

  before(async () => {
    env = await startTestTemporal({ store });
    site = await startSyntheticSite({ pages: 2_000, latencyMs: 15 });
  });
  after(async () => {
    await site?.close();
    await env?.close();
  });

  it('completes with every page exactly once after SIGKILL of the worker', async () => {
    const taskQueue = uniqueQueue('kill');
    const logFile = join(env.dataDir, 'workers.log');
    const machines = [env.workerDataDir(), env.workerDataDir()];
    const first = spawnWorker({ address: env.address, taskQueue, dataDir: machines[0], storeUrl: env.store.storeUrl, logFile });
    await first.ready;
    const handle = await startCrawl(
      env.client,
      'kill-test',
      { seeds: [site.urlOf(0)], concurrency: 6, perHostConcurrency: 6, batchSize: 40, maxDepth: 1_000, storeBodies: true },
      taskQueue,
    );

    await waitFor(() => site.requests.length >= 400, 60_000, '400 requests');
    await first.kill('SIGKILL');
    const killedAt = Date.now();
    const requestsAtKill = site.requests.length;

    const metricsPort = await freeServerPort();
    const second = spawnWorker({ address: env.address, taskQueue, dataDir: machines[1], storeUrl: env.store.storeUrl, logFile, metricsAddress: `127.0.0.1:${metricsPort}` });
    try {
      await second.ready;
      await waitFor(() => site.requests.length > requestsAtKill, 60_000, 'the new worker to fetch');
      const recoverySeconds = (Date.now() - killedAt) / 1000;
      const summary = await handle.result();

      const expected = site.graph.reachableFrom(0);
      const records = await readRecords(env.store, 'kill-test');
      assert.deepEqual(sortedPaths(records.map((record) => record.url)), reachablePagePaths(site), 'every reachable page recorded once');
      assert.ok(records.every((record) => record.status === 200));
      assert.equal(summary.status, 'completed');

      // Pages fetched twice can only be the ones in flight when the worker died: at most one per running batch.
      const perPage = new Map<string, number>();
      for (const { path } of site.requests) if (path.startsWith('/page/')) perPage.set(path, (perPage.get(path) ?? 0) + 1);
      const refetched = [...perPage.values()].filter((n) => n > 1).length;
      assert.ok([...perPage.values()].every((n) => n <= 2), 'no page fetched more than twice');
      assert.ok(refetched <= 6, `at most one refetch per batch that was running (got ${refetched})`);

      // The killed worker's batches were retried (attempt > 1) and resumed from heartbeat details.
      const history = await handle.fetchHistory();
      const retried = (history.events ?? []).filter((event) => (event.activityTaskStartedEventAttributes?.attempt ?? 1) > 1);
      assert.ok(retried.length >= 1, 'at least one batch was retried on the new worker');
      const metrics = await (await request(`http://127.0.0.1:${metricsPort}/metrics`)).body.text();
      const resumes = Number(/^crawler_batch_resumes_total (\d+)/m.exec(metrics)?.[1] ?? 0);
      assert.ok(resumes >= 1, `new worker resumed batches from heartbeat details (${resumes})`);
      // `crawlflow results` reads the same store, bodies included, from any machine that is given its URL.
      const client = env.workerDataDir();
      const storeArgs = ['--data-dir', client, ...(env.store.storeUrl ? ['--store', env.store.storeUrl] : [])];
      const out = join(client, 'kill-test.jsonl');
      const exported = await runCli(['results', 'kill-test', '--out', out, ...storeArgs], { CRAWLFLOW_STORE_URL: '' });
      assert.equal(exported.code, 0, exported.stderr);
      const exportedUrls = readFileSync(out, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { url: string }).url);
      assert.deepEqual(sortedPaths(exportedUrls), reachablePagePaths(site), 'crawlflow results writes every record once');
      const warcStarted = Date.now();
      const warc = join(client, 'kill-test.warc.gz');
      const warcExport = await runCli(['results', 'kill-test', '--format', 'warc', '--out', warc, ...storeArgs], { CRAWLFLOW_STORE_URL: '' });
      assert.equal(warcExport.code, 0, warcExport.stderr);
      await assertWarcHoldsEachBodyOnce(warc, records);
      if (env.store.storeUrl) {
        assert.ok(machines.every((dir) => !existsSync(crawlBodyDir(dir, 'kill-test'))), 'no body is left on a worker\'s disk');
        assert.equal(await storedBodyRows(env.store.storeUrl), records.length, 'the killed attempts\' unreferenced rows were discarded when the crawl finished');
      }
      const warcSeconds = (Date.now() - warcStarted) / 1000;

      const log = readFileSync(logFile, 'utf8');
      if (env.store.storeUrl) {
        assert.match(log, /"store":"postgres:\/\/crawlflow:redacted@127\.0\.0\.1:\d+\/crawlflow"/, 'workers say which store they use');
        assert.ok(!log.includes(PASSWORD), 'the store password never reaches a log');
      }
      console.log(
        `SIGKILL (${store} store): ${expected.size} pages, ${refetched} refetched, ${retried.length} batches retried, ${resumes} resumed from heartbeat, first fetch ${recoverySeconds.toFixed(1)} s after kill (incl. worker start); ` +
          `WARC export and checks ${warcSeconds.toFixed(1)} s`,
      );
    } finally {
      await second.kill('SIGTERM');
    }
  });
});
}

describe('worker stopped mid-crawl', () => {
  let env: TestTemporal;

  before(async () => {
    env = await startTestTemporal();
  });
  after(async () => env?.close());

  it('SIGTERM drains: running batches finish, nothing is retried or fetched twice', async () => {
    const drainSite = await startSyntheticSite({ pages: 1_000, latencyMs: 15 });
    const taskQueue = uniqueQueue('drain');
    const logFile = join(env.dataDir, 'drain-workers.log');
    const first = spawnWorker({ address: env.address, taskQueue, dataDir: env.dataDir, logFile });
    let second: ReturnType<typeof spawnWorker> | undefined;
    try {
      await first.ready;
      const handle = await startCrawl(env.client, 'drain-test', { seeds: [drainSite.urlOf(0)], concurrency: 6, perHostConcurrency: 6, batchSize: 40, maxDepth: 1_000 }, taskQueue);
      await waitFor(() => drainSite.requests.length >= 200, 60_000, '200 requests');
      const stoppedAt = Date.now();
      await first.kill('SIGTERM');
      const drainSeconds = (Date.now() - stoppedAt) / 1000;
      assert.equal(first.child.exitCode, 0, 'the worker exited cleanly');
      second = spawnWorker({ address: env.address, taskQueue, dataDir: env.dataDir, logFile });
      await second.ready;
      await handle.result();

      assert.deepEqual(requestedPagePaths(drainSite), reachablePagePaths(drainSite), 'every page fetched once: none twice, none lost in the drain');
      const history = await handle.fetchHistory();
      const attempts = (history.events ?? []).flatMap((event) => event.activityTaskStartedEventAttributes?.attempt ?? []);
      assert.ok(attempts.every((attempt) => attempt === 1), 'no batch needed a retry');
      console.log(`SIGTERM: worker drained its batches and exited in ${drainSeconds.toFixed(1)} s; ${requestedPagePaths(drainSite).length} pages, none fetched twice`);
    } finally {
      await first.kill('SIGKILL');
      await second?.kill('SIGTERM');
      await drainSite.close();
    }
  });
});
