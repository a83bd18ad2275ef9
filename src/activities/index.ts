/**
 * The activities a crawl worker registers. Workflows import this module's *type* only.
 */
import { createCrawlBatch } from './crawl-batch';
import { createLifecycleActivities } from './crawl-lifecycle';
import { createSitemapDiscovery } from './sitemap-discovery';
import type { ActivityDeps } from './deps';

export type { ActivityDeps } from './deps';

export function createActivities(deps: ActivityDeps) {
  return {
    crawlBatch: createCrawlBatch(deps),
    discoverSitemaps: createSitemapDiscovery(deps),
    ...createLifecycleActivities(deps.stores),
  };
}

export type CrawlActivities = ReturnType<typeof createActivities>;
