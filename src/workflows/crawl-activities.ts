/**
 * How the crawl workflow calls its activities: every proxy with explicit timeouts, heartbeat
 * and retry. Which errors are retried is decided by the activities (activity-failures.ts),
 * so these policies set no attempt limit where an outage must be waited out; batches keep
 * one, so a URL that kills every worker it meets is given up.
 */
import { ActivityCancellationType, ActivityFailure, ApplicationFailure, proxyActivities, TimeoutFailure } from '@temporalio/workflow';
import type { CrawlActivities } from '../activities';
import type { RenderActivities } from '../activities/render-batch';
import type { BatchFailure, BatchReport } from '../shared/crawl-types';
import type { BatchOrder, CrawlPlan } from '../scheduling/crawl-plan';
import { ACTIVITY_HEARTBEAT_TIMEOUT_MS, BATCH_RETRY_INITIAL_INTERVAL_MS } from '../shared/activity-timing';

/** Heartbeats come from a ticker, not from page progress: a dead worker's batch is retried within ~10 s. */
const HEARTBEAT_TIMEOUT = ACTIVITY_HEARTBEAT_TIMEOUT_MS;
/** Attempts of one batch before its unfinished URLs are recorded as failed. */
export const BATCH_ATTEMPTS = 5;

const backoff = { initialInterval: BATCH_RETRY_INITIAL_INTERVAL_MS, backoffCoefficient: 2, maximumInterval: '30s' } as const;

/** Short store work; retried until it succeeds or fails for a reason waiting cannot cure. */
export const lifecycle = proxyActivities<CrawlActivities>({ startToCloseTimeout: '2m', retry: backoff });

/**
 * A read of the store's counts for progress alone: one attempt, since a read that fails is
 * simply made again at the next refresh (progress-refresh.ts), and it must not hold up a
 * run's end for long.
 */
export const progressRead = proxyActivities<CrawlActivities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 1 }, summary: 'reading progress' });

/** Waits, heartbeating, for as long as the store is down. */
export const storeWatch = proxyActivities<CrawlActivities>({
  startToCloseTimeout: '7d',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: backoff,
  summary: 'waiting for the frontier store',
});

/** Reading sitemaps is many fetches: heartbeated, and a failure leaves the crawl to its seeds. */
export const discovery = proxyActivities<CrawlActivities>({
  startToCloseTimeout: '1h',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { ...backoff, maximumAttempts: 3 },
  summary: 'reading sitemaps',
});

/**
 * Queuing a seed file: heartbeated with its position, so a retry goes on where the last
 * attempt stopped. Store outages are waited out (no attempt limit); a bad line fails at once.
 * Six hours is far more than a million seeds take (seconds), and still bounds a hung read.
 */
export const seedImport = proxyActivities<CrawlActivities>({
  startToCloseTimeout: '6h',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: backoff,
  summary: 'queuing the seed file',
});

/** The activity that runs `order`: a fetch batch on the workflow's task queue, a render batch on the render queue. */
export function runBatch(plan: CrawlPlan, order: BatchOrder, summary: string): Promise<BatchReport> {
  const options = {
    heartbeatTimeout: HEARTBEAT_TIMEOUT,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { ...backoff, maximumAttempts: BATCH_ATTEMPTS },
    summary,
  };
  if (order.render && plan.render) {
    const { browserBatch } = proxyActivities<RenderActivities>({ ...options, taskQueue: plan.render.taskQueue, startToCloseTimeout: plan.render.startToCloseMs });
    return browserBatch(order);
  }
  const { fetchBatch } = proxyActivities<CrawlActivities>({ ...options, startToCloseTimeout: plan.fetchBatchStartToCloseMs });
  return fetchBatch(order);
}

/** Why a batch failed for good, from what its last attempt said. */
export function batchFailure(err: unknown): BatchFailure {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return { code: cause.type ?? 'batch-failed', message: cause.message };
  if (cause instanceof TimeoutFailure) {
    return { code: 'batch-timed-out', message: `every attempt of the batch timed out (${cause.timeoutType}): a worker died or hung on one of its pages` };
  }
  return { code: 'batch-failed', message: cause instanceof Error ? cause.message : String(cause) };
}
