/**
 * Small helpers of the crawl workflow: counters, the Web UI's live details, the search
 * attributes that index a crawl, and update validation.
 */
import { ApplicationFailure, upsertSearchAttributes } from '@temporalio/workflow';
import { describeHold, type BatchTotals, type CrawlProgress, type HostState } from '../shared/crawl-types';
import { INVALID_CONFIG_FAILURE, InvalidCrawlConfigError } from '../shared/crawl-config';
import { CRAWL_ID, CRAWL_STATUS, PAGES_CRAWLED, SEED_HOST } from '../shared/search-attributes';

export function emptyTotals(): BatchTotals {
  return { processed: 0, fetched: 0, errors: 0, skipped: 0, bytes: 0 };
}

export function addTotals(into: BatchTotals, from: BatchTotals): void {
  into.processed += from.processed;
  into.fetched += from.fetched;
  into.errors += from.errors;
  into.skipped += from.skipped;
  into.bytes += from.bytes;
}

/** The "current details" shown on the workflow's page in the Web UI (Markdown): progress, and the hosts the crawl holds and why. */
export function describeProgress(progress: CrawlProgress, held: readonly HostState[] = []): string {
  const hosts = progress.hostsInFlight.slice(0, 10).join(', ') || 'none';
  return [
    `**${progress.status}** · run ${progress.run}`,
    `**URLs** ${progress.processed} (fetched ${progress.fetched}, errors ${progress.errors}, skipped ${progress.skipped}) · **queued** ${progress.queued}`,
    `**batches** ${progress.batchesInFlight} in flight, ${progress.batchesCompleted} done · **hosts in flight** ${hosts}`,
    ...(progress.storeWait ? [`**waiting for the store** since ${new Date(progress.storeWait.since).toISOString()}: ${progress.storeWait.message}`] : []),
    ...progress.failures.map(({ code, message, batches }) => `**failed batches** ${batches} · \`${code}\` ${message}`),
    ...held.map((state) => `**held** ${state.host} (${state.queued} queued) ${describeHold(state)}`),
  ].join('\n\n');
}

export function indexedAttributes(crawlId: string, seedHost: string, status: string, pages: number): void {
  upsertSearchAttributes([
    { key: CRAWL_ID, value: crawlId },
    { key: SEED_HOST, value: seedHost },
    { key: CRAWL_STATUS, value: status },
    { key: PAGES_CRAWLED, value: pages },
  ]);
}

/** A crawl's input, or an update's, that is invalid, as the client sees it: the field named, never retried. */
export function invalidConfig(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, INVALID_CONFIG_FAILURE);
}

/** Update validators throw; the rejection reaches the caller and nothing enters history. */
export function validateWith<T>(parse: (input: unknown) => T): (input: unknown) => void {
  return (input) => {
    try {
      parse(input);
    } catch (err) {
      if (err instanceof InvalidCrawlConfigError) throw invalidConfig(err.message);
      throw err;
    }
  };
}
