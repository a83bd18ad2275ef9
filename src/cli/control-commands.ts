/**
 * Commands that address a running (or finished) crawl by its ID: each is one Temporal query,
 * signal or update, so the same can be done with `temporal workflow query|signal|update`.
 */
import { Option, type Command } from 'commander';
import { ApplicationFailure, WorkflowUpdateFailedError } from '@temporalio/client';
import { crawlHandle, type CrawlHandle } from '../client/crawl-client';
import { EXPORT_FORMATS } from '../results/export-results';
import { CRAWL_LIMITS, INVALID_CONFIG_FAILURE, parseLimitsChange, parseSeeds } from '../shared/crawl-config';
import { addSeedsUpdate, pauseSignal, resumeSignal, setLimitsUpdate, stopUpdate } from '../shared/messages';
import { commonOptions, crawlIdArgument, print, storeConfigOf, storeOption, withClient, type CommonFlags, type StoreFlags } from './command-kit';
import { UsageError, validating } from './crawl-options';
import { changeOption, fieldsFromFlags, flagOfField } from './setting-flags';
import { statusLines } from './crawl-report';
import { statusReport } from './stored-status';

/** `--format` of `results` and `crawl`: commander rejects other values, naming the flag. */
export function formatOption(): Option {
  return new Option('--format <format>', 'output format').choices(EXPORT_FORMATS).default('jsonl');
}

/** An update the workflow's validator rejected is bad input, like a bad flag. */
/** The crawl took a valid request and would not do it (`stop` on a sharded crawl, a step that failed): exit 1. */
export class UpdateNotDoneError extends Error {
  readonly code = 'update-not-done';
}

/**
 * Sends an update. A refusal of its input (the crawl's validator, type InvalidCrawlConfig) is a
 * usage error, as the same mistake in a flag is; any other failure is the crawl's.
 */
async function update<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (!(err instanceof WorkflowUpdateFailedError)) throw err;
    const message = err.cause?.message ?? err.message;
    if (err.cause instanceof ApplicationFailure && err.cause.type === INVALID_CONFIG_FAILURE) throw new UsageError(message);
    throw new UpdateNotDoneError(message);
  }
}

/** A command that names a crawl by its ID, with the options every command has. */
export function idCommand(program: Command, name: string, description: string): Command {
  return commonOptions(program.command(name).description(description).argument('<crawl-id>', 'the crawl (workflow) ID', crawlIdArgument));
}

export function addControlCommands(program: Command): void {
  storeOption(idCommand(program, 'status', "print a crawl's outcome and totals, or its progress while it runs; from its store once Temporal no longer keeps it"))
    .option('--json', 'machine-readable output')
    .action(async (crawlId: string, flags: StoreFlags & { json?: boolean }) => {
      const store = storeConfigOf(flags);
      // On the embedded default a finished crawl is in the data dir's history for as long as the namespace keeps it: serve it for this answer.
      await withClient(
        flags,
        async (client, web) => {
          const report = await statusReport(client, store, crawlId, web.url(crawlId));
          print(flags.json ? JSON.stringify(report) : statusLines(report, web.stopsWithCommand).join('\n'));
        },
        { startEmbedded: true },
      );
    });

  const simple: Array<[string, string, (handle: CrawlHandle) => Promise<unknown>]> = [
    ['pause', 'stop scheduling new batches (running ones finish)', (handle) => handle.signal(pauseSignal)],
    ['resume', 'resume a paused crawl', (handle) => handle.signal(resumeSignal)],
    ['stop', 'stop gracefully: running batches finish, the crawl ends as "stopped"', (handle) => update(() => handle.executeUpdate(stopUpdate))],
    ['cancel', 'cancel: in-flight requests are aborted, results so far are kept', (handle) => handle.cancel()],
  ];
  for (const [name, description, send] of simple) {
    idCommand(program, name, description).action(async (crawlId: string, flags: CommonFlags) => {
      await withClient(flags, async (client) => {
        await send(crawlHandle(client, crawlId));
        print(`${name}: ${crawlId}`);
      });
    });
  }

  idCommand(program, 'add-seeds', 'add seed URLs to a running crawl (they join its scope)')
    .argument('<url...>')
    .action(async (crawlId: string, urls: string[], flags: CommonFlags) => {
      const seeds = validating(() => parseSeeds(urls), () => '<url...>');
      await withClient(flags, async (client) => {
        const added = await update(() => crawlHandle(client, crawlId).executeUpdate(addSeedsUpdate, { args: [seeds] }));
        print(`${added} new URLs queued in ${crawlId}`);
      });
    });

  const setLimits = idCommand(program, 'set-limits', 'change concurrency and politeness of a running crawl');
  for (const field of CRAWL_LIMITS) setLimits.addOption(changeOption(field));
  setLimits.action(async (crawlId: string, flags: CommonFlags & Record<string, unknown>) => {
    const change = fieldsFromFlags(flags);
    if (Object.keys(change).length === 0) throw new UsageError(`set-limits: give at least one of ${CRAWL_LIMITS.map(flagOfField).join(', ')}`);
    validating(() => parseLimitsChange(change), (field) => flagOfField(field) ?? field);
    await withClient(flags, async (client) => {
      const limits = await update(() => crawlHandle(client, crawlId).executeUpdate(setLimitsUpdate, { args: [change] }));
      print(JSON.stringify(limits));
    });
  });
}
