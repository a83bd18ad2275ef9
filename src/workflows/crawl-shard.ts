/**
 * crawlShard: one shard of a sharded crawl, a child workflow of its crawlSession. It drives
 * the crawl's scheduler over the politeness keys of its shard only (its views, its batches,
 * its continue-as-new), with its part of the budget and of the concurrency (shardPlan).
 *
 * An empty queue does not end a shard: other shards may still find URLs of its keys. It asks
 * the store whether the crawl is quiet (no live shard has anything queued or claimed), which,
 * once true, stays true; until then it looks at its view again every SHARD_IDLE_POLL_MS.
 */
import type { BatchTotals, ShardSummary } from '../shared/crawl-types';
import { initialSchedulerState } from '../scheduling/crawl-scheduler';
import type { CrawlPlan } from '../scheduling/crawl-plan';
import { lifecycle } from './crawl-activities';
import { EarlyMessages } from './crawl-messages';
import type { CarriedCrawl, Opened } from './open-crawl';
import { RunDriver } from './run-driver';

/** How long an idle shard waits before it looks at its view again. */
export const SHARD_IDLE_POLL_MS = 1_500;

interface ShardOf {
  /** The crawl's ID: the store's key, and the prefix of the shard's workflow ID. */
  crawlId: string;
  shard: number;
}

export type CrawlShardInput = ShardOf & ({ plan: CrawlPlan; startedAt: number } | { continued: CarriedCrawl });

export async function crawlShard(input: CrawlShardInput): Promise<ShardSummary> {
  const messages = new EarlyMessages();
  const { crawlId, shard } = input;
  const view = await lifecycle.crawlView({ crawlId, shard });
  const opened: Opened =
    'continued' in input
      ? { ...input.continued, scheduler: { ...input.continued.scheduler, view }, fresh: false }
      : { plan: input.plan, scheduler: initialSchedulerState(input.plan, view), startedAt: input.startedAt, run: 1, fresh: true };
  return new ShardRun(crawlId, opened, shard).run(messages);
}

class ShardRun extends RunDriver<BatchTotals> {
  private get shardOf(): ShardOf {
    return { crawlId: this.crawlId, shard: this.shard! };
  }

  protected nextRunInput(continued: CarriedCrawl): CrawlShardInput {
    return { ...this.shardOf, continued };
  }

  protected async outOfWork(): Promise<boolean> {
    const { quiet, view } = await lifecycle.shardIdle(this.shardOf);
    this.scheduler.acceptView(view);
    if (!quiet && view.queued === 0) await this.waitForChange(SHARD_IDLE_POLL_MS);
    return quiet;
  }

  /** The crawl is finished by its crawlSession, once every shard has ended: a shard only ends itself. */
  protected close(): Promise<BatchTotals> {
    return lifecycle.endShard(this.shardOf);
  }

  /** A crawl's search attributes are its crawlSession's: its shards are not crawls of their own. */
  protected index(): void {
    // Nothing to index.
  }
}
