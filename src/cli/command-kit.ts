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

export function commonOptions(command: Command): Command {
  return command
    .addOption(new Option('--task-queue <name>', 'Temporal task queue').env(ENV.taskQueue).default(DEFAULT_TASK_QUEUE))
    .addOption(new Option('--data-dir <dir>', 'where crawl stores and the embedded server live').env(ENV.dataDir).default(defaultDataDir()));
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

/** Runs `action` with a client of the configured server (never starts one: the crawl must already exist). */
export async function withClient<T>(flags: CommonFlags, action: (client: Client, uiUrl: (id: string) => string | undefined) => Promise<T>): Promise<T> {
  const target = await resolveTemporalTarget({ dataDir: flags.dataDir, startEmbedded: false });
  const client = await connectClient(target, [tracing.plugin]);
  try {
    return await action(client, (id) => workflowUiUrl(target, id));
  } finally {
    await client.connection.close();
  }
}
