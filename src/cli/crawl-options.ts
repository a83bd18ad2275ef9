/**
 * The crawl flags shared by `crawl`, `start`, `demo` and `schedule create` (made from the
 * schema's settings: setting-flags.ts), a `--config` file under them, and the crawl they ask
 * for, validated once by the schema with errors that name what the user typed.
 */
import { accessSync, constants, lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { isatty } from 'node:tty';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Command } from 'commander';
import { InvalidCrawlConfigError, parseCrawlConfig, type CrawlConfig, type CrawlInput } from '../shared/crawl-config';
import { fieldsFromFlags, flagOfField, settingOptions } from './setting-flags';
import { existingTarget, STDOUT_OUT, writesToStdout } from '../results/out-target';
import { partialFileOf, partialFileTaken } from '../results/atomic-file';
import { embeddedHistoryFile } from '../temporal/target';

/** Commander's values of the crawl flags, by attribute name (`--max-pages` is `maxPages`). */
export interface CrawlFlags {
  config?: string;
  [attribute: string]: unknown;
}

export function addCrawlOptions(command: Command): Command {
  command.option('--config <file.json>', 'crawl config file: the same JSON as `temporal workflow start --input`; flags override it');
  for (const option of settingOptions()) command.addOption(option);
  return command;
}

/** The crawl input of a `--config` file: a JSON object, read as is (the schema validates it). */
function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--config ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--config ${file}: not valid JSON (${(err as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError(`--config ${file}: must be a JSON object of crawl settings`);
  return parsed as Record<string, unknown>;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The config file's settings with the flags' over them; a nested object (`sitemaps`) is merged field by field. */
function mergeFlags(file: Record<string, unknown>, fromFlags: Record<string, unknown>): Record<string, unknown> {
  const merged = { ...file };
  for (const [key, value] of Object.entries(fromFlags)) merged[key] = isObject(value) && isObject(file[key]) ? { ...file[key], ...value } : value;
  return merged;
}

/** The dotted paths of the settings the flags set (`maxPages`, `sitemaps.urls`). */
function flagPaths(fromFlags: Record<string, unknown>): string[] {
  return Object.entries(fromFlags).flatMap(([key, value]) => (isObject(value) ? Object.keys(value).map((sub) => `${key}.${sub}`) : [key]));
}

/** The `--seeds-file` value that reads the list from stdin (seed-stdin.ts stages it). */
export const STDIN_SEEDS = '-';

/**
 * Fails with the command's usage error unless the crawl's seed file is a file this process can
 * read. Only for a crawl whose worker runs in this process: workers elsewhere read their own
 * copy of the path, which this machine may not have. Without it, the crawl would start and
 * fail in its first activity, with the worker's logs before the message.
 */
export function checkLocalSeedsFile({ seedsFile }: CrawlInput, flags: CrawlFlags): void {
  if (seedsFile === undefined || seedsFile === STDIN_SEEDS) return;
  const what = flags.seedsFile !== undefined ? '--seeds-file' : `${flags.config}: seedsFile`;
  const code = accessFailure(() => {
    if (statSync(seedsFile).isDirectory()) refuse('EISDIR');
    accessSync(seedsFile, constants.R_OK);
  });
  if (code !== null) throw new UsageError(`${what} ${seedsFile}: cannot read it (${code})`);
}

/**
 * Whether `file` (links resolved) is one crawlflow keeps in the data dir: a crawl's store or
 * body files (under `crawls/`), or the embedded server's history. An export renamed onto one
 * would destroy it, the crawl being exported included.
 */
function isCrawlflowData(file: string, dataDir: string): boolean {
  let root = resolve(dataDir);
  try {
    root = realpathSync(root);
  } catch {
    // A data dir that is not there holds nothing to protect.
  }
  const [first = '', ...rest] = relative(root, file).split(sep);
  if (first === '' || first === '..' || isAbsolute(first)) return false;
  return (first === 'crawls' && rest.length > 0) || first.startsWith(basename(embeddedHistoryFile(root)));
}

/**
 * Fails with the command's usage error unless the results file (`--out`, or the default in the
 * working directory when not `given`) can be written: standard output, a device or FIFO this
 * process may write, or a file (through its links) whose directory exists and this process may
 * write in, which is none of crawlflow's own files in `dataDir`, and whose partial file
 * (atomic-file.ts) nothing holds. The file is written when the crawl has ended, and a crawl of
 * hours should not learn only then that there is no place to put it.
 */
export function checkOutFile(out: string, given: boolean, dataDir: string): void {
  if (out === STDOUT_OUT) return;
  const what = given ? '--out' : 'results file (choose another with --out)';
  let file: string | undefined;
  let partial: string | undefined;
  const code = accessFailure(() => {
    const target = existingTarget(out);
    if (target?.kind === 'directory') refuse('EISDIR');
    if (target?.kind === 'other') return accessSync(target.path, constants.W_OK);
    const dir = realpathSync(dirname(target?.path ?? out));
    if (!statSync(dir).isDirectory()) refuse('ENOTDIR');
    accessSync(dir, constants.W_OK);
    file = join(dir, basename(target?.path ?? out));
    // Named as the export opens it (out-target.ts); anything there, even a dangling link, makes that open fail.
    const named = partialFileOf(target?.path ?? out);
    if (lstatSync(named, { throwIfNoEntry: false }) !== undefined) partial = named;
  });
  if (code !== null) throw new UsageError(`${what} ${out}: cannot write it (${code})`);
  if (file !== undefined && isCrawlflowData(file, dataDir)) {
    throw new UsageError(`${what} ${out}: lies among crawlflow's own files in ${resolve(dataDir)} (crawl stores and their bodies, the embedded server's history); choose a file outside them`);
  }
  // A path that leads to standard output (/dev/stdout redirected to a file) is written through, with no partial file.
  if (partial !== undefined && !writesToStdout(out)) throw new UsageError(`${what} ${out}: ${partialFileTaken(partial)}`);
}

/** The export formats that are binary: a WARC file is gzip members. */
const BINARY_FORMATS: ReadonlySet<string> = new Set(['warc']);

/**
 * Fails with the command's usage error when a binary export would go to standard output and
 * standard output is a terminal, as gzip refuses to: the bytes would garble the terminal (any
 * of them may be an escape sequence), and nobody meant to read them there. Checked before
 * anything starts, so a crawl of hours does not end by spraying its archive onto the screen.
 * `stdoutIsTerminal` is a parameter so the rule can be tested without a terminal.
 */
export function checkTerminalOut(out: string, format: string, stdoutIsTerminal: boolean = isatty(1)): void {
  if (!BINARY_FORMATS.has(format) || !stdoutIsTerminal || !writesToStdout(out)) return;
  throw new UsageError(`--format ${format}: refusing to write compressed data to a terminal; redirect standard output to a file or a pipe, or give --out <file>`);
}

/** `--out` of `crawl`, `demo` and `results`. */
export const OUT_HELP = 'results file (default <crawl-id>.jsonl, .csv or .warc.gz); - for standard output, which then carries only the results';

/** Fails a file-system check with `code`, as the system would for what the check found. */
function refuse(code: 'EISDIR' | 'ENOTDIR'): never {
  throw Object.assign(new Error(code), { code });
}

/** The error code of a file-system check that threw, or null when it passed. */
function accessFailure(check: () => void): string | null {
  try {
    check();
    return null;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err);
  }
}

/** The exit code of bad input, when nothing was started. */
export const EXIT_USAGE = 2;

export class UsageError extends Error {
  readonly code = 'usage';
}

/** A URL as it may be shown in a message: any user:password@ replaced. */
function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1***@');
}

/** The seed argument a schema field (`seeds.3`) names, as a message may show it; undefined for another field. */
export function seedOfField(field: string, seeds: readonly string[] | undefined): string | undefined {
  const index = /^seeds\.(\d+)$/.exec(field)?.[1];
  return index === undefined ? undefined : `seed "${withoutCredentials(seeds?.[Number(index)] ?? '')}"`;
}

/** Runs a parser of the crawl schema; its errors become usage errors (exit 2) that name what the user typed. */
export function validating<T>(parse: () => T, flagOf: (field: string) => string = (field) => field): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof InvalidCrawlConfigError) throw new UsageError(`${flagOf(err.field)}: ${err.reason}`);
    throw err;
  }
}

export interface CrawlRequest {
  /** What goes to the workflow: as the user wrote it, defaults left to the schema. */
  input: CrawlInput;
  config: CrawlConfig;
}

/**
 * The crawl the command line asks for: a config file (if any), the flags over it, and the
 * seed arguments (which replace the file's seeds when given), validated once. Errors name
 * what the user typed: the flag or seed argument, or else the config file and its field.
 */
export function crawlRequestFrom(seeds: string[], flags: CrawlFlags): CrawlRequest {
  const fromFlags = { ...(seeds.length > 0 ? { seeds } : {}), ...fieldsFromFlags(flags) };
  const input = mergeFlags(flags.config === undefined ? {} : readConfigFile(flags.config), fromFlags) as CrawlInput;
  // The workers read the seed file, maybe from another working directory: they get its absolute path.
  if (input.seedsFile !== undefined && input.seedsFile !== STDIN_SEEDS) input.seedsFile = resolve(input.seedsFile);
  const setByFlags = flagPaths(fromFlags);
  const config = validating(
    () => parseCrawlConfig(input),
    (field) => {
      const path = setByFlags.find((flagged) => field === flagged || field.startsWith(`${flagged}.`));
      if (path === undefined && flags.config !== undefined) return `${flags.config}: ${field}`;
      return seedOfField(field, input.seeds) ?? flagOfField(field) ?? field;
    },
  );
  return { input, config };
}
