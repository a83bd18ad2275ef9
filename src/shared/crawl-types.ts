/**
 * Types that cross the workflow/activity boundary. They stay small: counts, cursors and host
 * names, never page contents or URL lists, so workflow history stays small.
 */
import type { CrawlConfig } from './crawl-config';
import type { BatchTotals, CrawlEnd, CrawlTotals, CrawlView, FrontierSnapshot } from '../store/frontier-store';

export type { BatchTotals, CrawlEnd, CrawlEndStatus, CrawlTotals, CrawlView, FrontierSnapshot } from '../store/frontier-store';

export interface SeedFrontierInput {
  crawlId: string;
  config: CrawlConfig;
}

/** The batch input of crawls started by 0.2.0 (the whole config in every input); still served for their runs. */
export interface LegacyBatchInput {
  crawlId: string;
  /** Derived from the crawl ID and a sequence number: the same on every retry of the batch. */
  batchId: string;
  host: string;
  /** URLs this batch may claim: its share of the host's backlog and of the page budget. */
  limit: number;
  config: CrawlConfig;
}

/**
 * How a batch ended, when it did not fail: done (possibly early, when its host asked for a
 * long wait), or stopped because the store could not be reached for longer than a batch waits.
 * A batch stopped that way keeps its claims under its ID until the workflow has them released.
 */
export type BatchReport =
  | {
      kind: 'done';
      batchId: string;
      hosts: string[];
      claimed: number;
      deferred: HostDeferral[];
      view: CrawlView;
      /**
       * Set when a filling batch claimed nothing and its lane has backlog: when the first of its
       * keys can be claimed again (epoch ms), every one being held until then (Retry-After, a
       * long Crawl-delay). Absent from older workers' reports.
       */
      claimableAt?: number;
    }
  | { kind: 'store-unavailable'; batchId: string; hosts: string[]; message: string };

/** A host that asked to be left alone until `until` (epoch ms): Retry-After, a long Crawl-delay. */
export interface HostDeferral {
  host: string;
  until: number;
  /**
   * Why, in words (`holdReason`): `HTTP 429 with Retry-After 120 s`. Absent when the batch met a
   * hold another batch's failure set (that batch says why), and from older workers' reports.
   */
  reason?: string;
}

/** Why a batch failed for good: a stable code (the error class's) and a message naming the cause. */
export interface BatchFailure {
  code: string;
  message: string;
}

/** The result of a 0.2.0 batch. */
export interface BatchResult {
  batchId: string;
  host: string;
  claimed: number;
  totals: BatchTotals;
  /** Set when the host asked us to wait longer than a batch should sit idle (Retry-After, Crawl-delay). */
  deferUntil: number | null;
  frontier: FrontierSnapshot;
}

/** The gap a batch keeps between requests to the politeness key it is crawling, and why (`gapReason`). */
export interface KeyGap {
  key: string;
  gapMs: number;
  why: string;
}

/** Heartbeat details of a running batch: its pages done (what a retried attempt resumes from), and the gap it keeps now, if any. */
export interface BatchProgress {
  processed: number;
  gap?: KeyGap;
}

/** How the crawl ended, as its workflow tells `finishCrawl`, which records it with the time. */
export type EndReport = Omit<CrawlEnd, 'endedAt'>;

export interface BatchRef {
  crawlId: string;
  batchId: string;
}

/** A batch that failed for good: its unfinished URLs are recorded with the failure's code. */
export interface AbandonInput extends BatchRef {
  failure?: BatchFailure;
  /** The batch's shard, on a sharded crawl: the view returned is that shard's. */
  shard?: number;
}

export type CrawlStatus =
  | 'running'
  | 'paused'
  | 'stopping'
  | 'waiting-for-store'
  | 'failing'
  | 'completed'
  | 'max-pages-reached'
  | 'deadline-exceeded'
  | 'stopped'
  | 'cancelled'
  | 'failed';

/** Batches that failed for good, by cause. */
export interface FailureTally extends BatchFailure {
  batches: number;
}

/** Set while the crawl waits for its store to answer again. */
export interface StoreWait {
  since: number;
  message: string;
}

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
  storeWait: StoreWait | null;
  failures: FailureTally[];
  /**
   * Set on a sharded crawl, whose own progress is a view read every few seconds, with no
   * batches: its shards (`<crawl ID>/shard-<n>`) run them, and `status` reads theirs.
   */
  shards?: number;
}

/** The progress of a crawl that has not started scheduling: nothing counted, nothing running. */
export function openingProgress(crawlId: string, startedAt: number): CrawlProgress {
  return {
    crawlId,
    status: 'running',
    processed: 0,
    fetched: 0,
    errors: 0,
    skipped: 0,
    bytes: 0,
    queued: 0,
    batchesInFlight: 0,
    batchesCompleted: 0,
    hostsInFlight: [],
    startedAt,
    run: 1,
    storeWait: null,
    failures: [],
  };
}

export interface CrawlSummary {
  crawlId: string;
  /** A crawl that fails (every batch failed the same way) ends as a failed workflow, not with a summary. */
  status: Exclude<CrawlStatus, 'running' | 'paused' | 'stopping' | 'waiting-for-store' | 'failing' | 'failed'>;
  totals: CrawlTotals;
  batches: number;
  runs: number;
  startedAt: number;
  finishedAt: number;
  /** Batches that failed for good, by cause (absent when none did, and in 0.2.0 summaries). */
  failures?: FailureTally[];
}

/** What one shard of a sharded crawl returns: how it ended, and the running totals of its batches. */
export interface ShardSummary extends Omit<CrawlSummary, 'totals'> {
  totals: BatchTotals;
}

export interface HostState {
  host: string;
  /** Unclaimed URLs of the host, as of the latest frontier snapshot. */
  queued: number;
  batchesInFlight: number;
  /** When the host may be asked again (epoch ms), if it is held by Retry-After or a long Crawl-delay. */
  readyAt: number | null;
  /** Why it is held, while `readyAt` is set and a worker said why (`HostDeferral.reason`). */
  holdReason: string | null;
}

/**
 * How long and why a host is held, as `status` and the Web UI say it: `until <ISO time>: <reason>`.
 * An older workflow's answer has no `holdReason` at all, and then the words end at the time.
 */
export function describeHold({ readyAt, holdReason }: Pick<HostState, 'readyAt' | 'holdReason'>): string {
  return `until ${new Date(readyAt ?? 0).toISOString()}${holdReason ? `: ${holdReason}` : ''}`;
}

export interface FrontierStats {
  queued: number;
  snapshotVersion: number;
  /** The hosts with the largest backlog (at most 50). */
  hosts: HostState[];
}

/**
 * Is `continued` what a 0.2.0 run hands to its next run (its counters, with the frontier
 * snapshot that later runs no longer carry)? The workflow reads it as the run's counters, and
 * openCrawl leaves it out of the crawl's settings.
 */
export function isLegacyHandOver(continued: unknown): boolean {
  return typeof continued === 'object' && continued !== null && 'frontier' in continued;
}
