/**
 * Why a running crawl goes at the pace it does, where its workflow cannot say: a host's gap
 * between requests (a delay, robots.txt Crawl-delay, AutoThrottle) is waited out inside the
 * batch, and only a wait longer than a batch takes on becomes a hold the workflow knows. Each
 * batch puts the gap it keeps in its heartbeat (`BatchProgress.gap`), which Temporal keeps
 * with the pending activity: the Web UI shows it there, and `status` reads it here.
 */
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { BatchProgress, CrawlProgress, KeyGap } from '../shared/crawl-types';
import { crawlHandle } from '../client/crawl-client';
import { shardWorkflowId } from '../scheduling/shards';

/** A heartbeat's gap, when it has a whole one: batches of older releases heartbeat their count only. */
function gapOf(details: unknown): KeyGap | undefined {
  const gap = (details as Partial<BatchProgress> | undefined)?.gap;
  if (typeof gap !== 'object' || gap === null) return undefined;
  return typeof gap.key === 'string' && typeof gap.gapMs === 'number' && typeof gap.why === 'string' ? gap : undefined;
}

/** The descriptions of the workflows that run a crawl's batches: its own (`own`), or its shards' once they run. */
async function batchWorkflows(client: Client, own: WorkflowExecutionDescription, progress: CrawlProgress): Promise<WorkflowExecutionDescription[]> {
  if (progress.shards === undefined) return [own];
  const shards: WorkflowExecutionDescription[] = [];
  for (let shard = 0; shard < progress.shards; shard += 1) {
    try {
      shards.push(await crawlHandle(client, shardWorkflowId(own.workflowId, shard)).describe());
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
  }
  return shards;
}

/**
 * The gaps the crawl's running batches keep between requests, as their last heartbeats said
 * (sent every few seconds): one per politeness key, the widest first.
 */
export async function batchGaps(client: Client, own: WorkflowExecutionDescription, progress: CrawlProgress): Promise<KeyGap[]> {
  const byKey = new Map<string, KeyGap>();
  for (const { raw } of await batchWorkflows(client, own, progress)) {
    for (const { heartbeatDetails } of raw.pendingActivities ?? []) {
      const gap = gapOf(await decodeFromPayloadsAtIndex(client.options.loadedDataConverter, 0, heartbeatDetails?.payloads));
      if (gap !== undefined && gap.gapMs > (byKey.get(gap.key)?.gapMs ?? 0)) byKey.set(gap.key, gap);
    }
  }
  return [...byKey.values()].sort((a, b) => b.gapMs - a.gapMs || a.key.localeCompare(b.key));
}
