/**
 * Turns a fetch (or its failure) into the page record and the links to enqueue. Pure: crawl
 * policy (scope, depth, nofollow) is applied here, the store and network are not touched.
 */
import type { CrawlConfig } from '../shared/crawl-config';
import type { FrontierEntry, PageRecord } from '../store/frontier-store';
import type { FetchedPage } from '../fetch/fetch-page';
import type { FetchErrorCode } from '../fetch/errors';
import { buildUrlPolicy, type AdmitRefusal, type UrlPolicy } from '../policy/url-policy';
import { buildContentTypeFilter, type ContentTypeFilter } from '../policy/content-type';
import { HtmlTooDeepError, parseHtmlPage, type ParsedPage } from '../parse/html-page';

/** Why a link found on a page was not followed (bounded set: a metric label). */
export type DropReason = 'nofollow' | 'max-depth' | AdmitRefusal;

/** The `skipped` reason of a page whose rel=canonical names another URL (queued in its place). */
export const CANONICAL_DUPLICATE = 'canonical';
/** The `skipped` reason of a successful response whose media type the crawl does not keep. */
export const CONTENT_TYPE_SKIP = 'content-type';

/** What a crawl's config says about pages, built once per crawl. */
export interface PagePolicy {
  urls: UrlPolicy;
  acceptsContentType: ContentTypeFilter;
}

export function buildPagePolicy(config: CrawlConfig): PagePolicy {
  return { urls: buildUrlPolicy(config), acceptsContentType: buildContentTypeFilter(config.allowedContentTypes) };
}

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

/**
 * The URL a page declares canonical when it is another page the crawl may follow: the page is
 * then a duplicate of it. A canonical naming the page itself (or where it redirected to), or a
 * URL the crawl may not follow, leaves the page as it is.
 */
function canonicalTarget(item: Claimed, page: FetchedPage, canonical: string | null, urls: UrlPolicy): URL | null {
  if (canonical === null || canonical === item.url || canonical === urls.normalize(page.finalUrl)) return null;
  const target = new URL(canonical);
  return urls.admit(target) === null ? target : null;
}

export function fetchedOutcome(item: Claimed, page: FetchedPage, config: CrawlConfig, policy: PagePolicy): PageOutcome {
  const record: PageRecord = {
    ...emptyRecord(item),
    status: page.status,
    finalUrl: page.finalUrl === item.url ? null : page.finalUrl,
    contentType: page.contentType,
    bytes: page.bytes,
  };
  if (page.redirectBlocked !== null) {
    const refusal = policy.urls.admit(new URL(page.redirectBlocked)) ?? 'out-of-scope';
    return { record: { ...record, skipped: `redirect-${refusal}`, links: [page.redirectBlocked] }, discovered: [] };
  }
  if (page.status < 300 && !policy.acceptsContentType(page.contentType)) return { record: { ...record, skipped: CONTENT_TYPE_SKIP }, discovered: [] };
  if (page.html === null) return { record, discovered: [] };

  let parsed: ParsedPage;
  try {
    parsed = parseHtmlPage(
      page.html,
      page.finalUrl,
      page.robotsHeader,
      { maxLinks: config.maxLinksPerPage, maxUrlLength: config.maxUrlLength },
      policy.urls.normalize,
    );
  } catch (err) {
    if (err instanceof HtmlTooDeepError) return { record: { ...record, error: 'bad-content' }, discovered: [] };
    throw err;
  }
  const pageRecord = { ...record, title: parsed.title, links: parsed.links, canonical: parsed.canonical, noindex: parsed.noindex };
  const duplicateOf = config.respectCanonical ? canonicalTarget(item, page, parsed.canonical, policy.urls) : null;
  if (duplicateOf !== null) {
    // The same content under its preferred URL: that URL is crawled in the page's place, at the
    // page's depth, and the page's links are left to it.
    return { record: { ...pageRecord, skipped: CANONICAL_DUPLICATE }, discovered: [{ url: duplicateOf.href, host: duplicateOf.host, depth: item.depth }] };
  }
  const depth = item.depth + 1;
  if (parsed.nofollow) return { record: pageRecord, discovered: [], dropped: { nofollow: parsed.links.length } };
  if (depth > config.maxDepth) return { record: pageRecord, discovered: [], dropped: { 'max-depth': parsed.links.length } };
  const discovered: FrontierEntry[] = [];
  const dropped: Partial<Record<DropReason, number>> = {};
  for (const link of parsed.links) {
    const url = new URL(link);
    const refusal = policy.urls.admit(url);
    if (refusal === null) discovered.push({ url: link, host: url.host, depth });
    else dropped[refusal] = (dropped[refusal] ?? 0) + 1;
  }
  return { record: pageRecord, discovered, dropped };
}
