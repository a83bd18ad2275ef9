/**
 * Commands that address a running (or finished) crawl by its ID: each is one Temporal query,
 * signal or update, so the same can be done with `temporal workflow query|signal|update`.
 */
import { Option, type Command } from 'commander';
import { WorkflowUpdateStage } from '@temporalio/client';
import { EXPORT_FORMATS } from '../results/export-results';
import { CRAWL_LIMITS, MAX_ADDED_SEEDS, parseLimitsChange, parseSeeds } from '../shared/crawl-config';
import { addSeedsUpdate, pauseSignal, resumeSignal, setLimitsUpdate, stopUpdate } from '../shared/messages';
import type { CrawlStatus } from '../shared/crawl-types';
import { crawlIdArgument, dataDirOption, print, storeConfigOf, storeOption, withClient, type DataDirFlags, type StoreFlags } from './command-kit';
import { seedOfField, UsageError, validating } from './crawl-options';
import { changeOption, fieldsFromFlags, flagOfField } from './setting-flags';
import { counted, limitsLine, statusLines } from './crawl-report';
import { statusReport } from './stored-status';
import { crawlStatusOf, sendToRunning, update, type RunningCrawl } from './crawl-control';

/** Updates are sent and waited for until a worker has taken them (crawl-control.ts). */
const TAKEN = { waitForStage: WorkflowUpdateStage.ACCEPTED } as const;

/** `--format` of `results` and `crawl`: commander rejects other values, naming the flag. */
export function formatOption(): Option {
  return new Option('--format <format>', 'output format').choices(EXPORT_FORMATS).default('jsonl');
}

/**
 * `<name> <crawl-id>`: a command that names a crawl by its ID (one that acts on it, `status`,
 * `results`). It has no `--task-queue`: the crawl is reached by its workflow ID, and the server
 * knows the queue it runs on (it is named when no worker answers); its store by its ID too.
 */
export function idCommand(program: Command, name: string, description: string): Command {
  return program.command(name).description(description).argument('<crawl-id>', 'the crawl (workflow) ID', crawlIdArgument).addOption(dataDirOption());
}

/** A command that is one signal, update or cancel request. */
interface SimpleCommand {
  name: string;
  description: string;
  send: (crawl: RunningCrawl) => Promise<unknown>;
  /** The crawl status in which the command changes nothing, and what it then adds to its line. */
  unchangedIn?: { status: CrawlStatus; note: string };
}

const SIMPLE_COMMANDS: readonly SimpleCommand[] = [
  {
    name: 'pause',
    description: 'pause: no new batches, and running ones stop after their current page, giving the rest back until `resume`',
    send: ({ handle }) => handle.signal(pauseSignal),
    unchangedIn: { status: 'paused', note: 'already paused' },
  },
  {
    name: 'resume',
    description: 'resume a paused crawl',
    send: ({ handle }) => handle.signal(resumeSignal),
    unchangedIn: { status: 'running', note: 'already running' },
  },
  {
    name: 'stop',
    description: 'stop gracefully: running batches finish their current page, the crawl ends as "stopped"',
    send: (crawl) => update(crawl, 'stop', (handle) => handle.startUpdate(stopUpdate, TAKEN)),
  },
  { name: 'cancel', description: 'cancel: in-flight requests are aborted, results so far are kept', send: ({ handle }) => handle.cancel() },
];

/**
 * A signal changes nothing when the crawl already stands as it asks: the command still sends it
 * and exits 0 (scripts may repeat it), but says so. The status is read just before.
 */
async function sendSimple(crawl: RunningCrawl, { send, unchangedIn }: SimpleCommand): Promise<string> {
  const unchanged = unchangedIn !== undefined && (await crawlStatusOf(crawl)) === unchangedIn.status;
  await send(crawl);
  return unchanged ? ` (${unchangedIn.note})` : '';
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

  for (const command of SIMPLE_COMMANDS) {
    idCommand(program, command.name, command.description).action(async (crawlId: string, flags: DataDirFlags) => {
      await withClient(flags, async (client) => {
        const note = await sendToRunning(client, crawlId, command.name, (crawl) => sendSimple(crawl, command));
        print(`${command.name}: ${crawlId}${note}`);
      });
    });
  }

  idCommand(program, 'add-seeds', 'add seed URLs to a running crawl (they join its scope)')
    .argument('<url...>', `absolute http(s) URLs, at most ${MAX_ADDED_SEEDS} at once`)
    .action(async (crawlId: string, urls: string[], flags: DataDirFlags) => {
      const seeds = validating(() => parseSeeds(urls), (field) => seedOfField(field, urls) ?? '<url...>');
      await withClient(flags, async (client) => {
        const added = await sendToRunning(client, crawlId, 'add-seeds', (crawl) =>
          update(crawl, 'seeds', (handle) => handle.startUpdate(addSeedsUpdate, { args: [seeds], ...TAKEN })),
        );
        // The frontier takes a URL once: the others were in it already, or repeated in the arguments.
        const known = seeds.length - added;
        print(`${counted(added, 'new URL')} queued in ${crawlId}${known > 0 ? `, ${known} already known to it` : ''}`);
      });
    });

  addSetLimitsCommand(program);
}

/** `set-limits`: the limits now in force as a line, or with `--json` as the update returned them. */
function addSetLimitsCommand(program: Command): void {
  const setLimits = idCommand(program, 'set-limits', 'change concurrency and politeness of a running crawl; prints the limits now in force');
  for (const field of CRAWL_LIMITS) setLimits.addOption(changeOption(field));
  setLimits.option('--json', 'the limits now in force as a JSON object');
  setLimits.action(async (crawlId: string, { json, ...flags }: DataDirFlags & { json?: boolean } & Record<string, unknown>) => {
    const change = fieldsFromFlags(flags);
    if (Object.keys(change).length === 0) throw new UsageError(`set-limits: give at least one of ${CRAWL_LIMITS.map(flagOfField).join(', ')}`);
    validating(() => parseLimitsChange(change), (field) => flagOfField(field) ?? field);
    await withClient(flags, async (client) => {
      const limits = await sendToRunning(client, crawlId, 'set-limits', (crawl) =>
        update(crawl, 'new limits', (handle) => handle.startUpdate(setLimitsUpdate, { args: [change], ...TAKEN })),
      );
      print(json === true ? JSON.stringify(limits) : limitsLine(crawlId, limits));
    });
  });
}
