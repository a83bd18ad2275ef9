/**
 * Writes an export to `<file>.partial` and renames it into place once complete, so an
 * interrupted export never leaves a half-written file where a complete one is expected.
 */
import { createWriteStream, renameSync, rmSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';

/** Writes a chunk, waiting when the stream asks to (so a large export stays at flat memory). */
export async function writeChunk(out: WriteStream, chunk: string | Buffer): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}

/** Pieces are written in chunks of about this many characters. */
const CHUNK_CHARS = 64 * 1024;

/**
 * Collects small pieces (an export's lines or rows) and writes them in chunks: a stream write
 * and its await per piece cost more than making the piece (a JSON line of a record).
 */
export class ChunkedWriter {
  private pending = '';

  constructor(private readonly out: WriteStream) {}

  async add(piece: string): Promise<void> {
    this.pending += piece;
    if (this.pending.length >= CHUNK_CHARS) await this.flush();
  }

  /** Writes what is pending; call it once the last piece is added. */
  async flush(): Promise<void> {
    if (this.pending === '') return;
    const chunk = this.pending;
    this.pending = '';
    await writeChunk(this.out, chunk);
  }
}

export async function writeAtomically<T>(outFile: string, write: (out: WriteStream) => Promise<T>): Promise<T> {
  const partial = `${outFile}.partial`;
  const out = createWriteStream(partial);
  try {
    const result = await write(out);
    out.end();
    await finished(out);
    renameSync(partial, outFile);
    return result;
  } catch (err) {
    out.destroy();
    rmSync(partial, { force: true });
    throw err;
  }
}
