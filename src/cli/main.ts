#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=8 --heap-growing-percent=50
/**
 * The crawlflow command line. Exit codes: 0 done, 1 failure, 2 invalid input (nothing was
 * started), 130 interrupted.
 *
 * Node runs it with young-generation semi-spaces of 8 MB instead of V8's 16 (the line above):
 * a worker's per-page garbage dies young either way, and the smaller nursery took a 20,000-page
 * crawl's peak RSS from 319-327 to 291-302 MB at the same CPU. glibc's malloc gets two arenas
 * instead of eight per core: the worker's sixteen threads (V8's and libuv's pools, the workflow
 * thread, the Temporal core's runtime) kept arenas of their own mostly empty, and two took the same
 * crawl's peak from 276-310 to 248-287 MB at the same CPU (bench/PROFILE.md).
 *
 * The old generation may grow by half of what the last full collection left before the next
 * one starts. V8 picks that factor from its GC speed, up to 4x, and on a long crawl it
 * sometimes let 47 MB of live heap swell to 160-180 MB of garbage: the worker's RSS rose from
 * about 340 to 410-450 MB for a few seconds, several times a run. At 1.5x, in the first four
 * minutes of the 1,000,000-page crawl, it stayed within 335-338 MB, with as many pages fetched.
 */
import { Command, CommanderError, Option } from 'commander';
import { WorkflowNotFoundError } from '@temporalio/client';
import { newCrawlId, startCrawl } from '../client/crawl-client';
import { UnknownCrawlError } from '../results/export-jsonl';
import { NoStoredBodiesError } from '../results/export-warc';
import { ExportInterruptedError, ExportWriteError } from '../results/atomic-file';
import { describeOut, resolveOut, StdoutClosedError, writesToStdout } from '../results/out-target';
import { BadBodyRefError } from '../bodies/body-store';
import { defaultOutFile, EXPORT_UNITS, type ExportFormat } from '../results/export-results';
import { CRAWLFLOW_VERSION, DEFAULT_RENDER_TASK_QUEUE, ENV, InvalidEnvError } from '../shared/names';
import { assertChromium, ChromiumMissingError, DEFAULT_CHROMIUM_PATH } from '../render/chromium-binary';
import { startSyntheticSite } from '../sites/synthetic-site';
import { embeddedHistoryFile, embeddedServerLog, NoTemporalServerError, resolveTemporalTarget, TemporalUnreachableError, usesExternalCluster } from '../temporal/target';
import { PortInUseError, TemporalCliMissingError } from '../temporal/dev-server';
import { startWorkerHost, type WorkerHostOptions } from '../workers/worker-host';
import { atLeastOne, commonOptions, integerBetween, dataDirOption, metricsAddressOption, metricsServedAt, print, printer, storeConfigOf, nonEmpty, crawlIdArgument, storeOption, withClient, type CommonFlags, type StoreFlags } from './command-kit';
import { StoreUrlError } from '../store/store-url';
import { MetricsListenError } from '../observability/metrics-server';
import { DamagedStoreError, StoreUnavailableError } from '../store/store-errors';
import { logger, traced, tracing } from './cli-context';
import { addControlCommands, formatOption } from './control-commands';
import { crawlStanding, CrawlEndedError, UpdateNotDoneError, UpdateNotTakenError } from './crawl-control';
import { counted, NoWorkerAnsweredError, summaryLines, UI_COMMAND, webUiLine, WorkflowTaskFailingError } from './crawl-report';
import { checkContentOptions } from './content-options';
import { addCrawlOptions, checkLocalSeedsFile, checkOutFile, checkTerminalOut, crawlRequestFrom, EXIT_USAGE, OUT_HELP, UsageError, type CrawlFlags } from './crawl-options';
import { CrawlFailedError, ResultsNotWrittenError, runCrawl, WorkerStoppedError, type CrawlRun } from './run-crawl';
import { addScheduleCommands } from './schedule-commands';
import { addResultsCommand, CrawlNotFinishedError } from './results-command';
import { CrawlNotFoundError } from './stored-status';
import { ScheduleExistsError, TriggerSkippedError, UnknownScheduleError } from '../client/schedules';
import { withStdinSeeds } from './seed-stdin';
import { DirectoryError } from '../shared/make-directory';

const EXIT_FAILURE = 1;
const EXIT_INTERRUPTED = 130;
/**
 * The reader of standard output went away: 128 + SIGPIPE, the status a shell shows for cat, grep
 * or jq ended by SIGPIPE there, so that `set -o pipefail` tells an export cut short from a whole
 * one as it does theirs. Node ignores SIGPIPE, so the code is set rather than the signal taken.
 */
const EXIT_STDOUT_CLOSED = 141;
/** The synthetic site's link graph is built in memory at start (about 50 MB per million pages). */
const DEMO_MAX_PAGES = 1_000_000;

/** Another program holds a port of the embedded dev server: say which settings move it. */
const PORT_IN_USE_HINT =
  `crawlflow: another process holds the embedded Temporal server's port or its Web UI's (7233, 8233 by default); ` +
  `stop it, or set ${ENV.devServerPort} and ${ENV.devServerUiPort} to free ports (see docs/troubleshooting.md)`;

interface CrawlCommandFlags extends CrawlFlags, StoreFlags, CommonFlags {
  id?: string;
  out?: string;
  format: ExportFormat;
  json?: boolean;
  progress: boolean;
  metricsAddress?: string;
}

function reportRun(run: CrawlRun, out: string, format: ExportFormat, json: boolean | undefined): void {
  const print = printer(writesToStdout(out));
  if (json) {
    print(JSON.stringify({ ...run.summary, out, lines: run.lines, uiUrl: run.uiUrl ?? null }));
    return;
  }
  for (const line of summaryLines(run.summary)) print(line);
  print(`  ${counted(run.lines, EXPORT_UNITS[format])} written to ${describeOut(out)}`);
  if (run.uiUrl) print(webUiLine(run.uiUrl, run.uiStopsWithCommand));
}

async function crawlCommand(seeds: string[], flags: CrawlCommandFlags): Promise<void> {
  const request = crawlRequestFrom(seeds, flags);
  const { config } = request;
  const store = storeConfigOf(flags);
  const crawlId = flags.id ?? newCrawlId();
  checkContentOptions(config, crawlId, flags.format, store);
  if (!usesExternalCluster()) checkLocalSeedsFile(request.input, flags);
  const out = resolveOut(flags.out ?? defaultOutFile(crawlId, flags.format));
  checkOutFile(out, flags.out !== undefined, flags.dataDir);
  checkTerminalOut(out, flags.format);
  const input = await withStdinSeeds(request.input, flags.dataDir, crawlId);
  await traced('crawlflow crawl', () =>
    runCrawl({
      crawlId,
      input,
      config,
      out,
      format: flags.format,
      progress: flags.progress && process.stderr.isTTY === true && !flags.json,
      taskQueue: flags.taskQueue,
      dataDir: flags.dataDir,
      store,
      metricsAddress: metricsServedAt(flags.metricsAddress),
      logger,
      clientPlugins: [tracing.plugin],
      report: (run) => reportRun(run, out, flags.format, flags.json),
    }),
  );
}

interface WorkerFlags extends StoreFlags, CommonFlags {
  metricsAddress: string;
}

/** Runs a worker host (crawl or render worker) until it is stopped, with the embedded server if needed. */
async function runWorker(flags: WorkerFlags, options: Pick<WorkerHostOptions, 'maxConcurrentBatches' | 'render'>): Promise<void> {
  const target = await resolveTemporalTarget({ dataDir: flags.dataDir, startEmbedded: true });
  try {
    const host = await startWorkerHost({
      target,
      taskQueue: flags.taskQueue,
      store: storeConfigOf(flags),
      metricsAddress: metricsServedAt(flags.metricsAddress),
      logger,
      ...options,
    });
    logger.info(
      { workerId: host.workerId, taskQueue: flags.taskQueue, store: host.store, metrics: host.metricsUrl, ui: target.uiUrl, render: options.render !== undefined },
      'worker ready',
    );
    await host.done;
  } finally {
    await target.close();
  }
}

class DevServerExitedError extends Error {
  readonly code = 'dev-server-exited';
}

/** Resolves on SIGINT or SIGTERM; rejects if the dev server exits first (it was killed, or failed). */
function untilStopped(serverExited: Promise<void>, logFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    // After a signal the promise is settled and this does nothing: the server exits because we stop it.
    void serverExited.then(() => reject(new DevServerExitedError(`the Temporal dev server exited; see ${logFile}`)));
  });
}

/**
 * `crawlflow ui`: the embedded dev server on the data dir's history, so past crawls' Web UI
 * pages open after the command that ran them has exited; up until SIGINT or SIGTERM.
 */
async function runUi(flags: { dataDir: string }): Promise<void> {
  if (usesExternalCluster()) {
    throw new UsageError(`${UI_COMMAND} serves the embedded dev server; TEMPORAL_ADDRESS (or a Temporal profile) names another server: open its Web UI`);
  }
  const target = await resolveTemporalTarget({ dataDir: flags.dataDir, startEmbedded: true });
  try {
    print(`Web UI: ${target.uiUrl ?? ''}`);
    if (target.serverExited === undefined) {
      print('  served by the Temporal dev server already running here');
      return;
    }
    print(`  history from ${embeddedHistoryFile(flags.dataDir)}; Ctrl-C stops it`);
    await untilStopped(target.serverExited, embeddedServerLog(flags.dataDir));
  } finally {
    await target.close();
  }
}

/** What `crawl` and `demo` share: the crawl's settings, its ID, and where its results go when it ends. */
function crawlToEndOptions(command: Command): Command {
  return storeOption(crawlOptions(command))
    .option('--out <file>', OUT_HELP)
    .addOption(formatOption())
    .option('--no-progress', 'no progress bar');
}

function crawlOptions(command: Command): Command {
  return commonOptions(addCrawlOptions(command))
    .option('--id <crawl-id>', 'crawl ID (= workflow ID); the same ID never crawls twice', crawlIdArgument)
    .option('--json', 'print a machine-readable summary on stdout (on stderr when --out - takes stdout)');
}

/** `crawl`, `demo` and `start`: the commands that start a crawl. */
function addCrawlCommands(program: Command): void {
  crawlToEndOptions(
    program
      .command('crawl')
      .description('crawl to the end and write its results: JSON Lines, CSV or a WARC file (--format)')
      .argument('[seed-url...]', 'where the crawl starts (or `seeds` in --config)'),
  )
    .addOption(metricsAddressOption({ description: "serve the in-process worker's /metrics here" }))
    .action(crawlCommand);

  crawlToEndOptions(program.command('demo').description('serve a synthetic site on loopback and crawl it (no network needed)'))
    .option('--pages <n>', `pages on the synthetic site (at most ${DEMO_MAX_PAGES.toLocaleString('en-US')})`, integerBetween(1, DEMO_MAX_PAGES), 500)
    .action(async (flags: CrawlCommandFlags & { pages: number }) => {
      const site = await startSyntheticSite({ pages: flags.pages });
      try {
        await crawlCommand([site.urlOf(0)], flags);
      } finally {
        await site.close();
      }
    });

  crawlOptions(
    program
      .command('start')
      .description('start a crawl and return at once (needs a running `crawlflow worker`)')
      .argument('[seed-url...]', 'where the crawl starts (or `seeds` in --config)'),
  ).action(startCommand);
}

/**
 * `start`: starts the crawl and returns. An ID in use starts nothing, and says so: a running
 * crawl goes on as it was started (exit 0, so that a start retried after a lost answer
 * succeeds), and an ended one is never run again (exit 1).
 */
async function startCommand(seeds: string[], flags: CrawlCommandFlags): Promise<void> {
  const crawlId = flags.id ?? newCrawlId();
  const input = await withStdinSeeds(crawlRequestFrom(seeds, flags).input, flags.dataDir, crawlId);
  await withClient(flags, async (client, web) => {
    const standing = await crawlStanding(client, crawlId);
    if (standing !== undefined && standing.outcome !== 'running') throw new CrawlEndedError(crawlId, standing.outcome, 'a crawl ID is never run again; choose another --id');
    if (standing === undefined) await traced('crawlflow start', () => startCrawl(client, crawlId, input, flags.taskQueue));
    else process.stderr.write(`crawlflow: crawl ${crawlId} is already running: nothing was started, and it goes on with the seeds and settings it was started with\n`);
    const uiUrl = web.url(crawlId);
    if (flags.json) print(JSON.stringify({ crawlId, started: standing === undefined, uiUrl: uiUrl ?? null }));
    else print(`${crawlId}${uiUrl ? `\n${uiUrl}` : ''}`);
  });
}

/** `worker`, `render-worker` and `ui`: the long-running processes. */
function addServiceCommands(program: Command): void {
  storeOption(commonOptions(program.command('worker').description('run a crawl worker (and the embedded dev server when TEMPORAL_ADDRESS is unset)')))
    .addOption(metricsAddressOption({ fromEnv: { name: ENV.metricsAddress, fallback: '127.0.0.1:9464' } }))
    .option('--max-concurrent-batches <n>', 'batch activities run at once by this worker', atLeastOne, 64)
    .action((flags: WorkerFlags & { maxConcurrentBatches: number }) => runWorker(flags, { maxConcurrentBatches: flags.maxConcurrentBatches }));

  storeOption(program.command('render-worker'))
    .description('run a render worker: renders the pages of crawls with `render` set in headless Chromium (polls the render task queue only)')
    .addOption(
      new Option('--task-queue <name>', 'the render task queue (the crawls\' render.taskQueue)').env(ENV.renderTaskQueue).default(DEFAULT_RENDER_TASK_QUEUE).argParser(nonEmpty),
    )
    .addOption(dataDirOption())
    .addOption(metricsAddressOption({ fromEnv: { name: ENV.renderMetricsAddress, fallback: '127.0.0.1:9465' } }))
    .option('--max-concurrent-pages <n>', 'pages this worker renders at once (one Chromium, one context per page)', atLeastOne, 4)
    .option('--chromium <path>', 'the Chromium executable', DEFAULT_CHROMIUM_PATH)
    .action((flags: WorkerFlags & { maxConcurrentPages: number; chromium: string }) =>
      runWorker(flags, { maxConcurrentBatches: flags.maxConcurrentPages, render: { executablePath: assertChromium(flags.chromium) } }),
    );

  program
    .command('ui')
    .description("serve the Temporal Web UI on the embedded dev server's history (ended crawls stay there for the namespace's retention, 24 h on the dev server) until interrupted")
    .addOption(dataDirOption())
    .action(runUi);
}

function buildProgram(): Command {
  const program = new Command('crawlflow')
    .description('A web crawler whose coordination is done by Temporal.')
    .version(CRAWLFLOW_VERSION, '-V, --version', 'print the version')
    .exitOverride();
  addCrawlCommands(program);
  addServiceCommands(program);
  addControlCommands(program);
  addResultsCommand(program);
  addScheduleCommands(program);
  return program;
}

async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version requests end here too, with exit code 0.
      return err.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    // No message: the reader left on purpose (`| head -1`), as it may with any command's output.
    if (err instanceof StdoutClosedError) return EXIT_STDOUT_CLOSED;
    if (err instanceof UsageError || err instanceof StoreUrlError || err instanceof InvalidEnvError) {
      process.stderr.write(`crawlflow: ${err.message}\n`);
      return EXIT_USAGE;
    }
    if (err instanceof WorkerStoppedError || err instanceof ExportInterruptedError || (err instanceof ResultsNotWrittenError && err.interrupted)) {
      process.stderr.write(`crawlflow: ${err.message}\n`);
      return EXIT_INTERRUPTED;
    }
    if (err instanceof PortInUseError) {
      process.stderr.write(`crawlflow: ${err.message}\n${PORT_IN_USE_HINT}\n`);
      return EXIT_FAILURE;
    }
    if (err instanceof MetricsListenError) {
      process.stderr.write(`crawlflow: ${err.message}: choose another with --metrics-address (port 0 takes any free one), or "off"\n`);
      return EXIT_FAILURE;
    }
    if (
      err instanceof CrawlFailedError ||
      err instanceof NoTemporalServerError ||
      err instanceof TemporalUnreachableError ||
      err instanceof DevServerExitedError ||
      err instanceof NoWorkerAnsweredError ||
      err instanceof WorkflowTaskFailingError ||
      err instanceof WorkflowNotFoundError ||
      err instanceof UnknownCrawlError ||
      err instanceof StoreUnavailableError ||
      err instanceof DamagedStoreError ||
      err instanceof ScheduleExistsError ||
      err instanceof UnknownScheduleError ||
      err instanceof TriggerSkippedError ||
      err instanceof NoStoredBodiesError ||
      err instanceof BadBodyRefError ||
      err instanceof ExportWriteError ||
      err instanceof ResultsNotWrittenError ||
      err instanceof UpdateNotDoneError ||
      err instanceof UpdateNotTakenError ||
      err instanceof CrawlEndedError ||
      err instanceof CrawlNotFinishedError ||
      err instanceof CrawlNotFoundError ||
      err instanceof ChromiumMissingError ||
      err instanceof TemporalCliMissingError ||
      err instanceof DirectoryError
    ) {
      process.stderr.write(`crawlflow: ${err.message}\n`);
      return EXIT_FAILURE;
    }
    process.stderr.write(`crawlflow: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return EXIT_FAILURE;
  }
}

main(process.argv)
  .then((code) => {
    logger.flush();
    process.exitCode = code;
  })
  // main() turns every command's error into an exit code; this only catches a failing flush.
  .catch((err: unknown) => {
    process.stderr.write(`crawlflow: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = EXIT_FAILURE;
  });
