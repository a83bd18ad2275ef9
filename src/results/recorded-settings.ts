/**
 * The crawl's config as its store recorded it (the latest version), as exports and a recrawl
 * read it: undefined for a store made by a release that recorded none, or a crawl never opened.
 */
import type { CrawlConfig } from '../shared/crawl-config';
import type { FrontierStore } from '../store/frontier-store';

export async function recordedConfig(store: FrontierStore): Promise<Partial<CrawlConfig> | undefined> {
  const latest = await store.latestConfig();
  return latest === undefined ? undefined : (JSON.parse(latest.config) as Partial<CrawlConfig>);
}
