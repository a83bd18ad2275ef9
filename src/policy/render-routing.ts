/**
 * Which URLs a crawl renders in a browser instead of only fetching: decided once per URL, when
 * it is queued, so the store can keep render work apart and the workflow can schedule it on
 * the render task queue.
 */
import type { CrawlConfig } from '../shared/crawl-config';
import type { FrontierEntry } from '../store/frontier-store';
import { anyUrlPattern } from './url-patterns';

/** Whether a queued (normalized) URL is to be rendered. */
export type UrlMatcher = (url: string) => boolean;

/** The crawl's `render.match` (the same patterns as `include`) as one predicate; null when the crawl renders nothing. */
export function renderMatcher(config: Pick<CrawlConfig, 'render'>): UrlMatcher | null {
  const matches = config.render === undefined ? undefined : anyUrlPattern(config.render.match);
  return matches === undefined ? null : (url) => matches(new URL(url));
}

/** The entries with those `renders` selects marked to be rendered; as they are when it is null. */
export function markRendered(entries: FrontierEntry[], renders: UrlMatcher | null): FrontierEntry[] {
  return renders === null ? entries : entries.map((entry) => (renders(entry.url) ? { ...entry, render: true } : entry));
}
