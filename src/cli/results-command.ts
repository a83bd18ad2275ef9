/**
 * `crawlflow results`: writes a crawl's records from its store and, when they are not the
 * crawl's whole result, says so on stderr in one line: the crawl is still running, or it ended
 * early (stopped, cancelled, failed, terminated). The store is the source of truth: a crawl
 * records its end there as its last step. Only when it recorded none is Temporal asked,
 * briefly, whether the crawl still runs or ended without recording it; with no answer the
 * line says it cannot tell which. The export is written either way, with exit code 0 (a look
 * at a running crawl's records so far is a use of its own); `--require-finished` refuses
 * instead, for scripts that must only ever take a crawl's whole result.
 */
import type { Command } from 'commander';
import type { Client } from '@temporalio/client';
import { storedChangeSummary } from '../results/change-summary';
import { defaultOutFile, EXPORT_UNITS, exportResults, type ExportFormat } from '../results/export-results';
import { isFinished, readStoredProgress, type StoredProgress } from '../results/stored-progress';
import type { CrawlEnd } from '../store/frontier-store';
import { UnknownCrawlError } from '../store/store-backend';
import type { StoreConfig } from '../store/store-url';
import { describeOut, resolveOut, writesToStdout } from '../results/out-target';
import { printer, storeConfigOf, storeOption, withClient, type DataDirFlags, type StoreFlags } from './command-kit';
import { checkOutFile, checkTerminalOut, OUT_HELP } from './crawl-options';
import { formatOption, idCommand } from './control-commands';
import { counted, workflowOutcome, type WorkflowOutcome } from './crawl-report';

/** How long `results` waits for Temporal's word on a crawl whose store recorded no end, to connect and then to answer. */
const ASK_TEMPORAL_MS = 3_000;

/** `--require-finished` and the crawl is not finished: nothing was written. */
export class CrawlNotFinishedError extends Error {
  readonly code = 'crawl-not-finished';
}

/** How a crawl whose export is not its whole result stands. */
type Unfinished = { kind: 'running' } | { kind: 'unknown' } | { kind: 'ended-early'; how: string; recorded: boolean };

/** The line's words for the ends a crawl was not meant to reach, the store's and Temporal's. */
const ENDED_EARLY: Readonly<Record<string, string>> = {
  stopped: 'stopped by a user',
  cancelled: 'cancelled',
  failed: 'failed',
  terminated: 'terminated',
  'timed-out': 'timed out',
};

/** An end, as the line tells it; undefined for one the crawl was meant to reach. `recorded`: the store's (its frontier counts are final). */
function endedEarly(status: string, reason: string | null, recorded: boolean): Unfinished | undefined {
  if (isFinished(status)) return undefined;
  const name = ENDED_EARLY[status] ?? status;
  return { kind: 'ended-early', how: reason === null ? name : `${name} (${reason})`, recorded };
}

const failureText = ({ failure }: CrawlEnd): string | null => (failure === null ? null : `${failure.code}: ${failure.message}`);

/**
 * Temporal's word on the crawl, or undefined when there is none to be had in time: no server,
 * none that answers, no such workflow on it. The store's word stands then.
 */
async function askTemporal(flags: DataDirFlags, crawlId: string): Promise<WorkflowOutcome | undefined> {
  try {
    const ask = (client: Client) => client.connection.withDeadline(Date.now() + ASK_TEMPORAL_MS, () => workflowOutcome(client, crawlId));
    return await withClient(flags, ask, { connectTimeoutMs: ASK_TEMPORAL_MS });
  } catch {
    return undefined;
  }
}

/**
 * The crawl's progress as its store records it. A store with no such crawl may still have a
 * crawl on the Temporal server: one whose input was refused ended before it opened a store, and
 * one still opening has none yet. Its end is then added to the one line, so a user does not
 * take the crawl for never started.
 */
async function progressOrWhyNone(flags: ResultsFlags, store: StoreConfig, crawlId: string): Promise<StoredProgress> {
  try {
    return await readStoredProgress(store, crawlId);
  } catch (err) {
    if (!(err instanceof UnknownCrawlError)) throw err;
    const workflow = await askTemporal(flags, crawlId);
    if (workflow === undefined) throw err;
    const reason = 'reason' in workflow && workflow.reason !== null ? ` (${workflow.reason})` : '';
    throw new UnknownCrawlError(`${err.message}; the Temporal server has the crawl as ${workflow.outcome}${reason}`);
  }
}

/** How the crawl stands when its export is not its whole result; undefined when it is. */
async function unfinishedStanding(flags: DataDirFlags, crawlId: string, { end }: StoredProgress): Promise<Unfinished | undefined> {
  if (end !== undefined) return endedEarly(end.status, failureText(end), true);
  const workflow = await askTemporal(flags, crawlId);
  if (workflow === undefined) return { kind: 'unknown' };
  if (workflow.outcome === 'running') return { kind: 'running' };
  return endedEarly(workflow.outcome, workflow.reason, false);
}

/** Where the unfinished crawl stands and how far it got, in the words the line starts with. */
function standingText(crawlId: string, standing: Unfinished, { processed, queued }: StoredProgress): string {
  const pages = counted(processed, 'page');
  switch (standing.kind) {
    case 'running':
      return `crawl "${crawlId}" is still running — ${pages} so far`;
    case 'unknown':
      return `crawl "${crawlId}" has recorded no end: it is still running, or it ended without recording one (terminated, or crawled by an earlier release) — ${pages} so far`;
    case 'ended-early':
      return `crawl "${crawlId}" ended early: ${standing.how} — ${pages}${standing.recorded ? `, ${counted(queued, 'URL')} left in the frontier` : ''}`;
  }
}

interface ResultsFlags extends StoreFlags {
  out?: string;
  format: ExportFormat;
  requireFinished?: boolean;
}

async function writeResults(crawlId: string, flags: ResultsFlags): Promise<void> {
  const store = storeConfigOf(flags);
  const out = resolveOut(flags.out ?? defaultOutFile(crawlId, flags.format));
  checkOutFile(out, flags.out !== undefined, flags.dataDir);
  checkTerminalOut(out, flags.format);
  const print = printer(writesToStdout(out));
  const progress = await progressOrWhyNone(flags, store, crawlId);
  const standing = await unfinishedStanding(flags, crawlId, progress);
  if (standing !== undefined && flags.requireFinished) throw new CrawlNotFinishedError(`${standingText(crawlId, standing, progress)}; nothing written (--require-finished)`);
  const count = await exportResults(flags.format, store, crawlId, out);
  print(`${counted(count, EXPORT_UNITS[flags.format])} written to ${describeOut(out)}`);
  const changes = await storedChangeSummary(store, crawlId);
  if (changes !== undefined) print(changes);
  if (standing === undefined) return;
  // A running crawl records pages while the export reads: its count is taken after, so it is never below what was written.
  const now = standing.kind === 'ended-early' ? progress : await readStoredProgress(store, crawlId);
  process.stderr.write(`crawlflow: ${standingText(crawlId, standing, now)}; this export ${standing.kind === 'unknown' ? 'may be' : 'is'} partial\n`);
}

export function addResultsCommand(program: Command): void {
  storeOption(idCommand(program, 'results', "write a crawl's results: JSON Lines, CSV, or a WARC file of its stored bodies"))
    .addOption(formatOption())
    .option('--out <file>', OUT_HELP)
    .option('--require-finished', 'write nothing, and exit 1, unless the crawl has finished (completed, or reached its maxPages or deadline)')
    .action(writeResults);
}
