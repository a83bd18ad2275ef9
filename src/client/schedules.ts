/**
 * Recurring crawls on Temporal Schedules: no external cron. Each scheduled run is a crawl of
 * its own, whose ID is the schedule ID plus the run's scheduled time (Temporal appends it).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ScheduleAlreadyRunning, ScheduleNotFoundError, type Client, type ScheduleDescription, type ScheduleHandle, type ScheduleOverlapPolicy, type ScheduleSummary } from '@temporalio/client';
import type { CrawlInput } from '../shared/crawl-config';
import { CRAWL_WORKFLOW_TYPE } from '../shared/names';
import type { crawlSession } from '../workflows';
import { checkCrawlInput, CRAWL_WORKFLOW_TASK_TIMEOUT } from './crawl-client';

export const OVERLAP_POLICIES = ['skip', 'buffer-one', 'buffer-all', 'cancel-other', 'terminate-other', 'allow-all'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

export interface CrawlScheduleOptions {
  scheduleId: string;
  input: CrawlInput;
  taskQueue: string;
  /** Exactly one of the two: an interval in milliseconds, or a cron expression. */
  everyMs?: number;
  cron?: string;
  overlap: OverlapPolicy;
  catchupWindowMs: number;
  paused?: boolean;
}

export class ScheduleExistsError extends Error {
  readonly code = 'schedule-exists';
  constructor(scheduleId: string) {
    super(`schedule "${scheduleId}" already exists: choose another ID, or delete it first (crawlflow schedule delete ${scheduleId})`);
  }
}

export class UnknownScheduleError extends Error {
  readonly code = 'unknown-schedule';
  constructor(scheduleId: string) {
    super(`no schedule "${scheduleId}"`);
  }
}

/** The server refused the schedule's cron expression or interval; the message is its reason. */
export class InvalidScheduleSpecError extends Error {
  readonly code = 'invalid-schedule-spec';
}

function overlapPolicy(policy: OverlapPolicy): ScheduleOverlapPolicy {
  return policy.toUpperCase().replace(/-/g, '_') as ScheduleOverlapPolicy;
}

/** A schedule's overlap policy as the server applies it: none set is SKIP. */
const overlapOf = (description: ScheduleDescription): NonNullable<ScheduleOverlapPolicy> => description.policies.overlap ?? 'SKIP';

/** The `--overlap` value of a server's policy (`BUFFER_ONE`: `buffer-one`). */
const overlapFlag = (policy: NonNullable<ScheduleOverlapPolicy>): string => policy.toLowerCase().replace(/_/g, '-');

export async function createCrawlSchedule(client: Client, options: CrawlScheduleOptions): Promise<void> {
  // Every run the schedule starts would fail the same way.
  checkCrawlInput(options.input);
  try {
    await createSchedule(client, options);
  } catch (err) {
    if (err instanceof ScheduleAlreadyRunning) throw new ScheduleExistsError(options.scheduleId);
    // The SDK turns the server's INVALID_ARGUMENT "Invalid schedule spec: <reason>" into a bare
    // TypeError with the reason; durations reach it as numbers, so its own checks do not throw one.
    if (err instanceof TypeError) throw new InvalidScheduleSpecError(err.message, { cause: err });
    throw err;
  }
}

function createSchedule(client: Client, options: CrawlScheduleOptions): Promise<ScheduleHandle> {
  return client.schedule.create<typeof crawlSession>({
    scheduleId: options.scheduleId,
    spec: options.cron ? { cronExpressions: [options.cron] } : { intervals: [{ every: options.everyMs as number }] },
    action: {
      type: 'startWorkflow',
      workflowType: CRAWL_WORKFLOW_TYPE,
      workflowId: options.scheduleId,
      taskQueue: options.taskQueue,
      args: [options.input],
      workflowTaskTimeout: CRAWL_WORKFLOW_TASK_TIMEOUT,
      staticSummary: `scheduled crawl ${options.scheduleId}`,
    },
    policies: { overlap: overlapPolicy(options.overlap), catchupWindow: options.catchupWindowMs },
    state: { paused: options.paused ?? false },
  });
}

export async function listCrawlSchedules(client: Client): Promise<ScheduleSummary[]> {
  const schedules: ScheduleSummary[] = [];
  for await (const schedule of client.schedule.list()) {
    if (schedule.action?.type === 'startWorkflow' && schedule.action.workflowType === CRAWL_WORKFLOW_TYPE) schedules.push(schedule);
  }
  return schedules;
}

/** Runs `act` on the schedule's handle: UnknownScheduleError when the server has no such schedule. */
export async function onSchedule<T>(client: Client, scheduleId: string, act: (handle: ScheduleHandle) => Promise<T>): Promise<T> {
  try {
    return await act(client.schedule.getHandle(scheduleId));
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) throw new UnknownScheduleError(scheduleId);
    throw err;
  }
}

export function describeCrawlSchedule(client: Client, scheduleId: string): Promise<ScheduleDescription> {
  return onSchedule(client, scheduleId, (handle) => handle.describe());
}

/** A trigger the schedule's overlap policy turned down: the crawls still running kept it from starting one. */
export class TriggerSkippedError extends Error {
  readonly code = 'trigger-skipped';
  constructor(scheduleId: string, running: string[]) {
    super(`schedule "${scheduleId}" started no crawl: ${running.join(', ') || 'its last crawl'} is still running, and its overlap policy is skip`);
  }
}

/** What a trigger did: the crawl it started, or (buffered behind running crawls, or not yet decided) what is still running. */
export type TriggerOutcome = { started: string } | { pending: { overlap: string; running: string[] } };

const TRIGGER_POLL_MS = 200;

/** Runs held back by a buffer-one or buffer-all policy until the running crawl ends. */
const bufferSize = (description: ScheduleDescription): number => Number(description.raw.info?.bufferSize ?? 0);

/**
 * Starts a run now, under the schedule's own overlap policy: the SDK's `trigger()` without one
 * sends ALLOW_ALL, which would start a second crawl of the same site beside a running one.
 * The server decides asynchronously, so its counters are read until they show what it did.
 */
export async function triggerCrawlSchedule(client: Client, scheduleId: string, waitMs = 10_000): Promise<TriggerOutcome> {
  return onSchedule(client, scheduleId, async (handle) => {
    const before = await handle.describe();
    await handle.trigger(overlapOf(before));
    const deadline = Date.now() + waitMs;
    for (;;) {
      const now = await handle.describe();
      if (now.info.numActionsTaken > before.info.numActionsTaken) return { started: now.info.recentActions.at(-1)?.action.workflow.workflowId ?? '' };
      const running = now.info.runningActions.map((action) => action.workflow.workflowId);
      if (now.info.numActionsSkippedOverlap > before.info.numActionsSkippedOverlap) throw new TriggerSkippedError(scheduleId, running);
      if (bufferSize(now) > bufferSize(before) || Date.now() >= deadline) return { pending: { overlap: overlapFlag(overlapOf(now)), running } };
      await sleep(TRIGGER_POLL_MS);
    }
  });
}
