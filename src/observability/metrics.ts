/**
 * The worker's application metrics (prom-client). Label sets are bounded: never a URL or a
 * host as a label value.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export class CrawlMetrics {
  readonly registry = new Registry();

  readonly taskDuration = new Histogram({
    name: 'crawler_task_duration_seconds',
    help: 'Duration of crawl tasks: whole batches and single page fetches.',
    labelNames: ['status', 'type'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [this.registry],
  });

  readonly queueLength = new Gauge({
    name: 'worker_queue_length',
    help: 'URLs claimed by batches running on this worker and not yet processed.',
    labelNames: ['worker_id'] as const,
    registers: [this.registry],
  });

  readonly pages = new Counter({
    name: 'crawler_pages_total',
    help: 'URLs processed, by outcome (fetched, error, skipped) and HTTP status class.',
    labelNames: ['outcome', 'status_class'] as const,
    registers: [this.registry],
  });

  readonly bytes = new Counter({
    name: 'crawler_bytes_total',
    help: 'Response body bytes received on the wire.',
    registers: [this.registry],
  });

  readonly fetchErrors = new Counter({
    name: 'crawler_fetch_errors_total',
    help: 'Failed fetch attempts by error code (including attempts that were retried).',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  readonly retries = new Counter({
    name: 'crawler_fetch_retries_total',
    help: 'Fetch attempts repeated after a retryable failure.',
    registers: [this.registry],
  });

  readonly politenessWait = new Histogram({
    name: 'crawler_politeness_wait_seconds',
    help: 'Time a batch waited for its host slot (delay, Crawl-delay, Retry-After).',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly batchResumes = new Counter({
    name: 'crawler_batch_resumes_total',
    help: 'Batches resumed from heartbeat details after a failed attempt (for example a dead worker).',
    registers: [this.registry],
  });

  readonly hostDeferrals = new Counter({
    name: 'crawler_host_deferrals_total',
    help: 'Batches that handed a host back to the workflow for a durable wait.',
    registers: [this.registry],
  });

  readonly droppedUrls = new Counter({
    name: 'crawler_urls_dropped_total',
    help: 'Links and sitemap entries found but not queued, by reason: nofollow, max-depth, out-of-scope, excluded, not-included, already-seen, and for sitemaps invalid, max-urls, max-files, index-depth, file-cap.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly renderBlocked = new Counter({
    name: 'crawler_render_blocked_requests_total',
    help: 'Requests of rendered pages that were refused, by reason: out-of-scope, scheme, method, resource-type, too-many-requests, navigation, websocket.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly storeWaiting = new Gauge({
    name: 'crawler_store_waiting_calls',
    help: 'Store calls of this worker waiting for the frontier store to answer again (an outage: the crawl is paused, nothing is lost).',
    registers: [this.registry],
  });

  /** The store calls waiting now, each with the moment (ms) up to which its wait is counted. */
  private readonly openStoreWaits = new Set<{ countedTo: number }>();

  readonly storeWaitSeconds = new Counter({
    name: 'crawler_store_wait_seconds_total',
    help: 'Time store calls spent waiting for the frontier store to answer again, counted while they wait.',
    registers: [this.registry],
    // Counted at every scrape as well as when a wait ends: an outage lasts minutes, and its
    // rate must show while it lasts, not in one step after.
    collect: () => {
      const now = Date.now();
      for (const wait of this.openStoreWaits) this.countStoreWait(wait, now);
    },
  });

  readonly frontierQueued = new Gauge({
    name: 'crawler_frontier_queued',
    help: 'URLs waiting in the frontiers of the crawls this worker is running batches for (latest snapshot of each).',
    registers: [this.registry],
  });

  readonly activeCrawls = new Gauge({
    name: 'crawler_active_crawls',
    help: 'Crawls with at least one batch running on this worker.',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** A store call starts waiting for the store; the function returned ends its wait. */
  storeWaitStarted(): () => void {
    const wait = { countedTo: Date.now() };
    this.openStoreWaits.add(wait);
    this.storeWaiting.inc();
    return () => {
      this.countStoreWait(wait, Date.now());
      this.openStoreWaits.delete(wait);
      this.storeWaiting.dec();
    };
  }

  private countStoreWait(wait: { countedTo: number }, now: number): void {
    this.storeWaitSeconds.inc((now - wait.countedTo) / 1000);
    wait.countedTo = now;
  }
}

export function statusClass(status: number | null): string {
  return status === null ? 'none' : `${Math.floor(status / 100)}xx`;
}
