/**
 * Where stored page bodies go (`storeBodies`): outside workflow history and outside the
 * frontier store, as WARC records. A page's record keeps only a reference (`bodyRef`).
 *
 * Retries: every batch attempt appends to a file of its own, and a body counts only once the
 * page's record, which carries the reference, is committed. A record is committed once per
 * URL, so bytes an interrupted or zombie attempt wrote are never referenced, never exported,
 * and never duplicate anything.
 *
 * Where they go follows the frontier store, chosen once where it is opened (store-backend.ts):
 * files under the data dir next to SQLite files (this module), rows of the PostgreSQL
 * database that every machine shares (postgres-body-store.ts). The interface is small so
 * another place (an object store) fits without touching the crawler.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { makeDirectory } from '../shared/make-directory';
import { basename, dirname, join } from 'node:path';
import { crawlFileName } from '../shared/crawl-id';

/** Appends one batch attempt's stored pages. */
export interface BodyWriter {
  /** Stores `bytes` (whole gzip members) and returns the reference to keep in the page record. */
  append(bytes: Buffer): Promise<string>;
  close(): Promise<void>;
}

export interface BodyStore {
  writer(crawlId: string, batchId: string, attempt: number): BodyWriter;
  /** The bytes a reference points to; BadBodyRefError when there are none. */
  read(crawlId: string, ref: string): Promise<Buffer>;
  /**
   * Deletes what no committed record references and none can reference any more, once the
   * crawl has stopped; returns how many bodies went. A store without it keeps them (files of
   * failed attempts stay until the crawl's directory is deleted).
   */
  discardUnreferenced?(crawlId: string): Promise<number>;
}

export class BadBodyRefError extends Error {
  readonly code = 'bad-body-ref';
}

/** `<file>#<offset>+<length>`, the file relative to the crawl's body directory. */
const REF = /^([^/\\#]+)#(\d+)\+(\d+)$/;

export function parseBodyRef(ref: string): { file: string; offset: number; length: number } {
  const match = REF.exec(ref);
  if (!match || match[1] === '..' || match[1] === '.') throw new BadBodyRefError(`not a body reference: ${ref.slice(0, 200)}`);
  return { file: match[1], offset: Number(match[2]), length: Number(match[3]) };
}

/** The crawl's body directory: `<data-dir>/crawls/<crawl-id>/warc/`, one `.warc.gz` per batch attempt. */
export function crawlBodyDir(dataDir: string, crawlId: string): string {
  return join(dataDir, 'crawls', crawlFileName(crawlId), 'warc');
}

class FileBodyWriter implements BodyWriter {
  private handle: Promise<{ file: FileHandle; size: number }> | undefined;

  constructor(private readonly path: string) {}

  private opened(): Promise<{ file: FileHandle; size: number }> {
    this.handle ??= (async () => {
      makeDirectory(dirname(this.path));
      const file = await open(this.path, 'a');
      return { file, size: (await file.stat()).size };
    })();
    return this.handle;
  }

  async append(bytes: Buffer): Promise<string> {
    const state = await this.opened();
    const offset = state.size;
    await state.file.appendFile(bytes);
    state.size += bytes.length;
    return `${basename(this.path)}#${offset}+${bytes.length}`;
  }

  async close(): Promise<void> {
    if (this.handle) await (await this.handle).file.close();
  }
}

/** Files under the data directory: the embedded deployment, all workers on one machine. */
export class FileBodyStore implements BodyStore {
  constructor(private readonly dataDir: string) {}

  writer(crawlId: string, batchId: string, attempt: number): BodyWriter {
    return new FileBodyWriter(join(crawlBodyDir(this.dataDir, crawlId), `${encodeURIComponent(batchId)}.attempt-${attempt}.warc.gz`));
  }

  async read(crawlId: string, ref: string): Promise<Buffer> {
    const { file, offset, length } = parseBodyRef(ref);
    const path = join(crawlBodyDir(this.dataDir, crawlId), file);
    const handle = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
      throw new BadBodyRefError(`no body file ${path} for ${ref}: body files stay on the machine whose worker fetched the page`);
    });
    try {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, offset);
      if (bytesRead !== length) throw new BadBodyRefError(`body reference past the end of ${file}: ${ref}`);
      return buffer;
    } finally {
      await handle.close();
    }
  }
}
