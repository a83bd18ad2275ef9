/**
 * The crawl flags shared by `crawl`, `start` and `demo`, and their translation into the one
 * crawl config schema. Flags are only parsed here; validation is the schema's.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { InvalidCrawlConfigError, parseCrawlConfig, SCOPES, type CrawlConfig, type CrawlInput } from '../shared/crawl-config';

export interface CrawlFlags {
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
};

/** Commander's parser for integer flags (its error names the flag). */
export function integer(value: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError('must be an integer.');
  return Number(value);
}

export function addCrawlOptions(command: Command): Command {
  return command
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
    .option('--allow-private-network', 'also fetch private, loopback and link-local addresses');
}

export function crawlInputFrom(seeds: string[], flags: CrawlFlags): CrawlInput {
  const input: Record<string, unknown> = {
    seeds,
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
  for (const key of Object.keys(input)) if (input[key] === undefined) delete input[key];
  return input as CrawlInput;
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

/** Validates CLI input with the crawl schema; errors name the flag, not the config field. */
export function validateCrawlInput(input: CrawlInput): CrawlConfig {
  return validating(
    () => parseCrawlConfig(input),
    (field) => (field.startsWith('seeds.') ? `seed "${withoutCredentials(input.seeds[Number(field.slice(6))])}"` : (FLAG_OF[field] ?? field)),
  );
}
