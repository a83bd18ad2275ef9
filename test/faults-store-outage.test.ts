/**
 * Fault injection: the frontier store goes away mid-crawl. The crawl pauses (its progress
 * says `waiting-for-store`, with the cause, in the query, in the Web UI's current details and
 * on the workers' metrics), resumes by itself when the store answers, and ends with every
 * reachable page recorded exactly once: nothing lost, nothing recorded twice, and no page
 * fetched again beyond the ones in flight when the store went away.
 * - SQLite: another process holds the crawl file's write lock for 20 s.
 * - PostgreSQL: the server is stopped for 20 s (two worker processes, each with its own data
 *   dir, sharing nothing but Temporal and the database).
 * - PostgreSQL: the server stops answering for 45 s without closing a connection (a loopback
 *   proxy in front of it holds every byte, as a frozen server or a network that drops packets
 *   would): each statement gives up after STATEMENT_ANSWER_TIMEOUT_MS and the crawl waits.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { startCrawl, type CrawlHandle } from '../src/client/crawl-client';
import { progressQuery } from '../src/shared/messages';
import { crawlStorePath } from '../src/store/sqlite-store';
import { freeServerPort } from '../src/workers/runtime';
import type { CrawlProgress } from '../src/shared/crawl-types';
import { readRecords, startTestTemporal, uniqueQueue, type TestTemporal } from './helpers/temporal';
import { spawnWorker, type WorkerProcess } from './helpers/processes';
import { sleep, waitFor } from './helpers/fixtures';
import { fetchCounts, reachablePaths, recordStats } from './helpers/faults';
import { startFreezingProxy } from './helpers/freezing-proxy';
import { CONNECT_TIMEOUT_MS, STATEMENT_ANSWER_TIMEOUT_MS } from '../src/store/postgres-database';

const CONCURRENCY = 4;

interface Sample {
  t: number;
  progress: CrawlProgress;
  details?: string;
  storeWaiting?: number;
}

/** Samples the crawl's progress (and, while it waits, its Web UI details and a metric) until stopped. */
function sampleProgress(handle: CrawlHandle, storeWaiting: () => Promise<number>): { samples: Sample[]; end(): Promise<void> } {
  const samples: Sample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const progress = await handle.query(progressQuery).catch(() => undefined);
      if (progress) {
        const sample: Sample = { t: Date.now(), progress };
        if (progress.status === 'waiting-for-store') {
          const metadata = (await handle.query('__temporal_workflow_metadata').catch(() => ({}))) as { currentDetails?: string };
          sample.details = metadata.currentDetails;
          sample.storeWaiting = await storeWaiting();
        }
        samples.push(sample);
      }
      await sleep(250);
    }
  })();
  return {
    samples,
    /** Once the crawl has ended: stops after the sample that shows its end, so the samples cover the whole crawl. */
    end: async () => {
      await waitFor(() => samples.at(-1)?.progress.status === 'completed', 10_000, 'a sample of the ended crawl');
      running = false;
      await loop;
    },
  };
}

/** An outage from `from` to `to`, which every batch has seen `settledAfterMs` after it began. */
interface Outage {
  from: number;
  to: number;
  settledAfterMs: number;
}

/** What every outage must leave: the exact page set once, few refetches, and the wait shown while it lasted. */
async function assertOutageRidden(env: TestTemporal, site: SyntheticSite, crawlId: string, samples: Sample[], outage: Outage, cause: RegExp): Promise<void> {
  const expected = reachablePaths(site);
  const records = await readRecords(env.store, crawlId);
  assert.deepEqual([...new Set(records.map((record) => new URL(record.url).pathname))].sort(), [...expected].sort(), 'exactly the reachable pages are recorded');
  assert.equal(recordStats(records, expected).duplicated, 0, 'no page recorded twice');
  assert.ok(records.every((record) => record.error === null && record.status === 200), 'no page recorded as failed');
  const counts = fetchCounts(site);
  const refetched = [...counts.values()].reduce((sum, n) => sum + n - 1, 0);
  assert.ok(refetched <= CONCURRENCY, `${refetched} refetches: at most the ${CONCURRENCY} pages in flight when the store went away`);

  const waiting = samples.filter((sample) => sample.progress.status === 'waiting-for-store');
  assert.ok(waiting.length > 0, 'progress showed the crawl waiting for its store');
  assert.match(waiting[0].progress.storeWait?.message ?? '', cause);
  assert.ok(waiting.some((sample) => /waiting for the store/.test(sample.details ?? '')), "the Web UI's current details showed the wait");
  assert.ok(waiting.some((sample) => (sample.storeWaiting ?? 0) > 0), 'crawler_store_waiting_calls showed calls waiting');
  // Once every batch has seen the outage, nothing is recorded until the store is back.
  const during = samples.filter((sample) => sample.t > outage.from + outage.settledAfterMs && sample.t < outage.to);
  assert.ok(during.length > 0);
  assert.equal(new Set(during.map((sample) => sample.progress.processed)).size, 1, 'the crawl paused during the outage');
  assert.ok(samples.some((sample) => sample.t > outage.to && sample.progress.status === 'running'), 'and ran again after it');
  const waits = samples.filter((sample) => sample.progress.status === 'waiting-for-store');
  console.log(
    `store outage: ${records.length} pages, ${refetched} refetched; waiting-for-store shown for ${((waits.at(-1)!.t - waits[0].t) / 1000).toFixed(1)} s of a ${((outage.to - outage.from) / 1000).toFixed(1)} s outage`,
  );
}

/** Another process opens the SQLite file and holds its write lock for `ms`. */
async function lockSqliteFile(file: string, ms: number): Promise<ChildProcess> {
  const script = `
    const Database = require(${JSON.stringify(require.resolve('better-sqlite3'))});
    const db = new Database(${JSON.stringify(file)});
    db.exec('BEGIN EXCLUSIVE');
    process.stdout.write('locked\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); }, ${ms});`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  assert.equal(chunk.toString().trim(), 'locked');
  return child;
}

describe('faults: the SQLite file locked by another process for 20 s', () => {
  let env: TestTemporal;
  let site: SyntheticSite;
  before(async () => {
    env = await startTestTemporal();
    site = await startSyntheticSite({ pages: 600, latencyMs: 15 });
  });
  after(async () => {
    await site?.close();
    await env?.close();
  });

  it('pauses, shows the wait, resumes by itself, every page once', async () => {
    const queue = uniqueQueue('outage-sqlite');
    const worker = await env.startWorker(queue);
    const crawlId = 'outage-sqlite';
    const handle = await startCrawl(env.client, crawlId, { seeds: [site.urlOf(0)], concurrency: CONCURRENCY, perHostConcurrency: CONCURRENCY, batchSize: 10 }, queue);
    const sampler = sampleProgress(handle, async () => (await worker.metrics.storeWaiting.get()).values[0]?.value ?? 0);
    await waitFor(() => (sampler.samples.at(-1)?.progress.processed ?? 0) >= 100, 60_000, '100 pages processed');
    const from = Date.now();
    const locker = await lockSqliteFile(crawlStorePath(env.dataDir, crawlId), 20_000);
    await once(locker, 'exit');
    const to = Date.now();
    const summary = await handle.result();
    await sampler.end();
    assert.equal(summary.status, 'completed');
    // A batch's patience is 5 s.
    await assertOutageRidden(env, site, crawlId, sampler.samples, { from, to, settledAfterMs: 8_000 }, /database is locked|SQLITE_BUSY/);
  });
});

/** Worker processes on `queue` with their store at `storeUrl`, and the sum of their store-waiting gauges. */
async function spawnWorkers(env: TestTemporal, queue: string, storeUrl: string, count: number, workers: WorkerProcess[]): Promise<() => Promise<number>> {
  const metricsPorts: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const port = await freeServerPort();
    const worker = spawnWorker({ address: env.address, taskQueue: queue, dataDir: env.workerDataDir(), storeUrl, metricsAddress: `127.0.0.1:${port}`, logFile: join(env.dataDir, 'workers.log') });
    workers.push(worker);
    metricsPorts.push(port);
    await worker.ready;
  }
  return async () => {
    let waiting = 0;
    for (const port of metricsPorts) {
      const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((response) => response.text()).catch(() => '');
      waiting += Number(/^crawler_store_waiting_calls (\S+)$/m.exec(text)?.[1] ?? 0);
    }
    return waiting;
  };
}

describe('faults: the PostgreSQL server goes away mid-crawl', () => {
  let env: TestTemporal;
  const workers: WorkerProcess[] = [];
  before(async () => {
    env = await startTestTemporal({ store: 'postgres' });
  });
  after(async () => {
    for (const worker of workers) await worker.kill('SIGKILL');
    await env?.close();
  });

  /**
   * Crawls a site of its own on `storeUrl` with `count` worker processes, runs `outage` once 200
   * pages are processed, and checks it was ridden.
   */
  async function crawlThrough(crawlId: string, storeUrl: string, count: number, outage: { run(): Promise<void>; settledAfterMs: number; cause: RegExp }): Promise<void> {
    const site = await startSyntheticSite({ pages: 800, latencyMs: 15 });
    try {
      const queue = uniqueQueue(crawlId);
      const storeWaiting = await spawnWorkers(env, queue, storeUrl, count, workers);
      const handle = await startCrawl(env.client, crawlId, { seeds: [site.urlOf(0)], concurrency: CONCURRENCY, perHostConcurrency: CONCURRENCY, batchSize: 10 }, queue);
      const sampler = sampleProgress(handle, storeWaiting);
      await waitFor(() => (sampler.samples.at(-1)?.progress.processed ?? 0) >= 200, 60_000, '200 pages processed');
      const from = Date.now();
      await outage.run();
      const to = Date.now();
      const summary = await handle.result();
      await sampler.end();
      assert.equal(summary.status, 'completed');
      await assertOutageRidden(env, site, crawlId, sampler.samples, { from, to, settledAfterMs: outage.settledAfterMs }, outage.cause);
    } finally {
      await site.close();
    }
  }

  it('stopped for 20 s: pauses, shows the wait, resumes by itself when the server is back, every page once', async () => {
    // Two workers that share nothing but Temporal and the database.
    await crawlThrough('outage-postgres', env.postgres!.url, 2, {
      async run() {
        await env.postgres!.stop();
        // Twice the heartbeat timeout and four times a batch's patience: batches end waiting, not failing.
        await sleep(20_000);
        await env.postgres!.start();
      },
      settledAfterMs: 8_000,
      cause: /cannot be reached/,
    });
  });

  it('answering nothing for 45 s, its connections open: pauses, shows the wait, resumes when it answers again, every page once', async () => {
    const proxy = await startFreezingProxy(Number(new URL(env.postgres!.url).port));
    const storeUrl = new URL(env.postgres!.url);
    storeUrl.port = String(proxy.port);
    try {
      // A statement in flight gives up after its bound; a batch's next call then waits for a
      // connection attempt that gives up too, past the batch's patience.
      const settledAfterMs = STATEMENT_ANSWER_TIMEOUT_MS + CONNECT_TIMEOUT_MS + 3_000;
      await crawlThrough('outage-postgres-frozen', storeUrl.href, 1, {
        async run() {
          proxy.freeze();
          await sleep(settledAfterMs + 12_000);
          proxy.thaw();
        },
        settledAfterMs,
        cause: new RegExp(`: no answer to a statement within ${STATEMENT_ANSWER_TIMEOUT_MS / 1000} s|: no answer within ${CONNECT_TIMEOUT_MS / 1000} s of connecting`),
      });
    } finally {
      await proxy.close();
    }
  });
});
