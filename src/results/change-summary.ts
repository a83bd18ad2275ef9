/** The line that sums up a recrawl, for `crawl` and `results` output. */
import type { ChangeTotals } from '../store/frontier-store';
import type { StoreConfig } from '../store/store-url';
import { withCrawlStore } from './export-jsonl';

/** Only a recrawl counts changes: every kind stays zero otherwise. */
export function hasChanges(changes: ChangeTotals): boolean {
  return Object.values(changes).some((n) => n > 0);
}

export function describeChanges(changes: ChangeTotals): string {
  return `compared with the earlier crawl: ${Object.entries(changes).map(([kind, n]) => `${n} ${kind}`).join(', ')}`;
}

/** The recrawl line of a finished crawl, or undefined when it is not a recrawl. */
export function storedChangeSummary(config: StoreConfig, crawlId: string): Promise<string | undefined> {
  return withCrawlStore(config, crawlId, async (store) => {
    const { changes } = await store.totals();
    return hasChanges(changes) ? describeChanges(changes) : undefined;
  });
}
