/**
 * crawlSession: the durable owner of one crawl. It opens the crawl (the `openCrawl` activity
 * resolves and records the config once; history holds only the plan), then drives the whole
 * crawl itself (CrawlRun) or, with `shards` > 1, runs it as shard child workflows
 * (ShardedCrawl) and finishes it once they all have ended.
 *
 * Executions started by 0.2.0 carry no scheduler-v2 marker and run the 0.2.0 workflow.
 */
import { patched, workflowInfo } from '@temporalio/workflow';
import type { CrawlSummary, CrawlTotals, EndReport } from '../shared/crawl-types';
import { lifecycle } from './crawl-activities';
import { crawlSessionV02, type CrawlSessionInput as V02Input } from './crawl-session-v0.2';
import { indexedAttributes } from './crawl-state';
import { EarlyMessages } from './crawl-messages';
import { open, type CarriedCrawl, type CrawlSessionInput } from './open-crawl';
import { readSitemaps } from './read-sitemaps';
import { RunDriver } from './run-driver';
import { ShardedCrawl } from './sharded-crawl';

/** Patch: executions of this release schedule through CrawlScheduler; 0.2.0 histories have no marker. */
export const SCHEDULER_V2_PATCH = 'crawl-scheduler-v2';

export async function crawlSession(input: CrawlSessionInput): Promise<CrawlSummary> {
  if (!patched(SCHEDULER_V2_PATCH)) return crawlSessionV02(input as V02Input);
  // Queries, signals and updates are answered from the first task on, also while the crawl opens.
  const messages = new EarlyMessages();
  const opened = await open(input);
  // A plan recorded before shards has none: one shard, the crawl as it always ran.
  if ((opened.plan.shards ?? 1) > 1) return new ShardedCrawl(workflowInfo().workflowId, opened).run(messages);
  return new CrawlRun(workflowInfo().workflowId, opened).run(messages);
}

/** The whole crawl in one workflow: its queue empty means it is complete, and its end finishes the crawl in the store. */
class CrawlRun extends RunDriver<CrawlTotals> {
  protected override async opening(): Promise<void> {
    const view = await readSitemaps(this.crawlId, this.plan);
    if (view) this.scheduler.acceptView(view);
  }

  protected nextRunInput(continued: CarriedCrawl): CrawlSessionInput {
    return { continued };
  }

  protected async outOfWork(): Promise<boolean> {
    return true;
  }

  /** Claimed URLs go back to the queue, the crawl's end is recorded and the store's totals are read. */
  protected close(end: EndReport): Promise<CrawlTotals> {
    return lifecycle.finishCrawl({ crawlId: this.crawlId, recrawlOf: this.plan.recrawlOf ?? undefined, end });
  }

  protected index(status: string = this.scheduler.status()): void {
    indexedAttributes(this.crawlId, this.plan.seedHost, status, this.progress().processed);
  }
}
