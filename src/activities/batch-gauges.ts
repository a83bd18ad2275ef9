/**
 * The worker's gauges of its batches: crawls with a batch running here, the URLs those crawls
 * have queued (each crawl's latest report), the URLs this worker's batches hold and have not
 * finished, and the found links dropped, by why.
 */
import type { CrawlMetrics } from '../observability/metrics';
import type { PageOutcome } from './page-outcome';

export class BatchGauges {
  /** URLs claimed by this worker's batches and not finished yet. */
  readonly held: ReturnType<CrawlMetrics['queueLength']['labels']>;
  private readonly runningBatches = new Map<string, number>();
  private readonly frontierSizes = new Map<string, number>();

  constructor(
    private readonly metrics: CrawlMetrics,
    workerId: string,
  ) {
    this.held = metrics.queueLength.labels(workerId);
  }

  /** A batch of `crawlId` started (1) or ended (-1); a crawl with none left leaves the gauges. */
  trackBatch(crawlId: string, delta: 1 | -1): void {
    const running = (this.runningBatches.get(crawlId) ?? 0) + delta;
    if (running > 0) this.runningBatches.set(crawlId, running);
    else {
      this.runningBatches.delete(crawlId);
      this.frontierSizes.delete(crawlId);
    }
    this.update();
  }

  /** The crawl's queued URLs, as its latest batch report saw them. */
  recordFrontierSize(crawlId: string, queued: number): void {
    this.frontierSizes.set(crawlId, queued);
    this.update();
  }

  /** Links a page's outcome dropped, and those the store had already seen. */
  countDropped(dropped: PageOutcome['dropped'], alreadySeen: number): void {
    for (const [reason, n] of Object.entries(dropped ?? {})) if (n > 0) this.metrics.droppedUrls.inc({ reason }, n);
    if (alreadySeen > 0) this.metrics.droppedUrls.inc({ reason: 'already-seen' }, alreadySeen);
  }

  private update(): void {
    this.metrics.activeCrawls.set(this.runningBatches.size);
    let queued = 0;
    for (const size of this.frontierSizes.values()) queued += size;
    this.metrics.frontierQueued.set(queued);
  }
}
