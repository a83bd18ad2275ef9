/**
 * Writes a crawl's page records as JSON Lines, one line per URL the crawl decided about.
 * Written to a temporary file and renamed, so an interrupted export never leaves a
 * half-written file where a complete one is expected.
 */
import { createWriteStream, existsSync, renameSync } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { SqliteFrontierStore, crawlStorePath } from '../store/sqlite-store';
import type { PageRecord } from '../store/frontier-store';

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
  const partial = `${outFile}.partial`;
  const out = createWriteStream(partial);
  let lines = 0;
  try {
    for await (const record of store.records()) {
      if (!out.write(toJsonLine(record))) await once(out, 'drain');
      lines += 1;
    }
    out.end();
    await finished(out);
  } finally {
    await store.close();
  }
  renameSync(partial, outFile);
  return lines;
}
