/**
 * Types that cross the workflow/activity boundary. They stay small: counts, cursors and host
 * names, never page contents or URL lists, so workflow history stays small.
 */
import type { CrawlConfig } from './crawl-config';
import type { BatchTotals, CrawlTotals, FrontierSnapshot } from '../store/frontier-store';

export type { BatchTotals, CrawlTotals, FrontierSnapshot } from '../store/frontier-store';

export interface SeedFrontierInput {
  crawlId: string;
  config: CrawlConfig;
}

export interface CrawlBatchInput {
  crawlId: string;
  /** Derived from the crawl ID and a sequence number: the same on every retry of the batch. */
  batchId: string;
  host: string;
  /** URLs this batch may claim: its share of the host's backlog and of the page budget. */
  limit: number;
  config: CrawlConfig;
}

export interface BatchResult {
  batchId: string;
  host: string;
  claimed: number;
  totals: BatchTotals;
  /** Set when the host asked us to wait longer than a batch should sit idle (Retry-After, Crawl-delay). */
  deferUntil: number | null;
  frontier: FrontierSnapshot;
}

/** Heartbeat details of a running batch: what a retried attempt resumes from. */
export interface BatchProgress {
  processed: number;
}

export interface BatchRef {
  crawlId: string;
  batchId: string;
}

export type CrawlStatus = 'running' | 'paused' | 'stopping' | 'completed' | 'max-pages-reached' | 'deadline-exceeded' | 'stopped' | 'cancelled';

export interface CrawlProgress {
  crawlId: string;
  status: CrawlStatus;
  processed: number;
  fetched: number;
  errors: number;
  skipped: number;
  bytes: number;
  queued: number;
  batchesInFlight: number;
  batchesCompleted: number;
  hostsInFlight: string[];
  startedAt: number;
  run: number;
}

export interface CrawlSummary {
  crawlId: string;
  status: Exclude<CrawlStatus, 'running' | 'paused' | 'stopping'>;
  totals: CrawlTotals;
  batches: number;
  runs: number;
  startedAt: number;
  finishedAt: number;
}

export interface HostState {
  host: string;
  /** Unclaimed URLs of the host, as of the latest frontier snapshot. */
  queued: number;
  batchesInFlight: number;
  /** When the host may be asked again (epoch ms), if it is held by Retry-After or a long Crawl-delay. */
  readyAt: number | null;
}

export interface FrontierStats {
  queued: number;
  snapshotVersion: number;
  /** The hosts with the largest backlog (at most 50). */
  hosts: HostState[];
}
