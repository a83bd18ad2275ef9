/**
 * Turns a fetch (or its failure) into the page record and the links to enqueue. Pure: crawl
 * policy (scope, depth, nofollow) is applied here, the store and network are not touched.
 */
import type { CrawlConfig } from '../shared/crawl-config';
import type { FrontierEntry, PageRecord } from '../store/frontier-store';
import type { FetchedPage } from '../fetch/fetch-page';
import type { FetchErrorCode } from '../fetch/errors';
import type { ScopePredicate } from '../policy/scope';
import { HtmlTooDeepError, parseHtmlPage, type ParsedPage } from '../parse/html-page';

/** Why a link found on a page was not followed (bounded set: a metric label). */
export type DropReason = 'nofollow' | 'max-depth' | 'out-of-scope';

export interface PageOutcome {
  record: PageRecord;
  discovered: FrontierEntry[];
  /** Links found but not followed, by reason. */
  dropped?: Partial<Record<DropReason, number>>;
}

interface Claimed {
  url: string;
  depth: number;
}

function emptyRecord(item: Claimed): PageRecord {
  return {
    url: item.url,
    depth: item.depth,
    status: null,
    error: null,
    skipped: null,
    title: null,
    links: [],
    fetchedAt: new Date().toISOString(),
    finalUrl: null,
    contentType: null,
    bytes: 0,
    canonical: null,
    noindex: false,
  };
}

export function skippedOutcome(item: Claimed, reason: string): PageOutcome {
  return { record: { ...emptyRecord(item), skipped: reason }, discovered: [] };
}

export function failedOutcome(item: Claimed, error: FetchErrorCode, status: number | null = null): PageOutcome {
  return { record: { ...emptyRecord(item), error, status }, discovered: [] };
}

export function fetchedOutcome(item: Claimed, page: FetchedPage, config: CrawlConfig, inScope: ScopePredicate): PageOutcome {
  const record: PageRecord = {
    ...emptyRecord(item),
    status: page.status,
    finalUrl: page.finalUrl === item.url ? null : page.finalUrl,
    contentType: page.contentType,
    bytes: page.bytes,
  };
  if (page.redirectBlocked !== null) {
    return { record: { ...record, skipped: 'redirect-out-of-scope', links: [page.redirectBlocked] }, discovered: [] };
  }
  if (page.html === null) return { record, discovered: [] };

  let parsed: ParsedPage;
  try {
    parsed = parseHtmlPage(page.html, page.finalUrl, page.robotsHeader, { maxLinks: config.maxLinksPerPage, maxUrlLength: config.maxUrlLength });
  } catch (err) {
    if (err instanceof HtmlTooDeepError) return { record: { ...record, error: 'bad-content' }, discovered: [] };
    throw err;
  }
  const pageRecord = { ...record, title: parsed.title, links: parsed.links, canonical: parsed.canonical, noindex: parsed.noindex };
  const depth = item.depth + 1;
  if (parsed.nofollow) return { record: pageRecord, discovered: [], dropped: { nofollow: parsed.links.length } };
  if (depth > config.maxDepth) return { record: pageRecord, discovered: [], dropped: { 'max-depth': parsed.links.length } };
  const discovered: FrontierEntry[] = [];
  for (const link of parsed.links) {
    const url = new URL(link);
    if (inScope(url)) discovered.push({ url: link, host: url.host, depth });
  }
  return { record: pageRecord, discovered, dropped: { 'out-of-scope': parsed.links.length - discovered.length } };
}
