/**
 * Where an export goes, as `--out` names it. A new name or a regular file gets the export
 * atomically (atomic-file.ts); through a symbolic link, the file it points to, so the link stays
 * a link. Standard output (`-`, or a path that leads to it: /dev/stdout, the file it was
 * redirected to) and anything else that exists and is no directory (a device such as /dev/null,
 * a FIFO) is written as it is: a rename onto it would replace it (run as root, /dev/null
 * itself), and what was written there cannot be taken back anyway.
 */
import { createWriteStream, fstatSync, realpathSync, statSync, type Stats } from 'node:fs';
import { resolve } from 'node:path';
import { PassThrough, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { ExportWriteError, writeAtomically } from './atomic-file';

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

/** Resolves once what was written to `target` before has been handed on (stdout, which this export does not end). */
function drained(target: Writable): Promise<void> {
  return new Promise((done, fail) => target.write('', (err) => (err ? fail(err) : done())));
}

/**
 * Writes straight into `target`, through a stream of the export's own: process.stdout neither
 * records its error nor can be destroyed by it, so its error (EPIPE: a reader such as `head`
 * went away; ENOSPC) is caught here and destroys the export's stream, whose next write then
 * throws it. `end`: the target is this export's own, to be closed once written. A failure of
 * the target is an ExportWriteError naming `outFile`, whatever else failed after it.
 */
async function writeThrough<T>(outFile: string, target: Writable, end: boolean, write: (out: Writable) => Promise<T>): Promise<T> {
  const out = new PassThrough();
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
    await (end ? finished(target) : drained(target));
    if (failure !== undefined) throw failure;
    return result;
  } catch (err) {
    if (failure !== undefined) throw new ExportWriteError(describeOut(outFile), failure, false);
    out.destroy();
    // The store's errors (an unknown body, a WARC with no bodies) go up as they are.
    throw err;
  }
}

/** Writes an export to `outFile` (resolved by `resolveOut`), the way its kind of target needs. */
export function writeExport<T>(outFile: string, write: (out: Writable) => Promise<T>): Promise<T> {
  if (writesToStdout(outFile)) return writeThrough(outFile, process.stdout, false, write);
  let target: ExistingTarget | undefined;
  try {
    target = existingTarget(outFile);
  } catch (err) {
    return Promise.reject(new ExportWriteError(outFile, err as NodeJS.ErrnoException));
  }
  if (target?.kind === 'other') return writeThrough(outFile, createWriteStream(target.path), true, write);
  return writeAtomically(target?.path ?? outFile, write, outFile);
}
