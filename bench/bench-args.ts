/**
 * The bench commands' flags: numbers checked once, and bad input reported as a usage line
 * with the flag's name, not as a stack trace or a NaN that surfaces minutes into a run.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Wrong flags or values: the command prints the message and its usage, and exits with 2. */
export class BenchUsageError extends Error {
  readonly code = 'bench-usage';
}

/** A whole number of at least `min` given to `flag`. */
export function wholeNumber(flag: string, text: string, min = 1): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isInteger(value) || value < min) {
    throw new BenchUsageError(`${flag}: expected ${min === 1 ? 'a positive whole number' : `a whole number of at least ${min}`}, got "${text}"`);
  }
  return value;
}

/**
 * `parseArgs` in strict mode, its errors (an unknown flag, a missing value) as usage errors.
 * Every command also takes `--help`, which `runBenchCommand` answers before `main` runs.
 */
export function parseFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs<T>({ ...config, options: { ...config.options, help: { type: 'boolean' } }, strict: true });
  } catch (err) {
    throw new BenchUsageError((err as Error).message);
  }
}

/**
 * Runs a bench command's `main`: `--help` prints the usage; usage errors print their message
 * and the usage (exit 2), anything else its stack (exit 1).
 */
export function runBenchCommand(main: () => Promise<void> | void, usage: string): void {
  if (process.argv.includes('--help')) {
    process.stdout.write(usage);
    return;
  }
  Promise.resolve()
    .then(main)
    .catch((err: unknown) => {
      if (err instanceof BenchUsageError) {
        process.stderr.write(`bench: ${err.message}\n\n${usage}`);
        process.exitCode = 2;
        return;
      }
      process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    });
}
