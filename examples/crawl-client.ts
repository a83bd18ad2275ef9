/**
 * Embedding crawlflow: start a crawl, follow its progress, read its results.
 *
 *   TEMPORAL_ADDRESS=127.0.0.1:7233 node dist/examples/crawl-client.js https://example.com/
 *
 * Needs a running `crawlflow worker` on the same task queue and data directory (or store URL,
 * CRAWLFLOW_STORE_URL).
 */
import { Client, Connection } from '@temporalio/client';
import { crawlHandle, newCrawlId, startCrawl } from '../src/client/crawl-client';
import { withCrawlStore } from '../src/results/export-jsonl';
import { progressQuery } from '../src/shared/messages';
import { DEFAULT_TASK_QUEUE } from '../src/shared/names';
import { defaultDataDir } from '../src/temporal/project-paths';

async function main(seed: string): Promise<void> {
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
  const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
  const crawlId = newCrawlId();
  const taskQueue = process.env.CRAWLFLOW_TASK_QUEUE ?? DEFAULT_TASK_QUEUE;

  await startCrawl(client, crawlId, { seeds: [seed], maxPages: 100 }, taskQueue);
  const handle = crawlHandle(client, crawlId);
  const timer = setInterval(async () => {
    const progress = await handle.query(progressQuery).catch(() => undefined);
    if (progress) console.log(`progress ${progress.processed} processed, ${progress.queued} queued`);
  }, 500);
  const summary = await handle.result().finally(() => clearInterval(timer));
  console.log(`summary ${summary.status}: ${summary.totals.fetched} fetched, ${summary.totals.errors} errors`);

  const stores = { dataDir: process.env.CRAWLFLOW_DATA_DIR ?? defaultDataDir(), storeUrl: process.env.CRAWLFLOW_STORE_URL };
  await withCrawlStore(stores, crawlId, async (store) => {
    for await (const page of store.records()) console.log(`page ${page.status ?? page.error ?? page.skipped} ${page.url} ${page.title ?? ''}`);
  });
  await connection.close();
}

main(process.argv[2] ?? 'http://127.0.0.1:8080/').catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
