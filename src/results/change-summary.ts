/** The line that sums up a recrawl, for `crawl` and `results` output. */
import type { ChangeTotals } from '../store/frontier-store';
import { openCrawlStore } from './export-jsonl';

export function describeChanges(changes: ChangeTotals): string {
  return `compared with the earlier crawl: ${Object.entries(changes).map(([kind, n]) => `${n} ${kind}`).join(', ')}`;
}

/** The recrawl line of a finished crawl in the data directory, or undefined when it is not a recrawl. */
export async function storedChangeSummary(dataDir: string, crawlId: string): Promise<string | undefined> {
  const store = openCrawlStore(dataDir, crawlId);
  try {
    const { changes } = await store.totals();
    return Object.values(changes).some((n) => n > 0) ? describeChanges(changes) : undefined;
  } finally {
    await store.close();
  }
}
