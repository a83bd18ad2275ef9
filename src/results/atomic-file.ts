/**
 * Writes an export to `<file>.partial` and renames it into place once complete, so an
 * interrupted export never leaves a half-written file where a complete one is expected.
 */
import { closeSync, createWriteStream, fchmodSync, openSync, renameSync, rmSync, statSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';

/** The name an export to `file` is written under until it is complete. */
export const partialFileOf = (file: string): string => `${file}.partial`;

/**
 * Why an export cannot make its partial file when something has its name, and what to do: an
 * export still writing it, or one that was killed with no chance to remove it, look the same.
 */
export const partialFileTaken = (partial: string): string => `${partial} exists (another export is writing it, or one was killed: remove it if none is running)`;

/**
 * The export file could not be written: its directory went away, the disk is full, ... The
 * partial file is removed, and a complete file already at `outFile` is left as it was; `kept`
 * is false for a target written as it is (out-target.ts), where nothing was kept.
 */
export class ExportWriteError extends Error {
  readonly code = 'export-write';
  /** What failed, without what it left: `cannot write <file> (ENOSPC)`. */
  readonly failure: string;
  constructor(outFile: string, cause: NodeJS.ErrnoException, kept = true) {
    const failure =
      cause.code === 'EEXIST'
        ? `cannot write ${outFile}: ${partialFileTaken(cause.path ?? 'its partial file')}`
        : `cannot write ${outFile} (${cause.code ?? cause.message})`;
    super(kept ? `${failure}; a file already there is left as it was` : failure, { cause });
    this.failure = failure;
  }
}

/** Writes a chunk, waiting when the stream asks to (so a large export stays at flat memory). */
export async function writeChunk(out: Writable, chunk: string | Buffer): Promise<void> {
  // A stream that failed never drains: waiting for it would hang the export.
  if (out.errored) throw out.errored;
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

  constructor(private readonly out: Writable) {}

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

/** The permission bits of the file at `file`, or undefined when there is none yet. */
function modeOf(file: string): number | undefined {
  try {
    return statSync(file).mode & 0o7777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Opens the partial file before anything is written: a file that cannot be made (its directory
 * went away, something has its name) fails here, and a failure later removes only a file this
 * export made. It is made exclusively: two exports to one file at once would otherwise write
 * into the same partial file, and the first to finish would put their mix in place. It takes
 * the permissions of the file it will replace, as writing into that file would keep them: a
 * results file made private stays private.
 */
function openPartial(file: string, partial: string, named: string): number {
  let fd: number | undefined;
  try {
    fd = openSync(partial, 'wx');
    const mode = modeOf(file);
    if (mode !== undefined) fchmodSync(fd, mode);
    return fd;
  } catch (err) {
    if (fd !== undefined) {
      closeSync(fd);
      rmSync(partial, { force: true });
    }
    throw new ExportWriteError(named, err as NodeJS.ErrnoException);
  }
}

/** The signals that end a command, from its terminal or its supervisor. */
const ENDING_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * A signal came while the export was written, and something else in the process handles it (a
 * crawl's worker, which shuts down): the partial file is removed and nothing was written;
 * `kept` is false for a target written as it is (out-target.ts), which got what was written.
 */
export class ExportInterruptedError extends Error {
  readonly code = 'export-interrupted';
  /** What happened, without what it left: `SIGINT while writing <file>`. */
  readonly failure: string;
  constructor(outFile: string, signal: NodeJS.Signals, kept = true) {
    const failure = `${signal} while writing ${outFile}`;
    super(kept ? `${failure}: nothing written there; a file already there is left as it was` : failure);
    this.failure = failure;
  }
}

/**
 * Until the returned function is called, `interrupt` runs first on a signal that ends the
 * process: it makes the export fail (with ExportInterruptedError) and cleans up. When nothing
 * else handles the signal, it is then raised again, so the process ends by it at once, as it
 * would have (even with a body read or an open that never returns); otherwise whatever took the
 * signal (a crawl's worker) has its way, and the export's failure is the command's end.
 */
export function onEndingSignal(interrupt: (signal: NodeJS.Signals) => void): () => void {
  const onSignal = (signal: NodeJS.Signals): void => {
    stop();
    interrupt(signal);
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const stop = (): void => {
    for (const signal of ENDING_SIGNALS) process.off(signal, onSignal);
  };
  for (const signal of ENDING_SIGNALS) process.on(signal, onSignal);
  return stop;
}

/** Writes `file` by way of `<file>.partial`; errors name it as `named` (the `--out` given, when that is a link to it). */
export async function writeAtomically<T>(file: string, write: (out: Writable) => Promise<T>, named = file): Promise<T> {
  const partial = partialFileOf(file);
  // Listened for before the partial file is made: until a listener is added, a signal ends the
  // process at once, so one sent right after the file appears would leave it behind. A signal is
  // taken on a later tick than this one, when `out` is set, or gone with a failed open.
  let out: WriteStream | undefined;
  const stopRemovingOnSignal = onEndingSignal((signal) => {
    out?.destroy(new ExportInterruptedError(named, signal));
    rmSync(partial, { force: true });
  });
  try {
    out = createWriteStream(partial, { fd: openPartial(file, partial, named) });
  } catch (err) {
    stopRemovingOnSignal();
    throw err;
  }
  try {
    return await writeThrough(out, file, write, named);
  } finally {
    stopRemovingOnSignal();
  }
}

/** Writes the export into `out`, its partial file, and renames that to `file` once complete. */
async function writeThrough<T>(out: WriteStream, file: string, write: (out: Writable) => Promise<T>, named: string): Promise<T> {
  const partial = partialFileOf(file);
  // The stream's error (a write failed: the disk is full, ...) may come while `write`
  // reads the store rather than waits on the stream: the next writeChunk throws it from
  // `out.errored`, and an 'error' event with no listener would end the process instead.
  out.on('error', () => undefined);
  try {
    const result = await write(out);
    out.end();
    await finished(out);
    renameSync(partial, file);
    return result;
  } catch (err) {
    const fileError = !(err instanceof ExportInterruptedError) && (out.errored === err || (err as NodeJS.ErrnoException).syscall === 'rename');
    out.destroy();
    rmSync(partial, { force: true });
    // The store's errors (an unknown body, a WARC with no bodies) go up as they are.
    throw fileError ? new ExportWriteError(named, err as NodeJS.ErrnoException) : err;
  }
}
