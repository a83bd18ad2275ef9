/**
 * The crawl flags shared by `crawl`, `start` and `demo`, and their translation into the one
 * crawl config schema. Flags are only parsed here; validation is the schema's.
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { InvalidCrawlConfigError, parseCrawlConfig, RENDER_WAIT_UNTIL, SCOPES, type CrawlConfig, type CrawlInput } from '../shared/crawl-config';

export interface CrawlFlags {
  config?: string;
  maxPages?: number;
  maxDepth?: number;
  scope?: string;
  concurrency?: number;
  perHostConcurrency?: number;
  delayMs?: number;
  timeoutMs?: number;
  deadline?: string;
  ignoreRobots?: boolean;
  userAgent?: string;
  batchSize?: number;
  maxPagesPerHost?: number;
  allowPrivateNetwork?: boolean;
  render?: string[];
  renderWaitUntil?: string;
  renderTimeoutMs?: number;
  renderTaskQueue?: string;
  renderMaxConcurrentPages?: number;
}

/** Config field -> the flag that sets it, so errors name what the user typed. */
const FLAG_OF: Record<string, string> = {
  seeds: '<seed-url...>',
  maxPages: '--max-pages',
  maxDepth: '--max-depth',
  scope: '--scope',
  concurrency: '--concurrency',
  perHostConcurrency: '--per-host-concurrency',
  delayMs: '--delay-ms',
  timeoutMs: '--timeout-ms',
  deadline: '--deadline',
  userAgent: '--user-agent',
  batchSize: '--batch-size',
  maxPagesPerHost: '--max-pages-per-host',
  'render.match': '--render',
  'render.waitUntil': '--render-wait-until',
  'render.timeoutMs': '--render-timeout-ms',
  'render.taskQueue': '--render-task-queue',
  'render.maxConcurrentPages': '--render-max-concurrent-pages',
};

/** Commander's parser for integer flags (its error names the flag). */
export function integer(value: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError('must be an integer.');
  return Number(value);
}

export function addCrawlOptions(command: Command): Command {
  return command
    .option('--config <file.json>', 'crawl config file: the same JSON as `temporal workflow start --input`; flags override it')
    .option('--max-pages <n>', 'stop after this many URLs (default 10000)', integer)
    .option('--max-depth <n>', 'follow links this many hops from a seed (default 20)', integer)
    .option('--scope <scope>', `which links to follow: ${SCOPES.join('|')} (default host)`)
    .option('--concurrency <n>', 'batches in flight for the whole crawl (default 8)', integer)
    .option('--per-host-concurrency <n>', 'batches in flight per host, across workers (default 2)', integer)
    .option('--delay-ms <ms>', 'minimum gap between requests to one host (default 0)', integer)
    .option('--timeout-ms <ms>', 'total time allowed for one request (default 30000)', integer)
    .option('--deadline <duration>', 'stop the crawl after this long, e.g. 90s, 10m, 2h')
    .option('--ignore-robots', 'do not obey robots.txt')
    .option('--user-agent <ua>', 'User-Agent header')
    .option('--batch-size <n>', 'URLs per batch activity (default 50)', integer)
    .option('--max-pages-per-host <n>', 'URLs per host at most (default 100000)', integer)
    .option('--allow-private-network', 'also fetch private, loopback and link-local addresses')
    .option('--render <pattern>', 'render URLs matching this glob or /regex/ in headless Chromium (repeatable)', (value: string, previous: string[] = []) => [...previous, value])
    .option('--render-wait-until <event>', `when a rendered page is done: ${RENDER_WAIT_UNTIL.join('|')} (default load)`)
    .option('--render-timeout-ms <ms>', 'time to render one page (default 30000)', integer)
    .option('--render-task-queue <name>', 'task queue of render batches (default crawlflow-render)')
    .option('--render-max-concurrent-pages <n>', 'pages of this crawl rendered at once (default 2)', integer);
}

/** The `render` fields the flags set (absent ones left out); undefined when no render flag was given. */
function renderFieldsFromFlags(flags: CrawlFlags): Record<string, unknown> | undefined {
  const fields: Record<string, unknown> = {
    match: flags.render,
    waitUntil: flags.renderWaitUntil,
    timeoutMs: flags.renderTimeoutMs,
    taskQueue: flags.renderTaskQueue,
    maxConcurrentPages: flags.renderMaxConcurrentPages,
  };
  for (const key of Object.keys(fields)) if (fields[key] === undefined) delete fields[key];
  return Object.keys(fields).length > 0 ? fields : undefined;
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

/** The crawl fields the flags and seed arguments set (absent ones left out). */
function fieldsFromFlags(seeds: string[], flags: CrawlFlags): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    seeds: seeds.length > 0 ? seeds : undefined,
    maxPages: flags.maxPages,
    maxDepth: flags.maxDepth,
    scope: flags.scope,
    concurrency: flags.concurrency,
    perHostConcurrency: flags.perHostConcurrency,
    delayMs: flags.delayMs,
    timeoutMs: flags.timeoutMs,
    deadline: flags.deadline,
    respectRobots: flags.ignoreRobots ? false : undefined,
    userAgent: flags.userAgent,
    batchSize: flags.batchSize,
    maxPagesPerHost: flags.maxPagesPerHost,
    allowPrivateNetwork: flags.allowPrivateNetwork,
  };
  for (const key of Object.keys(fields)) if (fields[key] === undefined) delete fields[key];
  return fields;
}

export class UsageError extends Error {
  readonly code = 'usage';
}

/** A URL as it may be shown in a message: any user:password@ replaced. */
function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1***@');
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
  const fromFlags = fieldsFromFlags(seeds, flags);
  const fromFile = flags.config === undefined ? {} : readConfigFile(flags.config);
  const renderFlags = renderFieldsFromFlags(flags);
  // Render flags change single fields of the file's `render`, not the whole object.
  if (renderFlags) fromFlags.render = { ...(typeof fromFile.render === 'object' ? fromFile.render : {}), ...renderFlags };
  const input = { ...fromFile, ...fromFlags } as CrawlInput;
  const setByFlag = (field: string): boolean => {
    const [top, sub] = field.split('.');
    return top === 'render' ? renderFlags !== undefined && (sub === undefined || sub in renderFlags) : top in fromFlags;
  };
  const config = validating(
    () => parseCrawlConfig(input),
    (field) => {
      const [top, sub] = field.split('.');
      if (!setByFlag(field) && flags.config !== undefined) return `${flags.config}: ${field}`;
      if (field.startsWith('seeds.')) return `seed "${withoutCredentials(input.seeds[Number(field.slice(6))])}"`;
      return FLAG_OF[`${top}.${sub}`] ?? FLAG_OF[top] ?? field;
    },
  );
  return { input, config };
}
