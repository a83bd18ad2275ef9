/**
 * What the crawl workflow needs to know of a crawl's config, resolved once by the `openCrawl`
 * activity and recorded in history as its result: limits, budget, timeouts and the render
 * lane, never seeds, patterns, headers or cookies. Batches reach the full config in the store
 * by reference (crawl ID and config version).
 */
import type { CrawlConfig, CrawlLimits } from '../shared/crawl-config';
import { partOf } from './shards';

export interface RenderPlan {
  taskQueue: string;
  /** Render batches of the crawl in flight at once, across render workers. */
  maxConcurrentBatches: number;
  startToCloseMs: number;
}

export interface CrawlPlan {
  /** The first seed's host, for the crawl's search attributes (of a seed file's first seed when no seed is inline). */
  seedHost: string;
  /** The crawl's seeds include a seed file, queued by `importSeeds` before the first batch. */
  importsSeedFile?: boolean;
  maxPages: number;
  batchSize: number;
  limits: CrawlLimits;
  /**
   * perHostConcurrency of each of the config's `hosts` overrides, by `hosts` key; null where
   * the override that applies to a host leaves it to the crawl's.
   */
  hostConcurrency: Record<string, number | null>;
  /** Wall-clock budget from the crawl's start, or null. */
  deadlineMs: number | null;
  fetchBatchStartToCloseMs: number;
  /** Null when the crawl renders nothing. */
  render: RenderPlan | null;
  readsSitemaps: boolean;
  recrawlOf: string | null;
  /** Bumped by every change to the recorded config (seeds added), so workers reload it. */
  configVersion: number;
  /** Shard workflows the crawl runs as; absent in plans recorded before shards (one). */
  shards?: number;
  /**
   * Batches top themselves up from the store's ready keys (see `BatchOrder.fill`); absent in
   * plans recorded before fills, whose crawls keep launching host shares only.
   */
  fillsFromStore?: boolean;
  /**
   * While the frontier holds fewer unlaunched URLs than there are free batch slots (above all
   * at a crawl's start), the free slots get filling batches that wait for the work running
   * batches find (see `BatchOrder.waitsForWork`); absent in plans recorded before, whose
   * crawls ramp up one round of batches at a time.
   */
  waitsForWork?: boolean;
}

/** URLs a batch may claim of one host: its share of the host's backlog and of the page budget. */
export interface HostShare {
  host: string;
  limit: number;
}

/** A batch's ID: unique per crawl, also after a reset (it carries the run ID), the same on every retry. */
export const batchIdOf = (crawlId: string, run: string, seq: number): string => `${crawlId}/${run}/${seq}`;

/** A batch's number in its run: the last part of its ID (`batchIdOf`). */
export const batchSeqOf = (batchId: string): number => Number(batchId.slice(batchId.lastIndexOf('/') + 1));

/** What a batch is told: the crawl by reference, its hosts and shares, and the limits in force. */
export interface BatchOrder {
  crawlId: string;
  /** `batchIdOf` the crawl, the run and the batch's number in it. */
  batchId: string;
  /** The workflow run that launched the batch, which may ask its batches to hand over. */
  run: string;
  /**
   * One host, or on a broad crawl several small ones, crawled one after another: a batch is
   * one connection's worth of sequential requests, whichever hosts they go to.
   */
  hosts: HostShare[];
  render: boolean;
  configVersion: number;
  /** `delayMs` as changed by `setLimits` (the only limit a batch itself applies). */
  delayMs: number;
  /** The shard whose keys the batch claims, on a sharded crawl: its report is that shard's view. */
  shard?: number;
  /**
   * URLs the batch may claim, after its shares, from whichever keys the store has ready (a
   * broad crawl's workflow sees only its biggest hosts). With it, every claim of the crawl is
   * bounded by `perHostConcurrency` holders in the store, so keys the workflow never saw keep
   * their concurrency too.
   */
  fill?: number;
  /** `perHostConcurrency` in force (setLimits may change it); set on crawls that fill. */
  perHostConcurrency?: number;
  /**
   * A filling batch launched before there was work for it: when the store has nothing queued
   * for it, it waits (a while) for running batches' pages to queue links, instead of ending
   * with nothing and costing the crawl a round trip through the workflow per level of links.
   */
  waitsForWork?: boolean;
}

/** Room per URL in a batch's start-to-close timeout, on top of its fetch attempts. */
const PER_URL_OVERHEAD_MS = 15_000;
const PER_BATCH_OVERHEAD_MS = 60_000;

/** The plan of a crawl whose config is recorded as `configVersion`. */
export function planOf(config: CrawlConfig, configVersion: number): CrawlPlan {
  const attempts = config.maxRetries + 1;
  const fetchBatchStartToCloseMs = config.batchSize * (config.timeoutMs * attempts + PER_URL_OVERHEAD_MS) + PER_BATCH_OVERHEAD_MS;
  const hostConcurrency = Object.fromEntries(Object.entries(config.hosts).map(([key, override]) => [key, override.perHostConcurrency ?? null]));
  const { render } = config;
  return {
    seedHost: config.seeds.length > 0 ? new URL(config.seeds[0]).host : '',
    importsSeedFile: config.seedsFile !== undefined,
    maxPages: config.maxPages,
    batchSize: config.batchSize,
    limits: { concurrency: config.concurrency, perHostConcurrency: config.perHostConcurrency, delayMs: config.delayMs },
    hostConcurrency,
    deadlineMs: config.deadline ?? null,
    fetchBatchStartToCloseMs,
    render:
      render === undefined
        ? null
        : {
            taskQueue: render.taskQueue,
            maxConcurrentBatches: render.maxConcurrentPages,
            // Room for each page's rendering (every attempt) on top of its fetch.
            startToCloseMs: fetchBatchStartToCloseMs + config.batchSize * render.timeoutMs * attempts,
          },
    readsSitemaps: config.sitemaps.urls.length > 0 || config.sitemaps.fromRobots,
    recrawlOf: config.recrawlOf ?? null,
    configVersion,
    shards: config.shards,
    // A render batch's pages cost a browser each: render lanes stay scheduled by host.
    fillsFromStore: render === undefined,
    waitsForWork: render === undefined,
  };
}

/**
 * The plan of one shard: its part of the page budget and of the crawl's concurrency (and of
 * the render lane's), split evenly so that the parts add up to the crawl's with no shard
 * asking another what is left; each shard gets at least one batch slot. Sitemaps are the
 * crawl's to read, before its shards start.
 */
export function shardPlan(plan: CrawlPlan, shard: number): CrawlPlan {
  const shards = plan.shards ?? 1;
  const { render } = plan;
  return {
    ...plan,
    maxPages: partOf(plan.maxPages, shards, shard),
    limits: { ...plan.limits, concurrency: partOf(plan.limits.concurrency, shards, shard, 1) },
    render: render && { ...render, maxConcurrentBatches: partOf(render.maxConcurrentBatches, shards, shard, 1) },
    readsSitemaps: false,
  };
}
