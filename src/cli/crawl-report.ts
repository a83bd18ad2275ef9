/**
 * What the CLI tells a person about a crawl: the lines `crawl` ends with and `status` prints,
 * and the data behind them, which `--json` prints as is.
 */
import {
  CancelledFailure,
  isGrpcCancelledError,
  isGrpcDeadlineError,
  isGrpcServiceError,
  TerminatedFailure,
  TimeoutFailure,
  WorkflowFailedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionStatusName,
} from '@temporalio/client';
import { crawlHandle, type CrawlHandle } from '../client/crawl-client';
import { describeChanges, hasChanges } from '../results/change-summary';
import { describeHold, type CrawlProgress, type CrawlStatus, type CrawlSummary, type CrawlTotals, type FailureTally, type FrontierStats, type HostState, type KeyGap } from '../shared/crawl-types';
import { frontierQuery, progressQuery } from '../shared/messages';
import type { CrawlLimits } from '../shared/crawl-config';
import { mergedFrontier, mergedProgress } from '../shared/shard-progress';
import { shardWorkflowId } from '../scheduling/shards';
import { batchGaps } from './batch-gaps';

/** How a crawl's workflow ended when it returned no summary (it failed, was terminated, ...). */
type WorkflowEnd = 'failed' | 'terminated' | 'timed-out' | 'cancelled';

/**
 * A crawl's status, from Temporal or, once the Temporal server no longer keeps the crawl's
 * workflow (`workflowStatus` null), from its store (stored-status.ts): null then for what only
 * Temporal knew.
 */
export interface CrawlStatusReport {
  crawlId: string;
  /** Temporal's execution status: RUNNING, COMPLETED, FAILED, ...; null when the server has no workflow of the crawl's ID. */
  workflowStatus: string | null;
  /**
   * The crawl's own status while it runs or when it returned a summary, else how its workflow
   * ended; from the store, the end it recorded, null when it recorded none.
   */
  outcome: CrawlStatus | WorkflowEnd | null;
  /** Null from the store, which keeps no start time. */
  startedAt: number | null;
  /** Unset while the crawl runs; from the store, when it recorded its end. */
  finishedAt: number | null;
  /** Set when the crawl returned a summary, and from the store. */
  totals: CrawlTotals | null;
  /** Why the workflow did not return a summary: the message of its failure (from the store, of the failure it recorded). */
  failure: string | null;
  /** Batches that failed for good, by cause (their URLs carry the code), so far or in all; null from the store, which keeps no tally. */
  failedBatches: FailureTally[] | null;
  /** Set while the crawl runs. */
  progress: CrawlProgress | null;
  frontier: FrontierStats | null;
  /** The gaps running batches keep between requests, from their last heartbeats (`batchGaps`); set while the crawl runs. */
  gaps: KeyGap[] | null;
  uiUrl: string | null;
}

/** How long `status` waits for a worker to answer a running crawl's queries. */
const QUERY_DEADLINE_MS = 5_000;

/** A running crawl whose queries no worker answered: nothing polls its task queue. */
export class NoWorkerAnsweredError extends Error {
  readonly code = 'no-worker';
  constructor(crawlId: string, taskQueue: string) {
    super(
      `crawl ${crawlId} is running, but no worker answered within ${QUERY_DEADLINE_MS / 1000} s: ` +
        `start \`crawlflow worker --task-queue ${taskQueue}\` (see docs/troubleshooting.md)`,
    );
  }
}

/** The crawl's workflow tasks fail (the server refused what one did, or its code threw): it answers no query until one succeeds. */
export class WorkflowTaskFailingError extends Error {
  readonly code = 'workflow-task-failing';
  constructor(crawlId: string) {
    super(
      `crawl ${crawlId} is running, but its workflow tasks fail, so it answers nothing: ` +
        `the worker logs and its history (temporal workflow show --workflow-id ${crawlId}) say why (see docs/troubleshooting.md)`,
    );
  }
}

const WORKFLOW_ENDS: Partial<Record<WorkflowExecutionStatusName, WorkflowEnd>> = { FAILED: 'failed', TERMINATED: 'terminated', TIMED_OUT: 'timed-out', CANCELLED: 'cancelled' };

function seconds(startedAt: number, finishedAt: number): number {
  return Math.max(0.001, (finishedAt - startedAt) / 1000);
}

/** `1 URL`, `3 URLs`: a count and its noun. */
export function counted(count: number, noun: string, plural = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : plural}`;
}

/** The URL counts of a crawl, finished or running, with its rate when its start is known. */
function countsLine(counts: { processed: number; fetched: number; errors: number; skipped: number }, startedAt: number | null, until: number | null): string {
  const { processed, fetched, errors, skipped } = counts;
  const line = `  ${counted(processed, 'URL')} (${fetched} fetched, ${counted(errors, 'error')}, ${skipped} skipped)`;
  if (startedAt === null || until === null) return line;
  const elapsed = seconds(startedAt, until);
  return `${line} in ${elapsed.toFixed(1)} s, ${(processed / elapsed).toFixed(1)} URLs/s`;
}

/** One line per cause that made batches fail for good. */
function failedBatchLines(failures: readonly FailureTally[]): string[] {
  return failures.map(({ batches, code, message }) => `  ${counted(batches, 'batch', 'batches')} failed with ${code}: ${message}`);
}

/** Each limit as `set-limits` shows it: typed by the limits, so a new one cannot go unshown. */
const LIMIT_TEXT: { readonly [K in keyof CrawlLimits]: (value: CrawlLimits[K]) => string } = {
  concurrency: (n) => `concurrency ${n}`,
  perHostConcurrency: (n) => `per-host concurrency ${n}`,
  delayMs: (ms) => `delay ${ms} ms`,
};

/** The limits a crawl runs under, as `set-limits` prints them after a change. */
export function limitsLine(crawlId: string, limits: CrawlLimits): string {
  const parts = (Object.keys(LIMIT_TEXT) as Array<keyof CrawlLimits>).map((field) => LIMIT_TEXT[field](limits[field]));
  return `set-limits: ${crawlId}: ${parts.join(', ')}`;
}

/** A finished crawl's counts and duration (when known), frontier, failed batches, and the changes of a recrawl. */
function finishedLines(totals: CrawlTotals, startedAt: number | null, finishedAt: number | null, failures: readonly FailureTally[]): string[] {
  return [
    countsLine(totals, startedAt, finishedAt),
    `  ${totals.queued} left in the frontier, ${totals.discovered} discovered`,
    ...failedBatchLines(failures),
    ...(hasChanges(totals.changes) ? [`  ${describeChanges(totals.changes)}`] : []),
  ];
}

/** A finished crawl in a few lines, headed by its outcome. */
export function summaryLines(summary: CrawlSummary): string[] {
  return [`crawl ${summary.crawlId}: ${summary.status}`, ...finishedLines(summary.totals, summary.startedAt, summary.finishedAt, summary.failures ?? [])];
}

/** The command that starts the embedded dev server on the crawls' history and keeps its Web UI up. */
export const UI_COMMAND = 'crawlflow ui';

/**
 * A crawl's Web UI line. When the server serving the link stops as this command exits (the
 * embedded default), the bare link would be dead: the line names the command that serves it.
 */
export function webUiLine(uiUrl: string, stopsWithCommand = false): string {
  return stopsWithCommand ? `  Web UI: run \`${UI_COMMAND}\`, then open ${uiUrl}` : `  Web UI: ${uiUrl}`;
}

/** How a crawl's workflow ended without a summary, from the failure its result was rejected with. */
export function workflowEnd(err: WorkflowFailedError): { outcome: WorkflowEnd; reason: string } {
  const { cause } = err;
  const outcome =
    cause instanceof TerminatedFailure ? 'terminated' : cause instanceof TimeoutFailure ? 'timed-out' : cause instanceof CancelledFailure ? 'cancelled' : 'failed';
  return { outcome, reason: cause?.message ?? err.message };
}

/** Why a workflow that returned no summary ended: its failure's cause, as Temporal recorded it. */
async function failureOf(handle: CrawlHandle): Promise<string | null> {
  try {
    await handle.result();
    return null;
  } catch (err) {
    if (err instanceof WorkflowFailedError) return workflowEnd(err).reason;
    throw err;
  }
}

/** How a crawl's workflow stands: still running, or how it ended (its summary's status, or how it ended without one) and why. */
export type WorkflowOutcome = { outcome: 'running'; taskQueue: string } | { outcome: CrawlSummary['status'] | WorkflowEnd; reason: string | null };

/** How a workflow in `status` ended: its summary, or how it ended without one and why; undefined while it runs. */
async function endingOf(handle: CrawlHandle, status: WorkflowExecutionStatusName): Promise<{ summary: CrawlSummary } | { end: WorkflowEnd; reason: string | null } | undefined> {
  if (status === 'COMPLETED') return { summary: await handle.result() };
  const end = WORKFLOW_ENDS[status];
  return end === undefined ? undefined : { end, reason: await failureOf(handle) };
}

/** How the crawl's workflow stands, from one describe and, once it has ended, its result. */
export async function workflowOutcome(client: Client, crawlId: string): Promise<WorkflowOutcome> {
  const handle = crawlHandle(client, crawlId);
  const { status, taskQueue } = await handle.describe();
  const ending = await endingOf(handle, status.name);
  if (ending === undefined) return { outcome: 'running', taskQueue };
  return 'summary' in ending ? { outcome: ending.summary.status, reason: null } : { outcome: ending.end, reason: ending.reason };
}

/** gRPC's FAILED_PRECONDITION, the code of the server's refusals to pass a query on. */
const GRPC_FAILED_PRECONDITION = 9;

/**
 * Why the server refused to pass a query on (FAILED_PRECONDITION), or '': "no poller seen for
 * task queue recently" once the queue's workers have stopped (a second before the deadline),
 * "Unable to query workflow due to Workflow Task in failed state" while its workflow tasks fail.
 */
function queryRefusal(err: unknown): string {
  for (let cause = err; cause instanceof Error; cause = cause.cause) {
    if (isGrpcServiceError(cause) && cause.code === GRPC_FAILED_PRECONDITION) return cause.details;
  }
  return '';
}

/**
 * What `ask` gets of the workers that run a crawl by its queries, within a bounded time: the
 * server holds a query until a worker takes it, so with none polling `taskQueue` it would wait
 * without end (NoWorkerAnsweredError instead, as when the server says no worker polls).
 */
export async function askWorkers<T>(client: Client, handle: CrawlHandle, taskQueue: string, ask: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + QUERY_DEADLINE_MS;
  try {
    return await client.connection.withDeadline(deadline, ask);
  } catch (err) {
    // The server holds a query until a worker takes it: past the deadline, none is polling. The
    // call then ends as DEADLINE_EXCEEDED or, when the client's timer wins, as CANCELLED.
    const timedOut = Date.now() >= deadline && (isGrpcDeadlineError(err) || isGrpcCancelledError(err));
    const refusal = queryRefusal(err);
    if (timedOut || /no poller/i.test(refusal)) throw new NoWorkerAnsweredError(handle.workflowId, taskQueue);
    if (/workflow task in failed state/i.test(refusal)) throw new WorkflowTaskFailingError(handle.workflowId);
    throw err;
  }
}

/** A workflow's progress and frontier, asked of the workers that run it. */
function queriedState(client: Client, handle: CrawlHandle, taskQueue: string): Promise<[CrawlProgress, FrontierStats]> {
  // One after the other: a query still retrying when the first one gave up would outlive the connection.
  return askWorkers(client, handle, taskQueue, async () => [await handle.query(progressQuery), await handle.query(frontierQuery)]);
}

/**
 * A running crawl's progress and frontier. A sharded crawl's are its shards', read now: its
 * own are a view it reads every few seconds, and its shards run the batches, hold the hosts
 * and tally the failures. Before its shards start (it reads its sitemaps first) its own stand.
 */
async function liveState(client: Client, handle: CrawlHandle, taskQueue: string): Promise<[CrawlProgress, FrontierStats]> {
  const own = await queriedState(client, handle, taskQueue);
  const [progress] = own;
  if (progress.shards === undefined) return own;
  const shards: Array<[CrawlProgress, FrontierStats]> = [];
  try {
    for (let shard = 0; shard < progress.shards; shard += 1) {
      shards.push(await queriedState(client, crawlHandle(client, shardWorkflowId(handle.workflowId, shard)), taskQueue));
    }
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return own;
    throw err;
  }
  return [mergedProgress(progress, shards.map(([shardProgress]) => shardProgress)), mergedFrontier(shards.map(([, shardFrontier]) => shardFrontier))];
}

/** Everything `status` reports, from one describe and, by the crawl's state, its result or its queries. */
export async function crawlStatusReport(client: Client, crawlId: string, uiUrl: string | undefined): Promise<CrawlStatusReport> {
  const handle = crawlHandle(client, crawlId);
  const description = await handle.describe();
  const workflowStatus = description.status.name;
  const base = {
    crawlId,
    workflowStatus,
    startedAt: description.startTime.getTime(),
    finishedAt: description.closeTime?.getTime() ?? null,
    totals: null,
    failure: null,
    failedBatches: [],
    progress: null,
    frontier: null,
    gaps: null,
    uiUrl: uiUrl ?? null,
  };
  const ending = await endingOf(handle, workflowStatus);
  if (ending === undefined) {
    const [progress, frontier] = await liveState(client, handle, description.taskQueue);
    const gaps = await batchGaps(client, description, progress);
    return { ...base, outcome: progress.status, startedAt: progress.startedAt, failedBatches: progress.failures, progress, frontier, gaps };
  }
  if (!('summary' in ending)) return { ...base, outcome: ending.end, failure: ending.reason };
  const { summary } = ending;
  return { ...base, outcome: summary.status, startedAt: summary.startedAt, finishedAt: summary.finishedAt, totals: summary.totals, failedBatches: summary.failures ?? [] };
}

/** The heading of a report from the store: what it knows, and why Temporal's word is missing. */
function storedHeading({ crawlId, outcome }: CrawlStatusReport): string {
  const why = 'from its store: the Temporal server no longer keeps its history';
  if (outcome !== null) return `crawl ${crawlId}: ${outcome} (${why})`;
  return `crawl ${crawlId}: end not recorded (${why}, and its store has no recorded end: it was terminated, or run by an earlier release)`;
}

/** A crawl the Temporal server no longer keeps, as its store tells it: the same lines, as far as the store has them. */
function storedLines(report: CrawlStatusReport): string[] {
  const { totals, failure, finishedAt } = report;
  return [
    storedHeading(report),
    ...(totals === null ? [] : finishedLines(totals, null, null, [])),
    ...(failure === null ? [] : [`  reason: ${failure}`]),
    ...(finishedAt === null ? [] : [`  ended ${new Date(finishedAt).toISOString()}`]),
  ];
}

/** A host of the largest backlogs: its queued URLs, and until when the crawl holds it and why (Retry-After, a long Crawl-delay). */
function backlogEntry(state: HostState): string {
  const { host, queued, readyAt } = state;
  return readyAt === null ? `${host} (${queued})` : `${host} (${queued}, held ${describeHold(state)})`;
}

/** The report as short human text: the same facts `--json` gives. */
export function statusLines(report: CrawlStatusReport, uiStopsWithCommand = false): string[] {
  if (report.workflowStatus === null) return storedLines(report);
  const lines = [`crawl ${report.crawlId}: ${report.outcome}`];
  const { progress, frontier, totals, finishedAt } = report;
  if (progress) {
    lines.push(countsLine(progress, report.startedAt, Date.now()));
    lines.push(`  ${progress.queued} queued, ${counted(progress.batchesInFlight, 'batch', 'batches')} in flight${progress.hostsInFlight.length > 0 ? ` on ${progress.hostsInFlight.join(', ')}` : ''}`);
    const busiest = frontier?.hosts.slice(0, 5).map(backlogEntry) ?? [];
    if (busiest.length > 0) lines.push(`  largest backlogs: ${busiest.join(', ')}`);
    const paced = report.gaps?.slice(0, 5).map(({ key, why }) => `${key} (${why})`) ?? [];
    if (paced.length > 0) lines.push(`  paced: ${paced.join(', ')}`);
    if (progress.storeWait) lines.push(`  waiting for the store since ${new Date(progress.storeWait.since).toISOString()}: ${progress.storeWait.message}`);
    lines.push(...failedBatchLines(report.failedBatches ?? []));
  } else {
    if (totals) lines.push(...finishedLines(totals, report.startedAt, finishedAt, report.failedBatches ?? []));
    if (report.failure !== null) lines.push(`  reason: ${report.failure}`);
    if (!totals && report.startedAt !== null && finishedAt !== null) lines.push(`  ended after ${seconds(report.startedAt, finishedAt).toFixed(1)} s`);
  }
  if (report.uiUrl) lines.push(webUiLine(report.uiUrl, uiStopsWithCommand));
  return lines;
}
