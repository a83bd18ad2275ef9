/**
 * Recurring crawls on Temporal Schedules: no external cron. Each scheduled run is a crawl of
 * its own, whose ID is the schedule ID plus the run's scheduled time (Temporal appends it).
 */
import type { Client, ScheduleDescription, ScheduleOverlapPolicy, ScheduleSummary } from '@temporalio/client';
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
  /** Exactly one of the two. */
  every?: string;
  cron?: string;
  overlap: OverlapPolicy;
  catchupWindow: string;
  paused?: boolean;
}

function overlapPolicy(policy: OverlapPolicy): ScheduleOverlapPolicy {
  return policy.toUpperCase().replace(/-/g, '_') as ScheduleOverlapPolicy;
}

export async function createCrawlSchedule(client: Client, options: CrawlScheduleOptions): Promise<void> {
  // Every run the schedule starts would fail the same way.
  checkCrawlInput(options.input);
  await client.schedule.create<typeof crawlSession>({
    scheduleId: options.scheduleId,
    spec: options.cron ? { cronExpressions: [options.cron] } : { intervals: [{ every: options.every as string }] },
    action: {
      type: 'startWorkflow',
      workflowType: CRAWL_WORKFLOW_TYPE,
      workflowId: options.scheduleId,
      taskQueue: options.taskQueue,
      args: [options.input],
      workflowTaskTimeout: CRAWL_WORKFLOW_TASK_TIMEOUT,
      staticSummary: `scheduled crawl ${options.scheduleId}`,
    },
    policies: { overlap: overlapPolicy(options.overlap), catchupWindow: options.catchupWindow },
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

export function describeCrawlSchedule(client: Client, scheduleId: string): Promise<ScheduleDescription> {
  return client.schedule.getHandle(scheduleId).describe();
}
