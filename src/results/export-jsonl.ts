/**
 * Writes a crawl's page records as JSON Lines, one line per URL the crawl decided about.
 */
import type { BodyStore } from '../bodies/body-store';
import type { FrontierStore, PageRecord } from '../store/frontier-store';
import { openStoreBackend } from '../store/open-store-backend';
import { UnknownCrawlError } from '../store/store-backend';
import { storeDamage } from '../store/store-errors';
import type { StoreConfig } from '../store/store-url';
import { ChunkedWriter } from './atomic-file';
import { writeExport } from './out-target';

export { UnknownCrawlError };

/**
 * Runs `read` with the store of a crawl that has one (UnknownCrawlError otherwise) and the
 * body store that goes with it, then closes them. A damaged store (DamagedStoreError) may show
 * on opening it or only at the page read that finds the damage.
 */
export async function withCrawlStore<T>(config: StoreConfig, crawlId: string, read: (store: FrontierStore, bodies: BodyStore) => Promise<T>): Promise<T> {
  const backend = await openStoreBackend(config);
  try {
    const store = await backend.openExisting(crawlId);
    try {
      return await read(store, backend.bodies);
    } finally {
      await store.close();
    }
  } catch (err) {
    throw storeDamage(err, `the store of crawl "${crawlId}" (${backend.description})`) ?? err;
  } finally {
    await backend.close();
  }
}

export function toJsonLine(record: PageRecord): string {
  return `${JSON.stringify(record)}\n`;
}

export function exportJsonl(config: StoreConfig, crawlId: string, outFile: string): Promise<number> {
  return withCrawlStore(config, crawlId, (store) =>
    writeExport(outFile, async (out) => {
      const writer = new ChunkedWriter(out);
      let lines = 0;
      for await (const record of store.records()) {
        await writer.add(toJsonLine(record));
        lines += 1;
      }
      await writer.flush();
      return lines;
    }),
  );
}
