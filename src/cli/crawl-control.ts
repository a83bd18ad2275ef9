/**
 * How the commands that act on a crawl (`pause`, `resume`, `stop`, `cancel`, `add-seeds`,
 * `set-limits`, and `start` of an ID in use) find it and reach it. The server takes a signal
 * or a cancel request for a workflow that has ended without a word, and holds an update until
 * a worker takes it: each command first asks how the crawl stands, and waits a bounded time
 * for an update to be taken, so the user is told when the request would change nothing or
 * is not being answered.
 */
import {
  ApplicationFailure,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
  type WorkflowUpdateHandle,
} from '@temporalio/client';
import { crawlHandle, type CrawlHandle } from '../client/crawl-client';
import { INVALID_CONFIG_FAILURE } from '../shared/crawl-config';
import type { CrawlStatus } from '../shared/crawl-types';
import { progressQuery } from '../shared/messages';
import { askWorkers, NoWorkerAnsweredError, workflowOutcome, WorkflowTaskFailingError, type WorkflowOutcome } from './crawl-report';
import { UsageError } from './crawl-options';
import { CrawlNotFoundError } from './stored-status';

/** The crawl took a valid request and would not do it (`stop` on a sharded crawl, a step that failed): exit 1. */
export class UpdateNotDoneError extends Error {
  readonly code = 'update-not-done';
}

/** The crawl has ended: a request to change it would change nothing. */
export class CrawlEndedError extends Error {
  readonly code = 'crawl-ended';
  constructor(crawlId: string, outcome: string, consequence: string) {
    super(`crawl ${crawlId} has already ended (${outcome}): ${consequence}`);
  }
}

/**
 * How long an update may wait for a worker to take it. A live worker takes it within a
 * workflow task (4 s at most); one that has just replaced a dead worker may first wait out
 * the dead one's sticky queue (5 s).
 */
export const UPDATE_TAKEN_DEADLINE_MS = 10_000;

/** No worker took an update in time: nothing polls the crawl's task queue. */
export class UpdateNotTakenError extends Error {
  readonly code = 'update-not-taken';
  constructor(crawlId: string, update: string, taskQueue: string) {
    super(
      `crawl ${crawlId} is running, but no worker took the ${update} within ${UPDATE_TAKEN_DEADLINE_MS / 1000} s: ` +
        `start \`crawlflow worker --task-queue ${taskQueue}\` (the server may still hand it to that worker; see docs/troubleshooting.md)`,
    );
  }
}

/** How the crawl of this ID stands on the server, or undefined when the server has no crawl of that ID. */
export async function crawlStanding(client: Client, crawlId: string): Promise<WorkflowOutcome | undefined> {
  try {
    return await workflowOutcome(client, crawlId);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/** A crawl that runs, as a command reaches it. */
export interface RunningCrawl {
  client: Client;
  crawlId: string;
  handle: CrawlHandle;
  taskQueue: string;
}

/** The crawl `command` is meant for, when it runs; else the error that says why the command would do nothing. */
async function runningCrawl(client: Client, crawlId: string, command: string): Promise<RunningCrawl> {
  const standing = await crawlStanding(client, crawlId);
  if (standing === undefined) throw new CrawlNotFoundError(`no crawl "${crawlId}" on the Temporal server`);
  if (standing.outcome !== 'running') throw new CrawlEndedError(crawlId, standing.outcome, `${command} applies only to a running crawl`);
  return { client, crawlId, handle: crawlHandle(client, crawlId), taskQueue: standing.taskQueue };
}

/**
 * The running crawl's own status (`running`, `paused`, `stopping`, ...), from its progress
 * query; undefined when no worker answers in time, or its workflow tasks fail. A signal is
 * recorded all the same and taken when a workflow task of the crawl next succeeds: the status
 * only tells the user what a signal would change.
 */
export async function crawlStatusOf({ client, handle, taskQueue }: RunningCrawl): Promise<CrawlStatus | undefined> {
  try {
    return (await askWorkers(client, handle, taskQueue, () => handle.query(progressQuery))).status;
  } catch (err) {
    if (err instanceof NoWorkerAnsweredError || err instanceof WorkflowTaskFailingError) return undefined;
    throw err;
  }
}

/**
 * Runs `send` on the crawl when it runs. A crawl that ends between the check and the request
 * fails the request as not found: it is then reported as ended, as it would have been before.
 */
export async function sendToRunning<T>(client: Client, crawlId: string, command: string, send: (crawl: RunningCrawl) => Promise<T>): Promise<T> {
  const crawl = await runningCrawl(client, crawlId, command);
  try {
    return await send(crawl);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) await runningCrawl(client, crawlId, command);
    throw err;
  }
}

/**
 * Sends an update (`start` sends it and waits until a worker has taken it) and returns its
 * result. A refusal of its input (the crawl's validator, type InvalidCrawlConfig) is a usage
 * error, as the same mistake in a flag is; any other failure is the crawl's. Once taken, the
 * update is waited for however long it runs: the crawl has a worker, and it is durable.
 */
export async function update<T>(crawl: RunningCrawl, name: string, start: (handle: CrawlHandle) => Promise<WorkflowUpdateHandle<T>>): Promise<T> {
  const deadline = Date.now() + UPDATE_TAKEN_DEADLINE_MS;
  try {
    const taken = await crawl.client.connection.withDeadline(deadline, () => start(crawl.handle));
    return await taken.result();
  } catch (err) {
    if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError && Date.now() >= deadline) throw new UpdateNotTakenError(crawl.crawlId, name, crawl.taskQueue);
    if (!(err instanceof WorkflowUpdateFailedError)) throw err;
    const message = err.cause?.message ?? err.message;
    if (err.cause instanceof ApplicationFailure && err.cause.type === INVALID_CONFIG_FAILURE) throw new UsageError(message);
    throw new UpdateNotDoneError(message);
  }
}
