/**
 * Turns a fetch (or its failure) into the page record and the links to enqueue. Pure: crawl
 * policy (scope, include/exclude, depth, nofollow, canonical, content type) is applied here,
 * the store and network are not touched. In a recrawl it also compares with the previous
 * crawl's record: a 304 takes that record's content and links, so the recrawl still reaches
 * every page behind an unchanged one.
 */
import { hash } from 'node:crypto';
import type { CrawlConfig } from '../shared/crawl-config';
import type { FrontierEntry, PageRecord } from '../store/frontier-store';
import type { FetchedPage } from '../fetch/fetch-page';
import type { FetchErrorCode } from '../fetch/errors';
import { buildUrlPolicy, type AdmitRefusal, type UrlPolicy } from '../policy/url-policy';
import { buildContentTypeFilter, type ContentTypeFilter } from '../policy/content-type';
import { HtmlTooDeepError, parseHtmlPage, type ParsedPage } from '../parse/html-page';
import type { Extractor } from '../parse/extract-fields';
import { changeOf } from '../recrawl/change';
import { warcDate, type Capture, type EarlierCapture } from '../warc/warc-record';

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

export function buildPagePolicy(config: CrawlConfig, seedScopeKeys: Iterable<string> = []): PagePolicy {
  return { urls: buildUrlPolicy(config, seedScopeKeys), acceptsContentType: buildContentTypeFilter(config.allowedContentTypes) };
}

export interface PageOutcome {
  record: PageRecord;
  discovered: FrontierEntry[];
  /** Links found but not followed, by reason. */
  dropped?: Partial<Record<DropReason, number>>;
  /**
   * What `storeBodies` keeps of an HTML page: the redirects its fetch followed, then its
   * response, or for an unchanged page in a recrawl only its headers, as a revisit of the
   * earlier capture (the body is not stored again).
   */
  capture?: Capture;
}

/** What a page's outcome depends on besides the fetch: set up once per crawl, plus the URL's previous record. */
export interface OutcomeContext {
  extractor?: Extractor;
  /** Present in a recrawl; `previous` is the earlier crawl's record of the URL, if it had one. */
  recrawl?: { previous: PageRecord | undefined };
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
    fields: {},
    etag: null,
    lastModified: null,
    contentHash: null,
    change: null,
    bodyRef: null,
    payloadRecord: null,
  };
}

const NO_BODY = Buffer.alloc(0);

/**
 * The capture a revisit of `previous` refers to: the record holding the payload, which the
 * earlier record names (the original capture, if that record was a revisit itself). A record
 * stored before records named it was a response whenever it was not a revisit: its own.
 */
function earlierCapture(previous: PageRecord): EarlierCapture {
  return previous.payloadRecord ?? { id: null, uri: previous.finalUrl ?? previous.url, date: warcDate(new Date(previous.fetchedAt)) };
}

function capture(page: FetchedPage, previous?: PageRecord): Capture {
  const exchange = { url: page.finalUrl, status: page.status, headers: page.headers, requestHeaders: page.requestHeaders, body: page.body ?? NO_BODY };
  const { redirects } = page;
  return previous === undefined ? { exchange, redirects } : { exchange, redirects, earlier: earlierCapture(previous) };
}

function singleHeader(page: FetchedPage, name: string): string | null {
  const value = page.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/** The links of a page to enqueue, after nofollow, depth, scope and include/exclude. */
function follow(links: readonly URL[], nofollow: boolean, item: Claimed, config: CrawlConfig, urls: UrlPolicy): Omit<PageOutcome, 'record'> {
  const depth = item.depth + 1;
  if (nofollow) return { discovered: [], dropped: { nofollow: links.length } };
  if (depth > config.maxDepth) return { discovered: [], dropped: { 'max-depth': links.length } };
  const discovered: FrontierEntry[] = [];
  const dropped: Partial<Record<DropReason, number>> = {};
  for (const url of links) {
    const refusal = urls.admit(url);
    if (refusal === null) discovered.push({ url: url.href, host: url.host, depth });
    else dropped[refusal] = (dropped[refusal] ?? 0) + 1;
  }
  return { discovered, dropped };
}

/** A 304 to our conditional request: the previous record's content stands, its links are followed again. */
function revalidatedOutcome(item: Claimed, page: FetchedPage, previous: PageRecord, config: CrawlConfig, urls: UrlPolicy): PageOutcome {
  const record: PageRecord = {
    ...previous,
    depth: item.depth,
    status: page.status,
    fetchedAt: new Date().toISOString(),
    bytes: page.bytes,
    etag: singleHeader(page, 'etag') ?? previous.etag,
    lastModified: singleHeader(page, 'last-modified') ?? previous.lastModified,
    change: 'unchanged',
    bodyRef: null,
    payloadRecord: null,
  };
  return withEarlierLinks({ record, discovered: [], capture: capture(page, previous) }, previous.links, config, urls);
}

/** The outcome with `links`, an earlier crawl's links of the page, followed in place of what this crawl found on it. */
export function withEarlierLinks(outcome: PageOutcome, links: readonly string[], config: CrawlConfig, urls: UrlPolicy): PageOutcome {
  return { ...outcome, ...follow(links.map((link) => new URL(link)), false, outcome.record, config, urls) };
}

export function skippedOutcome(item: Claimed, reason: string): PageOutcome {
  return { record: { ...emptyRecord(item), skipped: reason }, discovered: [] };
}

export function failedOutcome(item: Claimed, error: FetchErrorCode, status: number | null = null): PageOutcome {
  return { record: { ...emptyRecord(item), error, status }, discovered: [] };
}

/** A recrawl's record that was not fetched (skipped, failed) still says how it compares. */
export function withChange(outcome: PageOutcome, context: OutcomeContext): PageOutcome {
  if (context.recrawl === undefined) return outcome;
  return { ...outcome, record: { ...outcome.record, change: changeOf(context.recrawl.previous, outcome.record) } };
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

export function fetchedOutcome(item: Claimed, page: FetchedPage, config: CrawlConfig, policy: PagePolicy, context: OutcomeContext = {}): PageOutcome {
  const previous = context.recrawl?.previous;
  if (page.status === 304 && previous !== undefined) return revalidatedOutcome(item, page, previous, config, policy.urls);
  const outcome = pageOutcome(item, page, config, policy, context.extractor);
  if (context.recrawl === undefined) return outcome;
  const change = changeOf(previous, outcome.record);
  // A revisit stands for a body only when the earlier crawl stored it: one run without storeBodies
  // has no capture to point to, and the body this crawl holds is stored whole instead.
  const revisit = change === 'unchanged' && outcome.capture !== undefined && previous !== undefined && previous.bodyRef !== null;
  return { ...outcome, record: { ...outcome.record, change }, capture: revisit ? capture(page, previous) : outcome.capture };
}

function pageOutcome(item: Claimed, page: FetchedPage, config: CrawlConfig, policy: PagePolicy, extractor: Extractor | undefined): PageOutcome {
  const record: PageRecord = {
    ...emptyRecord(item),
    status: page.status,
    finalUrl: page.finalUrl === item.url ? null : page.finalUrl,
    contentType: page.contentType,
    bytes: page.bytes,
    etag: singleHeader(page, 'etag'),
    lastModified: singleHeader(page, 'last-modified'),
  };
  if (page.redirectBlocked !== null) {
    const refusal = policy.urls.admit(new URL(page.redirectBlocked)) ?? 'out-of-scope';
    return { record: { ...record, skipped: `redirect-${refusal}`, links: [page.redirectBlocked] }, discovered: [] };
  }
  if (page.status < 300 && !policy.acceptsContentType(page.contentType)) return { record: { ...record, skipped: CONTENT_TYPE_SKIP }, discovered: [] };
  if (page.html === null || page.body === null) return { record, discovered: [] };
  const contentHash = hash('sha256', page.body, 'hex');

  let parsed: ParsedPage;
  try {
    parsed = parseHtmlPage(
      page.html,
      page.finalUrl,
      page.robotsHeader,
      { maxLinks: config.maxLinksPerPage, maxUrlLength: config.maxUrlLength, extractor },
      policy.urls.resolve,
    );
  } catch (err) {
    if (err instanceof HtmlTooDeepError) return { record: { ...record, error: 'bad-content', contentHash }, discovered: [] };
    throw err;
  }
  const pageRecord = { ...record, title: parsed.title, links: parsed.links, canonical: parsed.canonical, noindex: parsed.noindex, fields: parsed.fields, contentHash };
  // A 304 follows the previous record's links, and records do not keep nofollow: a nofollow
  // page keeps no validators, so a recrawl always reads it and honours its directives again.
  if (parsed.nofollow) Object.assign(pageRecord, { etag: null, lastModified: null });
  const duplicateOf = config.respectCanonical ? canonicalTarget(item, page, parsed.canonical, policy.urls) : null;
  if (duplicateOf !== null) {
    // The same content under its preferred URL: that URL is crawled in the page's place, at the
    // page's depth, and the page's links are left to it.
    return { record: { ...pageRecord, skipped: CANONICAL_DUPLICATE }, discovered: [{ url: duplicateOf.href, host: duplicateOf.host, depth: item.depth }], capture: capture(page) };
  }
  return { record: pageRecord, ...follow(parsed.linkUrls, parsed.nofollow, item, config, policy.urls), capture: capture(page) };
}
