/**
 * Reading a list of seed URLs: one a line, blank lines and `#` comments skipped, each URL
 * checked with the rule inline seeds follow. The list is read in chunks that carry the byte
 * offset after them, so an import that stopped (its worker died) goes on from where its last
 * heartbeat says instead of from the start.
 */
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { seedRefusal } from '../shared/crawl-config';
import { InvalidSeedLineError, UnreadableSeedsFileError } from './seed-errors';

/** How far a seed list has been read: bytes from its start, and lines (1-based numbers of those read). */
export interface SeedListPosition {
  byteOffset: number;
  line: number;
}

export const LIST_START: SeedListPosition = { byteOffset: 0, line: 0 };

export interface SeedChunk {
  urls: string[];
  /** Where the line after this chunk starts. */
  next: SeedListPosition;
}

const NEWLINE = 0x0a;

/** The seed URL of one line, null for a blank or comment line; throws for anything else. */
function seedOfLine(raw: string, list: string, line: number): string | null {
  const text = raw.trim();
  if (text === '' || text.startsWith('#')) return null;
  const refusal = seedRefusal(text);
  if (refusal !== null) throw new InvalidSeedLineError(list, line, refusal);
  return text;
}

/**
 * The seeds of `stream`, which starts at `from`, in chunks of up to `chunkSize` URLs (the last
 * one possibly empty: it still carries the end position). `list` names the list in errors.
 */
export async function* seedChunks(stream: Readable, list: string, from: SeedListPosition, chunkSize: number): AsyncGenerator<SeedChunk> {
  let { byteOffset, line } = from;
  let urls: string[] = [];
  let rest = Buffer.alloc(0);
  const take = (bytes: Buffer, width: number): string | null => {
    line += 1;
    byteOffset += width;
    return seedOfLine(bytes.toString('utf8'), list, line);
  };
  for await (const data of stream as AsyncIterable<Buffer>) {
    const buffer = rest.length === 0 ? data : Buffer.concat([rest, data]);
    let start = 0;
    for (let end = buffer.indexOf(NEWLINE, start); end !== -1; end = buffer.indexOf(NEWLINE, start)) {
      const url = take(buffer.subarray(start, end), end + 1 - start);
      start = end + 1;
      if (url !== null) urls.push(url);
      if (urls.length >= chunkSize) {
        yield { urls, next: { byteOffset, line } };
        urls = [];
      }
    }
    rest = Buffer.from(buffer.subarray(start));
  }
  if (rest.length > 0) {
    const url = take(rest, rest.length);
    if (url !== null) urls.push(url);
  }
  yield { urls, next: { byteOffset, line } };
}

/** The seeds of the file at `path`, from `from` on; a file that cannot be read fails with its path and cause. */
export async function* seedFileChunks(path: string, from: SeedListPosition, chunkSize: number): AsyncGenerator<SeedChunk> {
  const stream = createReadStream(path, { start: from.byteOffset, highWaterMark: 1 << 20 });
  try {
    yield* seedChunks(stream, path, from, chunkSize);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (err instanceof InvalidSeedLineError || typeof code !== 'string' || !code.startsWith('E')) throw err;
    throw new UnreadableSeedsFileError(`seeds file ${path}: cannot read it on this worker (${code})`, { cause: err });
  } finally {
    stream.destroy();
  }
}
