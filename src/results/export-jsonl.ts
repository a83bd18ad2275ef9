/**
 * Writes a crawl's page records as JSON Lines, one line per URL the crawl decided about.
 * Written to a temporary file and renamed, so an interrupted export never leaves a
 * half-written file where a complete one is expected.
 */
import { createWriteStream, renameSync } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { FrontierStore, PageRecord } from '../store/frontier-store';
import { openStoreBackend, UnknownCrawlError } from '../store/store-backend';
import type { StoreConfig } from '../store/store-url';

export { UnknownCrawlError };

/** Runs `read` with the store of a crawl that has one (UnknownCrawlError otherwise), then closes it. */
export async function withCrawlStore<T>(config: StoreConfig, crawlId: string, read: (store: FrontierStore) => Promise<T>): Promise<T> {
  const backend = openStoreBackend(config);
  try {
    const store = await backend.openExisting(crawlId);
    try {
      return await read(store);
    } finally {
      await store.close();
    }
  } finally {
    await backend.close();
  }
}

export function toJsonLine(record: PageRecord): string {
  return `${JSON.stringify(record)}\n`;
}

export async function exportJsonl(config: StoreConfig, crawlId: string, outFile: string): Promise<number> {
  const partial = `${outFile}.partial`;
  const lines = await withCrawlStore(config, crawlId, async (store) => {
    const out = createWriteStream(partial);
    let written = 0;
    for await (const record of store.records()) {
      if (!out.write(toJsonLine(record))) await once(out, 'drain');
      written += 1;
    }
    out.end();
    await finished(out);
    return written;
  });
  renameSync(partial, outFile);
  return lines;
}
