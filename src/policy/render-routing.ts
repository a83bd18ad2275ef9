/**
 * Which URLs a crawl renders in a browser instead of only fetching: decided once per URL, when
 * it is queued, so the store can keep render work apart and the workflow can schedule it on
 * the render task queue.
 */
import type { CrawlConfig } from '../shared/crawl-config';
import type { FrontierEntry } from '../store/frontier-store';
import { buildUrlMatcher, type UrlMatcher } from './url-patterns';

export type { UrlMatcher } from './url-patterns';

/** The crawl's `render.match` as one predicate; null when the crawl renders nothing. */
export function renderMatcher(config: Pick<CrawlConfig, 'render'>): UrlMatcher | null {
  return config.render === undefined ? null : buildUrlMatcher(config.render.match);
}

/** The entries with those `renders` selects marked to be rendered; as they are when it is null. */
export function markRendered(entries: FrontierEntry[], renders: UrlMatcher | null): FrontierEntry[] {
  return renders === null ? entries : entries.map((entry) => (renders(entry.url) ? { ...entry, render: true } : entry));
}
