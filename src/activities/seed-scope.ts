/** What a crawl's seed file adds to its scope, as its workers read it from the store. */
import type { CrawlConfig } from '../shared/crawl-config';
import type { FrontierStore } from '../store/frontier-store';

/**
 * The scope keys the crawl's seed file added, which every policy of the crawl joins to its
 * inline seeds' (none without a seed file, or for scope `any`). The import ends before the
 * first batch, so the set is complete when a worker first reads it.
 */
export async function seedFileScope(store: FrontierStore, config: Pick<CrawlConfig, 'seedsFile' | 'scope'>): Promise<string[]> {
  return config.seedsFile === undefined || config.scope === 'any' ? [] : store.seedScope();
}
