/**
 * Measures a crawl of the synthetic site with each frontier store, side by side: one
 * in-process worker, the same site and crawl settings; prints pages/s, workflow history events
 * per page and, for PostgreSQL, the statements and transactions the store ran per page
 * (pg_stat_statements, pg_stat_database).
 *
 *   node dist/test/tools/store-throughput.js [pages=5000]
 */
import { Client } from 'pg';
import { startCrawl } from '../../src/client/crawl-client';
import { startSyntheticSite } from '../../src/sites/synthetic-site';
import { startTestTemporal, STORE_KINDS, uniqueQueue } from '../helpers/temporal';

const pages = Number(process.argv[2] ?? 5_000);
const crawl = { concurrency: 8, perHostConcurrency: 8, batchSize: 40, maxDepth: 1_000 };

async function measure(store: (typeof STORE_KINDS)[number]): Promise<void> {
  const env = await startTestTemporal({ store, postgresSettings: ['-c shared_preload_libraries=pg_stat_statements'] });
  const site = await startSyntheticSite({ pages, latencyMs: 0 });
  const db = env.store.storeUrl ? new Client({ connectionString: env.store.storeUrl }) : undefined;
  try {
    const queue = uniqueQueue('throughput');
    await env.startWorker(queue);
    await db?.connect();
    await db?.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    // The worker has migrated the schema at start; count only the crawl from here.
    await db?.query('SELECT pg_stat_statements_reset(), pg_stat_reset()');
    const started = Date.now();
    const handle = await startCrawl(env.client, `throughput-${store}`, { seeds: [site.urlOf(0)], ...crawl }, queue);
    const summary = await handle.result();
    const seconds = (Date.now() - started) / 1000;
    const processed = summary.totals.processed;
    console.log(`${store}: ${processed} pages in ${seconds.toFixed(1)} s = ${(processed / seconds).toFixed(0)} pages/s (${summary.batches} batches)`);
    if (summary.runs === 1) {
      const events = (await handle.fetchHistory()).events?.length ?? 0;
      console.log(`  history: ${events} events = ${(events / processed).toFixed(3)}/page, ${(events / summary.batches).toFixed(2)}/batch`);
    }
    if (db) {
      const { rows } = await db.query<{ calls: string; query: string }>(
        "SELECT calls, query FROM pg_stat_statements WHERE query LIKE '%crawlflow.%' OR query IN ('BEGIN', 'COMMIT') ORDER BY calls DESC",
      );
      let total = 0;
      for (const row of rows) {
        total += Number(row.calls);
        console.log(`  ${(Number(row.calls) / processed).toFixed(3)}/page  ${row.calls.padStart(7)}  ${row.query.replace(/\s+/g, ' ').slice(0, 110)}`);
      }
      const { rows: xacts } = await db.query<{ commits: string }>('SELECT xact_commit AS commits FROM pg_stat_database WHERE datname = current_database()');
      console.log(`  statements per page ${(total / processed).toFixed(2)} (incl. BEGIN/COMMIT); transactions per page ~${(Number(xacts[0].commits) / processed).toFixed(2)}`);
    }
  } finally {
    await db?.end();
    await site.close();
    await env.close();
  }
}

async function main(): Promise<void> {
  for (const store of STORE_KINDS) await measure(store);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
