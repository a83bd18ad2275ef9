/** What every crawlflow command shares: common options, output, and a client for the configured server. */
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Client } from '@temporalio/client';
import { DEFAULT_TASK_QUEUE, ENV } from '../shared/names';
import { defaultDataDir } from '../temporal/project-paths';
import { connectClient, resolveTemporalTarget, workflowUiUrl } from '../temporal/target';
import { storeLocation, type StoreConfig } from '../store/store-url';
import { tracing } from './cli-context';
import { parseHostPort } from '../observability/metrics-server';
import { integer } from './setting-flags';
import { crawlFileName, invalidCrawlId, SCHEDULED_RUN_SUFFIX } from '../shared/crawl-id';
import { UsageError } from './crawl-options';
import { DirectoryError, makeDirectory } from '../shared/make-directory';

/** Flags of every command that talks to Temporal. */
export interface DataDirFlags {
  dataDir: string;
}

/** Flags of the commands that start crawls or run workers on a task queue (`commonOptions`). */
export interface CommonFlags extends DataDirFlags {
  taskQueue: string;
}

export function dataDirOption(): Option {
  return new Option('--data-dir <dir>', 'where crawl stores and the embedded server live').env(ENV.dataDir).default(defaultDataDir()).argParser(dataDirArgument);
}

/**
 * Commander's parser for a data directory named by the flag or the environment: it is made
 * here, so that a path that cannot hold the crawl's files is one usage error before anything
 * starts, not a failure inside the dev server's or a worker's start-up.
 */
function dataDirArgument(value: string): string {
  try {
    makeDirectory(nonEmpty(value));
  } catch (err) {
    if (err instanceof DirectoryError) throw new UsageError(`data directory (--data-dir or ${ENV.dataDir}): ${err.message}`);
    throw err;
  }
  return value;
}

/**
 * Commander's parser for a name that must not be empty or blank: a task queue (Temporal refuses
 * an empty one deep in a worker's start-up), a crawl or schedule ID.
 */
export function nonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty.');
  return value;
}

/**
 * A commander parser for an ID that names crawls: not blank, and what crawl-id.ts allows.
 * Its error is a usage error of its own, not commander's, which would echo the value as it is,
 * line breaks and all.
 */
function idParser(what: string, reserve: number): (value: string) => string {
  return (value) => {
    const invalid = invalidCrawlId(nonEmpty(value), what, reserve);
    if (invalid !== undefined) throw new UsageError(invalid.message);
    return value;
  };
}

/** Commander's parser for a crawl ID (`--id`, `<crawl-id>`). */
export const crawlIdArgument = idParser('crawl ID', 0);

/** Commander's parser for a schedule ID: the crawl IDs it makes get a time appended, which their file names must have room for. */
export const scheduleIdArgument = idParser('schedule ID', crawlFileName(SCHEDULED_RUN_SUFFIX).length);

export function commonOptions(command: Command): Command {
  return command
    .addOption(new Option('--task-queue <name>', 'Temporal task queue').env(ENV.taskQueue).default(DEFAULT_TASK_QUEUE).argParser(nonEmpty))
    .addOption(dataDirOption());
}

/** Flags of commands that open crawl stores (worker, crawl, demo, results, status). */
export interface StoreFlags extends DataDirFlags {
  store?: string;
}

/** Commander's parser for an integer from `min` to `max` (its error names the flag). */
export function integerBetween(min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    const n = integer(value);
    if (n < min) throw new InvalidArgumentError(`must be at least ${min.toLocaleString('en-US')}.`);
    if (n > max) throw new InvalidArgumentError(`must be at most ${max.toLocaleString('en-US')}.`);
    return n;
  };
}

/** Commander's parser for a count of at least 1. */
export const atLeastOne = integerBetween(1);

/** Commander's parser for a `/metrics` address: host:port (port 0 for any free one), or "off". */
function metricsAddress(value: string): string {
  if (value === 'off') return value;
  try {
    parseHostPort(value);
  } catch {
    throw new InvalidArgumentError('must be host:port (an IPv6 host in brackets), or "off".');
  }
  return value;
}

/**
 * `--metrics-address`: for a worker command, from the variable `fromEnv.name` when the flag is
 * absent, else `fromEnv.fallback`; for `crawl`, with no default (its in-process worker serves
 * no /metrics unless asked).
 */
export function metricsAddressOption({ description = '/metrics endpoint, or "off"', fromEnv }: { description?: string; fromEnv?: { name: string; fallback: string } }): Option {
  const option = new Option('--metrics-address <host:port>', description).argParser(metricsAddress);
  return fromEnv === undefined ? option : option.env(fromEnv.name).default(fromEnv.fallback);
}

/** Where `--metrics-address` asks for /metrics: null when it is "off" or absent. */
export const metricsServedAt = (address: string | undefined): string | null => (address === undefined || address === 'off' ? null : address);

export function storeOption(command: Command): Command {
  return command.addOption(
    new Option('--store <url>', 'frontier store: postgres://user:password@host:5432/db shared by workers on many machines (default: SQLite files under --data-dir)').env(
      ENV.storeUrl,
    ),
  );
}

/** The store configuration of a command, checked at once: a bad URL stops it before anything starts. */
export function storeConfigOf(flags: StoreFlags): StoreConfig {
  const config = { dataDir: flags.dataDir, storeUrl: flags.store };
  storeLocation(config);
  return config;
}

export function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** `print`, or its stderr twin when stdout carries a command's results (`--out -`). */
export function printer(stdoutTaken: boolean): (line: string) => void {
  return stdoutTaken ? (line) => process.stderr.write(`${line}\n`) : print;
}

/** What a command's output needs to know of the Web UI: a crawl's link, and whether the server serving it stops when this command exits. */
export interface WebUi {
  url(crawlId: string): string | undefined;
  stopsWithCommand: boolean;
}

/**
 * Runs `action` with a client of the configured server. It never starts one unless
 * `startEmbedded` says so (the crawl must already exist); then, on the embedded default with
 * no server running, it starts the dev server on the data dir's history and stops it after.
 * `connectTimeoutMs` bounds the wait for a server that does not answer (see `connectClient`).
 */
export async function withClient<T>(
  flags: DataDirFlags,
  action: (client: Client, web: WebUi) => Promise<T>,
  { startEmbedded = false, connectTimeoutMs }: { startEmbedded?: boolean; connectTimeoutMs?: number } = {},
): Promise<T> {
  const target = await resolveTemporalTarget({ dataDir: flags.dataDir, startEmbedded });
  try {
    const client = await connectClient(target, [tracing.plugin], connectTimeoutMs);
    try {
      return await action(client, { url: (id) => workflowUiUrl(target, id), stopsWithCommand: target.startedHere });
    } finally {
      await client.connection.close();
    }
  } finally {
    await target.close();
  }
}
