/**
 * Checks of the content settings that need more than the schema knows: the crawl's own ID,
 * the export format and the local data directory.
 */
import { existsSync } from 'node:fs';
import type { CrawlConfig } from '../shared/crawl-config';
import type { ExportFormat } from '../results/export-results';
import { crawlStorePath } from '../store/sqlite-store';
import { UsageError } from './crawl-options';

/**
 * For `crawl` and `demo`, which read results from the local data directory: a recrawl's
 * earlier crawl must be there (else every URL would silently count as new), and a WARC
 * export needs stored bodies.
 */
export function checkContentOptions(config: CrawlConfig, crawlId: string, format: ExportFormat, dataDir: string): void {
  if (format === 'warc' && !config.storeBodies) {
    throw new UsageError('--format warc: needs --store-bodies (storeBodies in --config): the WARC file is made of the stored bodies');
  }
  if (config.recrawlOf === undefined) return;
  if (config.recrawlOf === crawlId) throw new UsageError('--recrawl-of: must name an earlier crawl, not this one');
  if (!existsSync(crawlStorePath(dataDir, config.recrawlOf))) {
    throw new UsageError(`--recrawl-of: no crawl "${config.recrawlOf}" in ${dataDir}`);
  }
}
