/**
 * What one page costs the PostgreSQL store, from PostgreSQL's own statistics: the inputs of
 * the 1-billion-page projection in docs/multi-machine.md. crawlflow crawls the bench site
 * (20,000 pages over 100 hosts by default) with `--store` on a fresh local cluster that loads
 * pg_stat_statements, then prints per page: statements and rows (by statement, the busiest
 * first), WAL bytes, and table plus index bytes per URL row.
 *
 *   npm run build && node dist/bench/store-footprint.js [--pages 20000] [--hosts 100]
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { startTestPostgres } from '../test/helpers/postgres';
import { projectRoot } from '../src/temporal/project-paths';
import { checkPageSet, fetchSiteStats } from './page-set';
import { runProcess } from './run-process';
import { startSiteProcess } from './site-process';
import { TOOLS } from './tools';
import { parseFlags, runBenchCommand, wholeNumber } from './bench-args';

interface StatementCost {
  query: string;
  calls: number;
  rows: number;
}

async function query<R extends object>(url: string, sql: string): Promise<R[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql)).rows;
  } finally {
    await client.end();
  }
}

const STATEMENTS = `
  SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls::float8 AS calls, rows::float8 AS rows
  FROM pg_stat_statements WHERE query !~* '^(BEGIN|COMMIT|ROLLBACK|SELECT pg_|SET |SHOW )' ORDER BY calls DESC`;

const SIZES = `
  SELECT (SELECT count(*) FROM crawlflow.urls)::float8 AS urls,
    (SELECT count(*) FROM crawlflow.urls WHERE state = 2)::float8 AS done,
    pg_total_relation_size('crawlflow.urls')::float8 AS urls_bytes,
    pg_total_relation_size('crawlflow.hosts')::float8 AS hosts_bytes,
    (SELECT count(*) FROM crawlflow.hosts)::float8 AS hosts`;

const USAGE = `usage: node dist/bench/store-footprint.js [--pages N] [--hosts N]
  --pages N   pages of the crawl (default 20000)
  --hosts N   hosts of the site (default 100)
`;

async function main(): Promise<void> {
  const { values } = parseFlags({ options: { pages: { type: 'string', default: '20000' }, hosts: { type: 'string', default: '100' } } });
  const [pages, hosts] = [wholeNumber('--pages', values.pages), wholeNumber('--hosts', values.hosts)];
  const postgres = await startTestPostgres({ settings: ['-c shared_preload_libraries=pg_stat_statements', '-c pg_stat_statements.track=all'] });
  const site = await startSiteProcess(pages, hosts);
  try {
    await query(postgres.url, 'CREATE EXTENSION pg_stat_statements');
    const runDir = join(projectRoot, '.tools', 'bench-runs', 'store-footprint');
    rmSync(runDir, { recursive: true, force: true });
    mkdirSync(runDir, { recursive: true });
    const [{ lsn: before }] = await query<{ lsn: string }>(postgres.url, 'SELECT pg_current_wal_lsn()::text AS lsn');
    await query(postgres.url, 'SELECT pg_stat_statements_reset()');
    const launch = await TOOLS.crawlflow.launch({
      seed: `${site.origins[0]}/page/0`,
      seeds: site.origins.map((origin) => `${origin}/page/0`),
      maxPages: site.reachableCount,
      concurrency: 32,
      perHostConcurrency: hosts === 1 ? 32 : 2,
      batchSize: 100,
      runDir,
    });
    const run = await runProcess({ ...launch, args: [...launch.args, '--store', postgres.url] }, { timeoutMs: 600_000 });
    if (run.exitCode !== 0) throw new Error(`crawlflow failed (exit ${run.exitCode ?? run.signal}):\n${run.stderrTail}`);
    const pageSet = checkPageSet(await fetchSiteStats(site.origin), site.reachable);
    const [{ wal }] = await query<{ wal: number }>(postgres.url, `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '${before}')::float8 AS wal`);
    const statements = await query<StatementCost>(postgres.url, STATEMENTS);
    const [sizes] = await query<Record<string, number>>(postgres.url, SIZES);
    report(pageSet.pages, pageSet.windowSeconds, pageSet.exactlyOnce, wal, statements, sizes);
  } finally {
    await site.stop();
    await postgres.close();
  }
}

function report(pages: number, seconds: number, exactlyOnce: boolean, wal: number, statements: StatementCost[], sizes: Record<string, number>): void {
  const per = (n: number) => (n / pages).toFixed(2);
  const calls = statements.reduce((sum, s) => sum + s.calls, 0);
  const rows = statements.reduce((sum, s) => sum + s.rows, 0);
  console.log(`PostgreSQL store, ${pages} pages in ${seconds.toFixed(1)} s (${(pages / seconds).toFixed(0)} pages/s), exactly once: ${exactlyOnce}`);
  console.log(`per page: ${per(calls)} statements, ${per(rows)} rows, ${(wal / pages).toFixed(0)} WAL bytes`);
  console.log(`URL rows: ${sizes.urls} (${sizes.done} done), ${(sizes.urls_bytes / sizes.urls).toFixed(0)} bytes each with indexes; hosts: ${sizes.hosts}, ${(sizes.hosts_bytes / Math.max(1, sizes.hosts)).toFixed(0)} bytes each`);
  console.log('busiest statements (calls per page, rows per call):');
  for (const s of statements.slice(0, 8)) console.log(`  ${per(s.calls).padStart(6)}  ${(s.rows / Math.max(1, s.calls)).toFixed(1).padStart(6)}  ${s.query.slice(0, 110)}`);
}

runBenchCommand(main, USAGE);
