/**
 * `mkdir -p` that fails where it cannot create, instead of hanging.
 *
 * Why not `mkdirSync(dir, { recursive: true })`: on Node 20 it loops for ever when a parent
 * exists but refuses to hold a child with ENOENT, as procfs and sysfs do (`/proc/x`). A data
 * directory pointed there by mistake hung the CLI with no word. Here each missing level is made
 * on its own, so the first refusal is the error.
 */
import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** A directory that could not be made or is not one; `reason` is the system's code and words. */
export class DirectoryError extends Error {
  readonly code = 'directory-unusable';
  constructor(
    readonly dir: string,
    readonly reason: string,
  ) {
    super(`cannot use ${JSON.stringify(dir)} as a directory: ${reason}`);
  }
}

/** `ENOTDIR: not a directory, mkdir '/a/b'` → `ENOTDIR (not a directory)`. */
function reasonOf(err: unknown): string {
  const { code, message } = err as NodeJS.ErrnoException;
  const words = message.replace(/^[A-Z]+: /, '').replace(/, \w+ '.*'$/, '');
  return code ? `${code} (${words})` : words;
}

/**
 * Creates `dir` and any missing parents; throws `DirectoryError` if a level cannot be made, or
 * `dir` is not a directory this process may write into (every caller writes files there).
 */
export function makeDirectory(dir: string): void {
  const missing: string[] = [];
  for (let at = resolve(dir); !existsSync(at); at = dirname(at)) {
    missing.push(at);
    if (dirname(at) === at) break;
  }
  for (const level of missing.reverse()) {
    try {
      mkdirSync(level);
    } catch (err) {
      // Another process may make the same level at the same time.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new DirectoryError(dir, reasonOf(err));
    }
  }
  if (!statSync(dir).isDirectory()) throw new DirectoryError(dir, 'ENOTDIR (not a directory)');
  try {
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw new DirectoryError(dir, reasonOf(err));
  }
}
