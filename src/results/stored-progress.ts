/**
 * How far a crawl has got, as its store tells it: how the crawl ended, if its last activity
 * recorded that, and its counts. `crawlflow results` reads it before it exports, and so can a
 * script: an export is the crawl's whole result only once the crawl has reached an end it was
 * meant to reach (`isFinished`). Read before the records, never after: a crawl that ends while
 * its records are read must not make the export that missed its last ones look final.
 */
import { FINISHED_END_STATUSES, type CrawlEnd, type CrawlTotals } from '../store/frontier-store';
import type { StoreConfig } from '../store/store-url';
import { withCrawlStore } from './export-jsonl';

export interface StoredProgress {
  /** Undefined while the crawl runs, and for a crawl that ended without recording it (see `CrawlEnd`). */
  end: CrawlEnd | undefined;
  /** Pages the crawl has decided about: its records, less a recrawl's gone ones. */
  processed: number;
  /** URLs waiting in the frontier (a recorded end has given claimed ones back to it). */
  queued: number;
}

const FINISHED: ReadonlySet<string> = new Set(FINISHED_END_STATUSES);

/** Whether a crawl that ended this way wrote every record it was meant to: its export is its whole result. */
export function isFinished(status: string): boolean {
  return FINISHED.has(status);
}

/** The crawl's recorded end and counts (UnknownCrawlError when it has no store). */
export function readStoredProgress(config: StoreConfig, crawlId: string): Promise<StoredProgress> {
  return withCrawlStore(config, crawlId, async (store) => {
    const end = await store.crawlEnd();
    const { queued, totals } = await store.view(0);
    return { end, processed: totals.processed, queued };
  });
}

export interface StoredOutcome {
  /** As in `StoredProgress`. */
  end: CrawlEnd | undefined;
  /** The totals the crawl's end was reported with: finishing it read them from the store, as here. */
  totals: CrawlTotals;
}

/**
 * The crawl's recorded end and its whole totals, for a crawl the Temporal server no longer
 * knows (UnknownCrawlError when it has no store). Counts every URL, so it is for one look at a
 * crawl, not for polling one.
 */
export function readStoredOutcome(config: StoreConfig, crawlId: string): Promise<StoredOutcome> {
  return withCrawlStore(config, crawlId, async (store) => ({ end: await store.crawlEnd(), totals: await store.totals() }));
}
