/**
 * For tests of one batch activity (fetchBatch, browserBatch) without a workflow: a crawl
 * opened in its store as openCrawl opens it (its config recorded, its seeds queued; openCrawl
 * itself reads the input from a workflow run's start event), and the orders the workflow
 * would send its batches.
 */
import type { BatchReport, CrawlView } from '../../src/shared/crawl-types';
import { openInStore } from '../../src/activities/crawl-lifecycle';
import { parseCrawlConfig, type CrawlConfig, type CrawlInput } from '../../src/shared/crawl-config';
import type { BatchOrder } from '../../src/scheduling/crawl-plan';
import { StoreRegistry } from '../../src/store/store-registry';
import { sqliteBackend } from '../../src/store/open-store-backend';
import type { ActivityDeps } from '../../src/activities/deps';
import type { Transport } from '../../src/fetch/transport';
import { RobotsCache } from '../../src/fetch/robots';
import { CrawlMetrics } from '../../src/observability/metrics';
import { RecordedConfigs } from '../../src/activities/recorded-config';

export interface OpenedCrawl {
  crawlId: string;
  config: CrawlConfig;
  /** The order of batch `n` (its ID, the same on every attempt) for up to `limit` URLs of the first seed's host. */
  order(n: number, options?: { limit?: number; render?: boolean }): BatchOrder;
}

/** Activity tests key politeness by host, which resolves nothing. */
const noResolver = (hostname: string): Promise<never> => Promise.reject(new Error(`activity tests resolve no names (${hostname})`));

export async function openCrawlInStore(stores: StoreRegistry, crawlId: string, input: CrawlInput): Promise<OpenedCrawl> {
  const config = parseCrawlConfig(input);
  const configVersion = await stores.use(crawlId, (store) => openInStore(store, config, noResolver));
  const host = new URL(config.seeds[0]).host;
  return {
    crawlId,
    config,
    order: (n, { limit = 10, render = false } = {}) => ({
      crawlId,
      batchId: `${crawlId}/batch-${n}`,
      run: 'activity-test',
      hosts: [{ host, limit }],
      render,
      configVersion,
      delayMs: config.delayMs,
    }),
  };
}

/** The view of the crawl a batch that finished reports (a store outage would be a test failure). */
export function viewAfter(report: BatchReport): CrawlView & { claimed: number } {
  if (report.kind !== 'done') throw new Error(`batch ${report.batchId}: the store was unavailable: ${report.message}`);
  return { ...report.view, claimed: report.claimed };
}

/** A worker's activity dependencies over SQLite stores in `dataDir`, made as crawl-worker.ts makes them. */
export function sqliteActivityDeps(dataDir: string, transport: Transport, workerId: string): ActivityDeps {
  const backend = sqliteBackend(dataDir);
  return {
    stores: new StoreRegistry(backend.open),
    crawlExists: backend.has,
    transport,
    robots: new RobotsCache(transport, 2_000),
    metrics: new CrawlMetrics(),
    workerId,
    bodies: backend.bodies,
    configs: new RecordedConfigs(backend.description),
  };
}
