/**
 * How a batch turns a URL into a page: fetched (fetch batches), or fetched and rendered in a
 * browser (render batches, see render-batch.ts). Everything else about a batch is the same.
 */
import { fetchPage, type FetchedPage, type FetchPolicy } from '../fetch/fetch-page';
import type { Transport } from '../fetch/transport';
import type { CrawlConfig } from '../shared/crawl-config';

export interface PageLoader {
  /** Claims URLs enqueued for rendering (true) or for fetching. */
  render: boolean;
  /** `headers` are added to the page request (a recrawl's conditional headers). */
  load(url: string, policy: FetchPolicy, config: CrawlConfig, signal: AbortSignal, headers: Record<string, string>): Promise<FetchedPage>;
}

export function fetchLoader(transport: Transport): PageLoader {
  return { render: false, load: (url, policy, _config, signal, headers) => fetchPage(transport, url, policy, signal, headers) };
}
