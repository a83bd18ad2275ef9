/**
 * Turns a fetch (or its failure) into the page record and the links to enqueue. Pure: crawl
 * policy (scope, depth, nofollow) is applied here, the store and network are not touched.
 * In a recrawl it also compares with the previous crawl's record: a 304 takes that record's
 * content and links, so the recrawl still reaches every page behind an unchanged one.
 */
import { createHash } from 'node:crypto';
import type { CrawlConfig } from '../shared/crawl-config';
import type { FrontierEntry, PageRecord } from '../store/frontier-store';
import type { FetchedPage } from '../fetch/fetch-page';
import type { FetchErrorCode } from '../fetch/errors';
import type { ScopePredicate } from '../policy/scope';
import { HtmlTooDeepError, parseHtmlPage, type ParsedPage } from '../parse/html-page';
import type { Extractor } from '../parse/extract-fields';
import { changeOf } from '../recrawl/change';
import type { Capture } from '../warc/warc-record';

/** Why a link found on a page was not followed (bounded set: a metric label). */
export type DropReason = 'nofollow' | 'max-depth' | 'out-of-scope';

export interface PageOutcome {
  record: PageRecord;
  discovered: FrontierEntry[];
  /** Links found but not followed, by reason. */
  dropped?: Partial<Record<DropReason, number>>;
  /**
   * What `storeBodies` keeps of an HTML page: its response, or for an unchanged page in a
   * recrawl only its headers, as a revisit of the earlier capture (the body is not stored again).
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
  };
}

const NO_BODY = Buffer.alloc(0);

function capture(page: FetchedPage, previous?: PageRecord): Capture {
  const exchange = { url: page.finalUrl, status: page.status, headers: page.headers, requestHeaders: page.requestHeaders, body: page.body ?? NO_BODY };
  return previous === undefined ? { exchange } : { exchange, earlier: { uri: previous.finalUrl ?? previous.url, date: new Date(previous.fetchedAt) } };
}

function singleHeader(page: FetchedPage, name: string): string | null {
  const value = page.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/** The links of a page to enqueue, after nofollow, depth and scope. */
function follow(links: readonly string[], nofollow: boolean, item: Claimed, config: CrawlConfig, inScope: ScopePredicate): Omit<PageOutcome, 'record'> {
  const depth = item.depth + 1;
  if (nofollow) return { discovered: [], dropped: { nofollow: links.length } };
  if (depth > config.maxDepth) return { discovered: [], dropped: { 'max-depth': links.length } };
  const discovered: FrontierEntry[] = [];
  for (const link of links) {
    const url = new URL(link);
    if (inScope(url)) discovered.push({ url: link, host: url.host, depth });
  }
  return { discovered, dropped: { 'out-of-scope': links.length - discovered.length } };
}

/** A 304 to our conditional request: the previous record's content stands, its links are followed again. */
function revalidatedOutcome(item: Claimed, page: FetchedPage, previous: PageRecord, config: CrawlConfig, inScope: ScopePredicate): PageOutcome {
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
  };
  return { record, ...follow(previous.links, false, item, config, inScope), capture: capture(page, previous) };
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

export function fetchedOutcome(item: Claimed, page: FetchedPage, config: CrawlConfig, inScope: ScopePredicate, context: OutcomeContext = {}): PageOutcome {
  const previous = context.recrawl?.previous;
  if (page.status === 304 && previous !== undefined) return revalidatedOutcome(item, page, previous, config, inScope);
  const outcome = pageOutcome(item, page, config, inScope, context.extractor);
  if (context.recrawl === undefined) return outcome;
  const change = changeOf(previous, outcome.record);
  const revisit = change === 'unchanged' && outcome.capture !== undefined && previous !== undefined;
  return { ...outcome, record: { ...outcome.record, change }, capture: revisit ? capture(page, previous) : outcome.capture };
}

function pageOutcome(item: Claimed, page: FetchedPage, config: CrawlConfig, inScope: ScopePredicate, extractor: Extractor | undefined): PageOutcome {
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
    return { record: { ...record, skipped: 'redirect-out-of-scope', links: [page.redirectBlocked] }, discovered: [] };
  }
  if (page.html === null || page.body === null) return { record, discovered: [] };
  const contentHash = createHash('sha256').update(page.body).digest('hex');

  let parsed: ParsedPage;
  try {
    parsed = parseHtmlPage(page.html, page.finalUrl, page.robotsHeader, { maxLinks: config.maxLinksPerPage, maxUrlLength: config.maxUrlLength, extractor });
  } catch (err) {
    if (err instanceof HtmlTooDeepError) return { record: { ...record, error: 'bad-content', contentHash }, discovered: [] };
    throw err;
  }
  const pageRecord = { ...record, title: parsed.title, links: parsed.links, canonical: parsed.canonical, noindex: parsed.noindex, fields: parsed.fields, contentHash };
  // A 304 follows the previous record's links, and records do not keep nofollow: a nofollow
  // page keeps no validators, so a recrawl always reads it and honours its directives again.
  if (parsed.nofollow) Object.assign(pageRecord, { etag: null, lastModified: null });
  return { record: pageRecord, ...follow(parsed.links, parsed.nofollow, item, config, inScope), capture: capture(page) };
}
