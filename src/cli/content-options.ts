/**
 * Checks of the content settings that need more than the schema knows: the crawl's own ID,
 * the export format and the local data directory.
 */
import { existsSync } from 'node:fs';
import type { CrawlConfig } from '../shared/crawl-config';
import type { ExportFormat } from '../results/export-results';
import { crawlStorePath } from '../store/sqlite-store';
import { storeLocation, type StoreConfig } from '../store/store-url';
import { UsageError } from './crawl-options';

/**
 * For `crawl` and `demo`: a WARC export needs stored bodies, and a recrawl's earlier crawl must
 * exist (else every URL would silently count as new). With SQLite files that is checked here;
 * with a server database the crawl's seeding fails with the same message.
 */
export function checkContentOptions(config: CrawlConfig, crawlId: string, format: ExportFormat, store: StoreConfig): void {
  if (format === 'warc' && !config.storeBodies) {
    throw new UsageError('--format warc: needs --store-bodies (storeBodies in --config): the WARC file is made of the stored bodies');
  }
  checkRecrawlOf(config, crawlId, store);
}

/**
 * A recrawl's earlier crawl is not the crawl itself, and (with SQLite files) is a crawl of the
 * data directory. `crawlId` is undefined for a schedule, whose crawls get their IDs when they start.
 */
export function checkRecrawlOf(config: CrawlConfig, crawlId: string | undefined, store: StoreConfig): void {
  if (config.recrawlOf === undefined) return;
  if (config.recrawlOf === crawlId) throw new UsageError('--recrawl-of: must name an earlier crawl, not this one');
  const location = storeLocation(store);
  if (location.kind === 'sqlite' && !existsSync(crawlStorePath(location.dataDir, config.recrawlOf))) {
    throw new UsageError(`--recrawl-of: no crawl "${config.recrawlOf}" in ${location.dataDir}`);
  }
}
