/**
 * The settings an export needs from the crawl's config as its store recorded it (the latest
 * version): a store made by a release that recorded none, or a crawl never opened, has none.
 */
import type { CrawlConfig } from '../shared/crawl-config';
import type { FrontierStore } from '../store/frontier-store';

export async function recordedConfig(store: FrontierStore): Promise<Partial<CrawlConfig>> {
  const latest = await store.latestConfig();
  return latest === undefined ? {} : (JSON.parse(latest.config) as Partial<CrawlConfig>);
}
