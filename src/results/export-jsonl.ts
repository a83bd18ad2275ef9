/**
 * Writes a crawl's page records as JSON Lines, one line per URL the crawl decided about.
 */
import { existsSync } from 'node:fs';
import { SqliteFrontierStore, crawlStorePath } from '../store/sqlite-store';
import type { PageRecord } from '../store/frontier-store';
import { writeAtomically, writeChunk } from './atomic-file';

export class UnknownCrawlError extends Error {
  readonly code = 'unknown-crawl';
}

export function openCrawlStore(dataDir: string, crawlId: string): SqliteFrontierStore {
  const file = crawlStorePath(dataDir, crawlId);
  if (!existsSync(file)) throw new UnknownCrawlError(`no results for crawl "${crawlId}" in ${dataDir}`);
  return new SqliteFrontierStore(file);
}

export function toJsonLine(record: PageRecord): string {
  return `${JSON.stringify(record)}\n`;
}

export async function exportJsonl(dataDir: string, crawlId: string, outFile: string): Promise<number> {
  const store = openCrawlStore(dataDir, crawlId);
  try {
    return await writeAtomically(outFile, async (out) => {
      let lines = 0;
      for await (const record of store.records()) {
        await writeChunk(out, toJsonLine(record));
        lines += 1;
      }
      return lines;
    });
  } finally {
    await store.close();
  }
}
