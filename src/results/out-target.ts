/**
 * Where an export goes, as `--out` names it. A new name or a regular file gets the export
 * atomically (atomic-file.ts); through a symbolic link, the file it points to, so the link stays
 * a link. Standard output (`-`, or a path that leads to it: /dev/stdout, the file it was
 * redirected to) and anything else that exists and is no directory (a device such as /dev/null,
 * a FIFO) is written as it is: a rename onto it would replace it (run as root, /dev/null
 * itself), and what was written there cannot be taken back anyway.
 */
import { constants, createWriteStream, fstatSync, openSync, realpathSync, statSync, type Stats } from 'node:fs';
import { Socket } from 'node:net';
import { resolve } from 'node:path';
import { PassThrough, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExportInterruptedError, ExportWriteError, onEndingSignal, writeAtomically } from './atomic-file';

/** The `--out` value that writes the export to standard output. */
export const STDOUT_OUT = '-';

/** `--out` as an absolute path; `-` stays as it is. */
export function resolveOut(out: string): string {
  return out === STDOUT_OUT ? out : resolve(out);
}

/** How an export names where it went, in messages. */
export function describeOut(out: string): string {
  return out === STDOUT_OUT ? 'standard output' : out;
}

export interface ExistingTarget {
  /** A file's path with every symbolic link followed; anything else's as given. */
  path: string;
  kind: 'file' | 'directory' | 'other';
}

/**
 * What `out` names, its links followed by the system, or undefined when nothing is there yet
 * (or its link leads nowhere). Only a file's links are resolved into a path: /dev/stderr and
 * /proc/self/fd/* lead to pipes and terminals that have none, and are opened as given.
 */
export function existingTarget(out: string): ExistingTarget | undefined {
  let stats: Stats;
  try {
    stats = statSync(out);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (stats.isFile()) return { path: realpathSync(out), kind: 'file' };
  return { path: out, kind: stats.isDirectory() ? 'directory' : 'other' };
}

/**
 * Whether the export goes to this process's standard output (`-`, or /dev/stdout and the
 * like): the command's own messages must then go to stderr, or they would end up in the data.
 */
export function writesToStdout(out: string): boolean {
  if (out === STDOUT_OUT) return true;
  try {
    const [target, stdout] = [statSync(out), fstatSync(1)];
    return target.dev === stdout.dev && target.ino === stdout.ino;
  } catch {
    return false;
  }
}

/**
 * The reader of standard output went away (EPIPE: `crawlflow results <id> --out - | head -1`).
 * The command then ends quietly, as cat, grep or jq do when their reader leaves: what it wrote
 * was read as far as the reader wanted, and a message would only be noise in a pipeline.
 */
export class StdoutClosedError extends Error {
  readonly code = 'stdout-closed';
  constructor(cause: NodeJS.ErrnoException) {
    super('the reader of standard output went away', { cause });
  }
}

/** The error an export's failed target ends it with: quiet for a reader of stdout that left, one line otherwise. */
function targetFailure(outFile: string, target: Writable, failure: NodeJS.ErrnoException): Error {
  if (target === process.stdout && failure.code === 'EPIPE') return new StdoutClosedError(failure);
  return new ExportWriteError(describeOut(outFile), failure, false);
}

/** Resolves once what was written to `target` before has been handed on (stdout, which this export does not end). */
function drained(target: Writable): Promise<void> {
  return new Promise((done, fail) => target.write('', (err) => (err ? fail(err) : done())));
}

/** How long a FIFO with no reader yet is left before it is tried again. */
const FIFO_RETRY_MS = 100;

/**
 * Opens a device or FIFO that is written as it is. A FIFO is opened without blocking, again
 * until a reader has opened it: an open that waits for a reader holds a libuv thread, which no
 * signal can end and which keeps the process alive. Its descriptor is then a pipe's, written as
 * node writes pipes (net.Socket, as process.stdout), so a reader that is slow never blocks a thread either.
 */
async function openTarget(path: string, abort: AbortSignal): Promise<Writable> {
  if (!statSync(path).isFIFO()) return createWriteStream(path);
  for (;;) {
    abort.throwIfAborted();
    try {
      return new Socket({ fd: openSync(path, constants.O_WRONLY | constants.O_NONBLOCK), readable: false, writable: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw err;
    }
    await sleep(FIFO_RETRY_MS, undefined, { signal: abort }).catch(() => undefined);
  }
}

/**
 * Writes into `target` through `out`, a stream of the export's own: process.stdout neither
 * records its error nor can be destroyed by it, so its error (EPIPE: a reader such as `head`
 * went away; ENOSPC) is caught here and destroys `out`, whose next write then throws it.
 * `end`: the target is this export's own, to be closed once written. A failure of the target
 * is an ExportWriteError naming `outFile` (a StdoutClosedError for stdout's EPIPE), whatever
 * else failed after it.
 */
async function pipeInto<T>(outFile: string, out: PassThrough, target: Writable, end: boolean, write: (out: Writable) => Promise<T>): Promise<T> {
  let failure: NodeJS.ErrnoException | undefined;
  // Left on the target: stdout may report a failed write after the export has returned.
  target.on('error', (err) => {
    failure ??= err;
    out.destroy(err);
  });
  out.pipe(target, { end });
  try {
    const result = await write(out);
    out.end();
    await finished(out);
    // The target's own failure, even when it settles this wait before its 'error' event has come.
    await (end ? finished(target) : drained(target)).catch((err: NodeJS.ErrnoException) => {
      failure ??= err;
    });
    if (failure !== undefined) throw failure;
    return result;
  } catch (err) {
    if (failure !== undefined) throw targetFailure(outFile, target, failure);
    out.destroy();
    if (end) target.destroy();
    // The store's errors (an unknown body, a WARC with no bodies) go up as they are.
    throw err;
  }
}

/**
 * Writes straight into the target `open` gives (stdout, a device, a FIFO). A signal that ends
 * the process ends the export too, even while it waits for a FIFO's reader (atomic-file.ts).
 */
async function writeThrough<T>(outFile: string, open: (abort: AbortSignal) => Promise<Writable>, end: boolean, write: (out: Writable) => Promise<T>): Promise<T> {
  const out = new PassThrough();
  // Its error is thrown by the next writeChunk (or the open): an 'error' event with no listener would end the process instead.
  out.on('error', () => undefined);
  const abort = new AbortController();
  const stop = onEndingSignal((signal) => {
    const interrupted = new ExportInterruptedError(describeOut(outFile), signal, false);
    abort.abort(interrupted);
    out.destroy(interrupted);
  });
  try {
    let target: Writable;
    try {
      target = await open(abort.signal);
    } catch (err) {
      throw err === abort.signal.reason ? err : new ExportWriteError(outFile, err as NodeJS.ErrnoException, false);
    }
    return await pipeInto(outFile, out, target, end, write);
  } finally {
    stop();
  }
}

/** Writes an export to `outFile` (resolved by `resolveOut`), the way its kind of target needs. */
export function writeExport<T>(outFile: string, write: (out: Writable) => Promise<T>): Promise<T> {
  if (writesToStdout(outFile)) return writeThrough(outFile, () => Promise.resolve(process.stdout), false, write);
  let target: ExistingTarget | undefined;
  try {
    target = existingTarget(outFile);
  } catch (err) {
    return Promise.reject(new ExportWriteError(outFile, err as NodeJS.ErrnoException));
  }
  const path = target?.path;
  if (target?.kind === 'other' && path !== undefined) return writeThrough(outFile, (abort) => openTarget(path, abort), true, write);
  return writeAtomically(target?.path ?? outFile, write, outFile);
}
