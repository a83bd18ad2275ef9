/**
 * Shared pieces of the fault-injection tests (test/faults-*.test.ts): what the site saw,
 * what Temporal says is pending or happened to batch activities, and a seeded PRNG.
 */
import { temporal } from '@temporalio/proto';
import type { SyntheticSite } from '../../src/sites/synthetic-site';
import type { CrawlHandle } from '../../src/client/crawl-client';
import type { PageRecord } from '../../src/store/frontier-store';
import { reachablePagePaths } from './fixtures';

type Ts = { seconds?: number | { toNumber(): number } | null; nanos?: number | null } | null | undefined;

export function tsMs(ts: Ts): number | undefined {
  if (!ts || ts.seconds === undefined || ts.seconds === null) return undefined;
  const seconds = typeof ts.seconds === 'number' ? ts.seconds : ts.seconds.toNumber();
  return seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1e6);
}

/** How many times the site served each path that matches `prefix`. */
export function fetchCounts(site: SyntheticSite, prefix = '/page/'): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { path } of site.requests) if (path.startsWith(prefix)) counts.set(path, (counts.get(path) ?? 0) + 1);
  return counts;
}

/** Pages, duplicates and losses of a crawl, compared with the paths that should be there. */
export function recordStats(records: PageRecord[], expectedPaths: Set<string>): { recorded: number; distinct: number; duplicated: number; lost: number; extra: number } {
  const paths = records.map((record) => new URL(record.url).pathname);
  const distinct = new Set(paths);
  return {
    recorded: paths.length,
    distinct: distinct.size,
    duplicated: paths.length - distinct.size,
    lost: [...expectedPaths].filter((path) => !distinct.has(path)).length,
    extra: [...distinct].filter((path) => !expectedPaths.has(path)).length,
  };
}

export function reachablePaths(site: SyntheticSite): Set<string> {
  return new Set(reachablePagePaths(site));
}

export interface PendingBatch {
  activityId: string;
  state: string;
  attempt: number;
  identity: string;
  lastStartedAt: number | undefined;
  lastHeartbeatAt: number | undefined;
}

export async function pendingBatches(handle: CrawlHandle): Promise<PendingBatch[]> {
  const description = await handle.describe();
  return (description.raw.pendingActivities ?? []).map((activity) => ({
    activityId: activity.activityId ?? '',
    state: temporal.api.enums.v1.PendingActivityState[activity.state ?? 0] ?? String(activity.state),
    attempt: activity.attempt ?? 1,
    identity: activity.lastWorkerIdentity ?? '',
    lastStartedAt: tsMs(activity.lastStartedTime as Ts),
    lastHeartbeatAt: tsMs(activity.lastHeartbeatTime as Ts),
  }));
}

export interface BatchOutcome {
  activityId: string;
  scheduledAt: number;
  /** Attempt of the recorded start (the last one). */
  attempt: number;
  identity: string;
  closedAt: number | undefined;
  closedAs: string | undefined;
}

/** Every batch activity of the run, from its history. */
export async function batchOutcomes(handle: CrawlHandle): Promise<{ outcomes: BatchOutcome[]; eventTypes: string[] }> {
  const history = await handle.fetchHistory();
  const byEventId = new Map<number, BatchOutcome>();
  const eventTypes: string[] = [];
  for (const event of history.events ?? []) {
    const type = temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? String(event.eventType);
    eventTypes.push(type);
    const id = Number(event.eventId);
    const at = tsMs(event.eventTime as Ts) ?? 0;
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      byEventId.set(id, { activityId: scheduled.activityId ?? '', scheduledAt: at, attempt: 0, identity: '', closedAt: undefined, closedAs: undefined });
      continue;
    }
    const started = event.activityTaskStartedEventAttributes;
    if (started) {
      const outcome = byEventId.get(Number(started.scheduledEventId));
      if (outcome) {
        outcome.attempt = started.attempt ?? 1;
        outcome.identity = started.identity ?? '';
      }
      continue;
    }
    const closed =
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes ??
      event.activityTaskTimedOutEventAttributes ??
      event.activityTaskCanceledEventAttributes;
    if (closed) {
      const outcome = byEventId.get(Number(closed.scheduledEventId));
      if (outcome) {
        outcome.closedAt = at;
        outcome.closedAs = type.replace('EVENT_TYPE_ACTIVITY_TASK_', '');
      }
    }
  }
  return { outcomes: [...byEventId.values()], eventTypes };
}

/** Deterministic fault schedules: the synthetic site's seeded generator. */
export { seededRandom } from '../../src/sites/synthetic-site';

export const seconds = (ms: number): string => (ms / 1000).toFixed(1);

/** Retries `fn` on errors for at most `timeoutMs` (for client calls made while a server restarts). */
export async function retrying<T>(fn: () => Promise<T>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${what}: still failing after ${attempt} attempts: ${String(err)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
