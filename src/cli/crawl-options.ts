/**
 * The crawl flags shared by `crawl`, `start` and `demo`, and their translation into the one
 * crawl config schema. Flags are only parsed here; validation is the schema's.
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { FRONTIER_ORDERS, InvalidCrawlConfigError, parseCrawlConfig, RENDER_WAIT_UNTIL, SCOPES, type CrawlConfig, type CrawlInput } from '../shared/crawl-config';
import { POLITENESS_KEYS } from '../shared/politeness-config';
import { TRAILING_SLASH_RULES } from '../policy/normalize-url';

export interface CrawlFlags {
  config?: string;
  maxPages?: number;
  maxDepth?: number;
  scope?: string;
  frontierOrder?: string;
  politenessKey?: string;
  concurrency?: number;
  shards?: number;
  perHostConcurrency?: number;
  delayMs?: number;
  timeoutMs?: number;
  deadline?: string;
  ignoreRobots?: boolean;
  userAgent?: string;
  batchSize?: number;
  maxPagesPerHost?: number;
  allowPrivateNetwork?: boolean;
  include?: string[];
  exclude?: string[];
  sitemap?: string[];
  sitemapsFromRobots?: boolean;
  allowedContentType?: string[];
  ignoreCanonical?: boolean;
  stripParam?: string[];
  sortQuery?: boolean;
  trailingSlash?: string;
  storeBodies?: boolean;
  recrawlOf?: string;
  extract?: Record<string, string>;
  render?: string[];
  renderWaitUntil?: string;
  renderTimeoutMs?: number;
  renderTaskQueue?: string;
  renderMaxConcurrentPages?: number;
  header?: Record<string, string>;
  cookie?: Record<string, string>;
  proxy?: string;
  proxyAuthEnv?: string;
  autoThrottle?: boolean;
  autoThrottleTarget?: number;
  autoThrottleMaxDelayMs?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
}

/** Fields set by a repeatable `name=value` flag: an error names the flag and the entry. */
const NAMED_VALUE_FLAGS = new Set(['extract', 'headers', 'cookies']);

/** Config field -> the flag that sets it, so errors name what the user typed. */
const FLAG_OF: Record<string, string> = {
  seeds: '<seed-url...>',
  maxPages: '--max-pages',
  maxDepth: '--max-depth',
  scope: '--scope',
  frontierOrder: '--frontier-order',
  politenessKey: '--politeness-key',
  concurrency: '--concurrency',
  shards: '--shards',
  perHostConcurrency: '--per-host-concurrency',
  delayMs: '--delay-ms',
  timeoutMs: '--timeout-ms',
  deadline: '--deadline',
  userAgent: '--user-agent',
  batchSize: '--batch-size',
  maxPagesPerHost: '--max-pages-per-host',
  include: '--include',
  exclude: '--exclude',
  'sitemaps.urls': '--sitemap',
  'sitemaps.fromRobots': '--sitemaps-from-robots',
  allowedContentTypes: '--allowed-content-type',
  respectCanonical: '--ignore-canonical',
  'normalize.stripParams': '--strip-param',
  'normalize.sortQuery': '--sort-query',
  'normalize.trailingSlash': '--trailing-slash',
  recrawlOf: '--recrawl-of',
  extract: '--extract',
  'render.match': '--render',
  'render.waitUntil': '--render-wait-until',
  'render.timeoutMs': '--render-timeout-ms',
  'render.taskQueue': '--render-task-queue',
  'render.maxConcurrentPages': '--render-max-concurrent-pages',
  headers: '--header',
  cookies: '--cookie',
  proxy: '--proxy',
  proxyAuthFromEnv: '--proxy-auth-env',
  'autoThrottle.enabled': '--auto-throttle',
  'autoThrottle.targetConcurrency': '--auto-throttle-target',
  'autoThrottle.maxDelayMs': '--auto-throttle-max-delay-ms',
  'backoff.baseMs': '--backoff-base-ms',
  'backoff.maxMs': '--backoff-max-ms',
};

/** Commander's parser for integer flags (its error names the flag). */
export function integer(value: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError('must be an integer.');
  return Number(value);
}

/** Commander's parser for decimal flags. */
function decimal(value: string): number {
  const n = Number(value.trim());
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('must be a number.');
  return n;
}

/** A repeatable `name<separator>value` flag, collected into a record (the schema validates names and values). */
function namedValues(separator: string, form: string) {
  return (value: string, previous: Record<string, string> = {}): Record<string, string> => {
    const at = value.indexOf(separator);
    if (at <= 0) throw new InvalidArgumentError(`must be written as '${form}'.`);
    return { ...previous, [value.slice(0, at).trim()]: value.slice(at + 1).trim() };
  };
}

export function addCrawlOptions(command: Command): Command {
  return command
    .option('--config <file.json>', 'crawl config file: the same JSON as `temporal workflow start --input`; flags override it')
    .option('--max-pages <n>', 'stop after this many URLs (default 10000)', integer)
    .option('--max-depth <n>', 'follow links this many hops from a seed (default 20)', integer)
    .option('--scope <scope>', `which links to follow: ${SCOPES.join('|')} (default host)`)
    .option('--frontier-order <order>', `which of a host's URLs go first: ${FRONTIER_ORDERS.join('|')} (default opic)`)
    .option('--politeness-key <key>', `what delays and concurrency count per: ${POLITENESS_KEYS.join('|')} (default host)`)
    .option('--concurrency <n>', 'batches in flight for the whole crawl (default 8)', integer)
    .option('--shards <n>', 'shard workflows to split the crawl into by politeness key, 1-64 (default 1)', integer)
    .option('--per-host-concurrency <n>', 'batches in flight per host, across workers (default 2)', integer)
    .option('--delay-ms <ms>', 'minimum gap between requests to one host (default 0)', integer)
    .option('--timeout-ms <ms>', 'total time allowed for one request (default 30000)', integer)
    .option('--deadline <duration>', 'stop the crawl after this long, e.g. 90s, 10m, 2h')
    .option('--ignore-robots', 'do not obey robots.txt')
    .option('--user-agent <ua>', 'User-Agent header')
    .option('--batch-size <n>', 'URLs per batch activity (default 50)', integer)
    .option('--max-pages-per-host <n>', 'URLs per host at most (default 100000)', integer)
    .option('--allow-private-network', 'also fetch private, loopback and link-local addresses')
    .option('--include <pattern>', 'follow only URLs matching one of these globs (/path/**, https://host/**) or re:<regex> (repeatable)', collect)
    .option('--exclude <pattern>', 'never follow URLs matching this glob or re:<regex> (repeatable)', collect)
    .option('--sitemap <url>', 'read this sitemap or sitemap index (XML or .xml.gz) for URLs when the crawl starts (repeatable)', collect)
    .option('--sitemaps-from-robots', "also read the sitemaps the seed hosts' robots.txt lists")
    .option('--allowed-content-type <type>', 'media type to keep, e.g. text/html or text/* (repeatable; replaces the default text/html, application/xhtml+xml)', collect)
    .option('--ignore-canonical', 'do not treat pages whose rel=canonical names another URL as duplicates')
    .option('--strip-param <glob>', 'query parameter to drop from URLs, e.g. utm_* (repeatable; replaces the default tracking list)', collect)
    .option('--sort-query', 'sort query parameters by name, so their order does not make URLs distinct')
    .option('--trailing-slash <rule>', `trailing slashes in paths: ${TRAILING_SLASH_RULES.join('|')} (default keep)`)
    .option('--extract <name=selector>', 'a field to extract from every page (repeatable): name=css-selector, or name=css-selector @attribute', namedValues('=', 'name=selector'))
    .option('--store-bodies', 'keep the bodies of fetched HTML pages as WARC records (for `results --format warc`)')
    .option('--recrawl-of <crawl-id>', 'compare with an earlier crawl: conditional requests, new/changed/unchanged/gone per URL')
    .option('--render <pattern>', 'render URLs matching this pattern (same syntax as --include) in headless Chromium (repeatable)', collect)
    .option('--render-wait-until <event>', `when a rendered page is done: ${RENDER_WAIT_UNTIL.join('|')} (default load)`)
    .option('--render-timeout-ms <ms>', 'time to render one page (default 30000)', integer)
    .option('--render-task-queue <name>', 'task queue of render batches (default crawlflow-render)')
    .option('--render-max-concurrent-pages <n>', 'pages of this crawl rendered at once (default 2)', integer)
    .option('--header <name: value>', 'extra request header, repeatable (stored in workflow history: use headersFromEnv for secrets)', namedValues(':', 'Name: value'))
    .option('--cookie <name=value>', 'cookie sent with every request, repeatable (stored in workflow history: use cookiesFromEnv for secrets)', namedValues('=', 'name=value'))
    .option('--proxy <url>', 'send every request through this HTTP proxy, e.g. http://proxy.internal:3128')
    .option('--proxy-auth-env <VAR>', "environment variable of the workers holding the proxy's user:password")
    .option('--auto-throttle', 'adapt each host\'s delay to its measured latency (AutoThrottle)')
    .option('--auto-throttle-target <n>', 'AutoThrottle: requests in flight per host to aim for (default 1)', decimal)
    .option('--auto-throttle-max-delay-ms <ms>', 'AutoThrottle: the largest delay it sets (default 60000)', integer)
    .option('--backoff-base-ms <ms>', 'delay after a host\'s first failure, doubled per failure in a row; 0 = off (default 500)', integer)
    .option('--backoff-max-ms <ms>', 'longest per-host backoff delay (default 60000)', integer);
}

/** Commander's accumulator for repeatable flags. */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
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
    frontierOrder: flags.frontierOrder,
    politenessKey: flags.politenessKey,
    concurrency: flags.concurrency,
    shards: flags.shards,
    perHostConcurrency: flags.perHostConcurrency,
    delayMs: flags.delayMs,
    timeoutMs: flags.timeoutMs,
    deadline: flags.deadline,
    respectRobots: flags.ignoreRobots ? false : undefined,
    userAgent: flags.userAgent,
    batchSize: flags.batchSize,
    maxPagesPerHost: flags.maxPagesPerHost,
    allowPrivateNetwork: flags.allowPrivateNetwork,
    include: flags.include,
    exclude: flags.exclude,
    sitemaps: definedFields({ urls: flags.sitemap, fromRobots: flags.sitemapsFromRobots }),
    allowedContentTypes: flags.allowedContentType,
    respectCanonical: flags.ignoreCanonical ? false : undefined,
    normalize: definedFields({ stripParams: flags.stripParam, sortQuery: flags.sortQuery, trailingSlash: flags.trailingSlash }),
    storeBodies: flags.storeBodies,
    recrawlOf: flags.recrawlOf,
    extract: flags.extract,
    render: definedFields({
      match: flags.render,
      waitUntil: flags.renderWaitUntil,
      timeoutMs: flags.renderTimeoutMs,
      taskQueue: flags.renderTaskQueue,
      maxConcurrentPages: flags.renderMaxConcurrentPages,
    }),
    headers: flags.header,
    cookies: flags.cookie,
    proxy: flags.proxy,
    proxyAuthFromEnv: flags.proxyAuthEnv,
    autoThrottle: definedFields({ enabled: flags.autoThrottle, targetConcurrency: flags.autoThrottleTarget, maxDelayMs: flags.autoThrottleMaxDelayMs }),
    backoff: definedFields({ baseMs: flags.backoffBaseMs, maxMs: flags.backoffMaxMs }),
  };
  return definedFields(fields) ?? {};
}

/** The fields that are set, or undefined when none is. */
function definedFields(fields: Record<string, unknown>): Record<string, unknown> | undefined {
  const defined = Object.entries(fields).filter(([, value]) => value !== undefined);
  return defined.length === 0 ? undefined : Object.fromEntries(defined);
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
  const input = mergeFlags(flags.config === undefined ? {} : readConfigFile(flags.config), fromFlags) as CrawlInput;
  const setByFlags = flagPaths(fromFlags);
  const config = validating(
    () => parseCrawlConfig(input),
    (field) => {
      const path = setByFlags.find((flagged) => field === flagged || field.startsWith(`${flagged}.`));
      if (path === undefined && flags.config !== undefined) return `${flags.config}: ${field}`;
      if (field.startsWith('seeds.')) return `seed "${withoutCredentials(input.seeds[Number(field.slice(6))])}"`;
      const top = field.split('.')[0];
      // A repeatable name=value flag names the entry too (`--header Host`, `--extract title.selector`).
      if (path !== undefined && NAMED_VALUE_FLAGS.has(top)) return `${FLAG_OF[top]} ${field.slice(top.length + 1)}`;
      return FLAG_OF[path ?? field] ?? FLAG_OF[field.split('.').slice(0, 2).join('.')] ?? FLAG_OF[top] ?? field;
    },
  );
  return { input, config };
}
