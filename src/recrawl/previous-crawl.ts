/**
 * A recrawl's earlier crawl must exist and have records: otherwise every URL would silently
 * count as new. Checked through the store interface when the frontier is seeded, so it holds
 * for every way a crawl starts (the CLI checks earlier, where it can see the data directory).
 */
import { ApplicationFailure } from '@temporalio/common';
import { INVALID_CONFIG, InvalidCrawlConfigError } from '../shared/crawl-config';
import type { ActivityDeps } from '../activities/deps';

export async function checkPreviousCrawl({ stores, crawlExists }: Pick<ActivityDeps, 'stores' | 'crawlExists'>, crawlId: string, recrawlOf: string): Promise<void> {
  // Typed with the code of every invalid input, so the workflow fails naming the field, as for any other;
  // an ApplicationFailure, so the 0.2.0 seeding activity (which classifies nothing) does not retry it.
  const invalid = (reason: string) => ApplicationFailure.nonRetryable(new InvalidCrawlConfigError('recrawlOf', reason).message, INVALID_CONFIG);
  if (recrawlOf === crawlId) throw invalid('must name an earlier crawl, not this one');
  // Asked first: opening a crawl's store through the registry would make an empty one.
  if (!(await crawlExists(recrawlOf))) throw invalid(`no crawl "${recrawlOf}" in this store to compare with`);
  const { processed } = await stores.use(recrawlOf, (previous) => previous.totals());
  if (processed === 0) throw invalid(`crawl "${recrawlOf}" has no records to compare with`);
}
