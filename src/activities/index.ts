/**
 * The activities a crawl worker registers. Workflows import this module's *type* only.
 * `fetchBatch` serves crawls of this release; `crawlBatch`, `seedFrontier` and `addSeeds`
 * serve runs of crawls started by 0.2.0 until they end.
 */
import { createBatchActivities } from './crawl-batch';
import { createLifecycleActivities } from './crawl-lifecycle';
import { createSitemapDiscovery } from './sitemap-discovery';
import { createSeedImport } from './seed-import';
import type { ActivityDeps } from './deps';

export type { ActivityDeps } from './deps';

export function createActivities(deps: ActivityDeps) {
  const batches = createBatchActivities(deps);
  return {
    fetchBatch: batches.ordered,
    crawlBatch: batches.legacy,
    discoverSitemaps: createSitemapDiscovery(deps),
    importSeeds: createSeedImport(deps),
    ...createLifecycleActivities(deps),
  };
}

export type CrawlActivities = ReturnType<typeof createActivities>;
