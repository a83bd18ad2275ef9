/** What every crawlflow command shares: common options, output, and a client for the configured server. */
import { Option, type Command } from 'commander';
import type { Client } from '@temporalio/client';
import { DEFAULT_TASK_QUEUE, ENV } from '../shared/names';
import { defaultDataDir } from '../temporal/project-paths';
import { connectClient, resolveTemporalTarget, workflowUiUrl } from '../temporal/target';
import { storeLocation, type StoreConfig } from '../store/store-url';
import { tracing } from './cli-context';

export interface CommonFlags {
  taskQueue: string;
  dataDir: string;
}

export function dataDirOption(): Option {
  return new Option('--data-dir <dir>', 'where crawl stores and the embedded server live').env(ENV.dataDir).default(defaultDataDir());
}

export function commonOptions(command: Command): Command {
  return command.addOption(new Option('--task-queue <name>', 'Temporal task queue').env(ENV.taskQueue).default(DEFAULT_TASK_QUEUE)).addOption(dataDirOption());
}

/** Flags of commands that open crawl stores (worker, crawl, demo, results). */
export interface StoreFlags extends CommonFlags {
  store?: string;
}

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

/** What a command's output needs to know of the Web UI: a crawl's link, and whether the server serving it stops when this command exits. */
export interface WebUi {
  url(crawlId: string): string | undefined;
  stopsWithCommand: boolean;
}

/**
 * Runs `action` with a client of the configured server. It never starts one unless
 * `startEmbedded` says so (the crawl must already exist); then, on the embedded default with
 * no server running, it starts the dev server on the data dir's history and stops it after.
 */
export async function withClient<T>(
  flags: CommonFlags,
  action: (client: Client, web: WebUi) => Promise<T>,
  { startEmbedded = false }: { startEmbedded?: boolean } = {},
): Promise<T> {
  const target = await resolveTemporalTarget({ dataDir: flags.dataDir, startEmbedded });
  try {
    const client = await connectClient(target, [tracing.plugin]);
    try {
      return await action(client, { url: (id) => workflowUiUrl(target, id), stopsWithCommand: target.startedHere });
    } finally {
      await client.connection.close();
    }
  } finally {
    await target.close();
  }
}
