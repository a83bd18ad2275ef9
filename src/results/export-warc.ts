/**
 * Writes a crawl's stored bodies as one WARC/1.1 file (`.warc.gz`): a `warcinfo` record,
 * then the records of every page whose body was stored, in the order the crawl first saw the
 * URLs: a `request` and a `response` for each redirect its fetch followed, then its own
 * `request` and `response` (a `revisit` for a recrawl's unchanged page). The stored records are already gzip members, so they
 * are copied as they are; only records a page record references are copied, so nothing a
 * retried batch attempt left behind gets in.
 */
import { basename } from 'node:path';
import type { BodyStore } from '../bodies/body-store';
import type { FrontierStore } from '../store/frontier-store';
import { recordedConfig } from './recorded-settings';
import { warcinfoRecord } from '../warc/warc-record';
import { writeChunk } from './atomic-file';
import { STDOUT_OUT, writeExport } from './out-target';
import type { StoreConfig } from '../store/store-url';
import { withCrawlStore } from './export-jsonl';

export class NoStoredBodiesError extends Error {
  readonly code = 'no-stored-bodies';
}

/**
 * Whether the crawl was run to store bodies, by its recorded config (a crawl of a release that
 * recorded none was not). One that was, and stored none (no page was an HTML page answered
 * 2xx), has its export all the same: a file with no page in it.
 */
async function storesBodies(store: FrontierStore): Promise<boolean> {
  return (await recordedConfig(store))?.storeBodies === true;
}

/** Bodies read ahead of the one being written: a database answers several at once. */
const READ_AHEAD = 16;

/** The stored bodies of the crawl's records, in record order. */
async function* storedBodies(store: FrontierStore, bodies: BodyStore, crawlId: string): AsyncGenerator<Buffer> {
  const reading: Promise<Buffer>[] = [];
  for await (const record of store.records()) {
    if (record.bodyRef === null) continue;
    const body = bodies.read(crawlId, record.bodyRef);
    // Its failure is thrown when its turn comes; until then it must not count as unhandled.
    body.catch(() => undefined);
    reading.push(body);
    if (reading.length >= READ_AHEAD) yield await reading.shift()!;
  }
  for (const body of reading) yield await body;
}

/**
 * Bodies are read from where the frontier store keeps them: with SQLite files, the data dir
 * of the one machine that crawled; with PostgreSQL, the database, from any machine.
 */
export function exportWarc(config: StoreConfig, crawlId: string, outFile: string): Promise<number> {
  return withCrawlStore(config, crawlId, (store, bodies) =>
    writeExport(outFile, async (out) => {
      await writeChunk(
        out,
        warcinfoRecord(outFile === STDOUT_OUT ? undefined : basename(outFile), {
          software: 'crawlflow',
          format: 'WARC File Format 1.1',
          conformsTo: 'http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/',
          isPartOf: crawlId,
        }),
      );
      let pages = 0;
      for await (const body of storedBodies(store, bodies, crawlId)) {
        await writeChunk(out, body);
        pages += 1;
      }
      if (pages === 0 && !(await storesBodies(store))) {
        throw new NoStoredBodiesError(`crawl "${crawlId}" stored no page bodies: a WARC export needs a crawl run with storeBodies (--store-bodies)`);
      }
      return pages;
    }),
  );
}
