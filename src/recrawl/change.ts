/**
 * Incremental recrawl policy, pure: which validators to send for a URL the previous crawl
 * recorded, and how the new record compares with the old one.
 */
import type { ChangeKind, PageRecord } from '../store/frontier-store';

const GONE_STATUSES = new Set([404, 410]);

/**
 * If-None-Match / If-Modified-Since from the previous record's validators (none, none sent).
 * None either when this crawl stores bodies and the previous one did not store this HTML page's:
 * a 304 would leave it nothing to store but a revisit of a capture no WARC file holds, so the
 * body is downloaded again to be stored whole.
 */
export function conditionalHeaders(previous: PageRecord | undefined, storeBodies = false): Record<string, string> {
  const headers: Record<string, string> = {};
  if (storeBodies && previous?.contentHash != null && previous.bodyRef === null) return headers;
  if (previous?.etag) headers['if-none-match'] = previous.etag;
  if (previous?.lastModified) headers['if-modified-since'] = previous.lastModified;
  return headers;
}

/** A 304 stands for the status it revalidated, so a recrawl of a recrawl compares like with like. */
const effectiveStatus = (status: number | null): number | null => (status === 304 ? 200 : status);

const isLive = (record: PageRecord): boolean => {
  const status = effectiveStatus(record.status);
  return status !== null && status >= 200 && status < 400;
};

/**
 * Whether this crawl got no answer of the page's own: a fetch error, a 429 or 5xx, or a skip
 * before any request (robots.txt, the host's page cap). Whatever links the page has now are
 * unknown, not absent.
 */
function unread(record: PageRecord): boolean {
  if (record.error !== null) return true;
  if (record.status === null) return record.skipped !== null;
  return record.status === 429 || record.status >= 500;
}

/**
 * A page that was live in the earlier crawl and that this crawl could not read: a recrawl
 * follows its earlier links, as for a 304. Otherwise an outage, or one failing hub page, would
 * leave every page behind it unreached, and the end of the crawl would record them all `gone`.
 */
export function keepsEarlierLinks(previous: PageRecord | undefined, current: PageRecord): previous is PageRecord {
  return previous !== undefined && previous.change !== 'gone' && isLive(previous) && unread(current);
}

/**
 * - no previous record, or one that was gone and is back: `new` (still gone: `unchanged`)
 * - 304, or the same status, hash, error and skip reason: `unchanged`
 * - a page that was live and now answers 404/410: `gone`
 * - anything else: `changed`
 */
export function changeOf(previous: PageRecord | undefined, current: PageRecord): ChangeKind {
  if (previous === undefined) return 'new';
  // Gone last time: back now is new, still not there is no change.
  if (previous.change === 'gone') return isLive(current) ? 'new' : 'unchanged';
  if (current.status === 304) return 'unchanged';
  if (isLive(previous) && GONE_STATUSES.has(current.status ?? 0)) return 'gone';
  const same =
    effectiveStatus(previous.status) === current.status &&
    previous.contentHash === current.contentHash &&
    previous.error === current.error &&
    previous.skipped === current.skipped;
  return same ? 'unchanged' : 'changed';
}
