/**
 * `npm run bench:shards` (and the last part of `npm run bench`): one crawl of 1,000 linked loopback hosts on PostgreSQL with two
 * worker processes, as one shard and as four, measured by PostgreSQL's own statistics:
 * statements per page and execution time (pg_stat_statements), and lock waits, sampled from
 * pg_locks (WHERE NOT granted) every 100 ms with the statement that waits. Printed side by
 * side, with 4-shard / 1-shard ratios.
 */
import { join } from 'node:path';
import { Client as PgClient } from 'pg';
import { startCrawl } from '../src/client/crawl-client';
import { linkedHostsCrawl, startLinkedHosts, type LinkedHosts } from '../src/sites/linked-hosts';
import { spawnWorker, type WorkerProcess } from '../test/helpers/processes';
import { startTestTemporal, uniqueQueue, type TestTemporal } from '../test/helpers/temporal';

const HOSTS = 1_000;
const PAGES_PER_HOST = 4;
const WORKERS = 2;
const SAMPLE_MS = 100;

interface Measured {
  shards: number;
  pages: number;
  seconds: number;
  statements: number;
  statementMs: number;
  /** Samples × waiting backends: lock-wait time in units of SAMPLE_MS. */
  waitSamples: number;
  maxWaiting: number;
  /** What waited, by statement (its first words), in samples. */
  waiters: Map<string, number>;
}

/** Samples waiting lock requests until `stop` is called; returns what it saw. */
function sampleLockWaits(pg: PgClient): { stop(): Promise<Pick<Measured, 'waitSamples' | 'maxWaiting' | 'waiters'>> } {
  const seen = { waitSamples: 0, maxWaiting: 0, waiters: new Map<string, number>() };
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await pg.query<{ query: string }>(
        `SELECT left(regexp_replace(a.query, '\\s+', ' ', 'g'), 60) AS query FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE NOT l.granted`,
      );
      seen.waitSamples += rows.length;
      seen.maxWaiting = Math.max(seen.maxWaiting, rows.length);
      for (const { query } of rows) seen.waiters.set(query, (seen.waiters.get(query) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return seen;
    },
  };
}

async function crawlOnce(env: TestTemporal, pg: PgClient, site: LinkedHosts, taskQueue: string, shards: number): Promise<Measured> {
  await pg.query('SELECT pg_stat_statements_reset()');
  const sampler = sampleLockWaits(pg);
  const started = Date.now();
  const handle = await startCrawl(env.client, `bench-shards-${shards}`, linkedHostsCrawl(site, shards), taskQueue);
  const summary = await handle.result();
  const seconds = (Date.now() - started) / 1000;
  const waits = await sampler.stop();
  const { rows } = await pg.query<{ calls: number; ms: number }>(
    `SELECT coalesce(sum(calls), 0)::bigint AS calls, coalesce(sum(total_exec_time), 0)::float8 AS ms FROM pg_stat_statements s
     JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = 'crawlflow' AND s.query ILIKE '%crawlflow.%'`,
  );
  return { shards, pages: summary.totals.processed, seconds, statements: Number(rows[0].calls), statementMs: Number(rows[0].ms), ...waits };
}

function report(one: Measured, four: Measured): string {
  const perPage = (m: Measured) => ({
    'pages': m.pages,
    'wall s': m.seconds,
    'pages/s': m.pages / m.seconds,
    'statements/page': m.statements / m.pages,
    'statement ms/page': m.statementMs / m.pages,
    'lock-wait ms (sampled)': m.waitSamples * SAMPLE_MS,
    'lock-wait ms/page': (m.waitSamples * SAMPLE_MS) / m.pages,
    'max waiting at once': m.maxWaiting,
  });
  const [a, b] = [perPage(one), perPage(four)];
  const lines = [`| measure | 1 shard | ${four.shards} shards | ratio (${four.shards}/1) |`, '|---|---:|---:|---:|'];
  for (const key of Object.keys(a) as Array<keyof typeof a>) {
    const ratio = a[key] === 0 ? (b[key] === 0 ? '1' : '∞') : (b[key] / a[key]).toFixed(2);
    lines.push(`| ${key} | ${round(a[key])} | ${round(b[key])} | ${ratio} |`);
  }
  for (const m of [one, four]) {
    const top = [...m.waiters].sort((x, y) => y[1] - x[1]).slice(0, 4);
    lines.push('', `${m.shards} shard(s), what waited (samples): ${top.map(([query, n]) => `${n}× ${query}`).join(' · ') || 'nothing'}`);
  }
  return lines.join('\n');
}

const round = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(2));

/** Both crawls, one after the other on one cluster and database; returns the side-by-side table. */
export async function runShardScenario(): Promise<string> {
  const env = await startTestTemporal({ store: 'postgres', postgresSettings: ['-c shared_preload_libraries=pg_stat_statements'] });
  const site = await startLinkedHosts(HOSTS, PAGES_PER_HOST);
  const taskQueue = uniqueQueue('bench-shards');
  const workers: WorkerProcess[] = Array.from({ length: WORKERS }, () =>
    spawnWorker({ address: env.address, taskQueue, dataDir: env.workerDataDir(), storeUrl: env.store.storeUrl, logFile: join(env.dataDir, 'workers.log') }),
  );
  const pg = new PgClient({ connectionString: env.postgres!.url });
  try {
    await Promise.all(workers.map((worker) => worker.ready));
    await pg.connect();
    await pg.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const one = await crawlOnce(env, pg, site, taskQueue, 1);
    site.requests.clear();
    const four = await crawlOnce(env, pg, site, taskQueue, 4);
    const { concurrency, batchSize } = linkedHostsCrawl(site, 1);
    return `${HOSTS} hosts × ${PAGES_PER_HOST + 1} pages, ${WORKERS} worker processes, concurrency ${concurrency}, batch size ${batchSize}, PostgreSQL\n\n${report(one, four)}`;
  } finally {
    await pg.end().catch(() => undefined);
    for (const worker of workers) await worker.kill('SIGKILL');
    await site.close();
    await env.close();
  }
}

if (require.main === module) {
  runShardScenario().then(
    (table) => {
      console.log(table);
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
