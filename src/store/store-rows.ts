/**
 * Rows as both frontier stores read them back, and their conversion to the interface's
 * shapes: one mapping, so the SQLite file and the server database return identical records.
 */
import type { ChangeKind, ClaimedUrl, PageRecord } from './frontier-store';

export interface ClaimRow {
  url: string;
  depth: number;
  attempts: number;
  skipped: string | null;
  priority: number;
}

export function toClaimed({ url, depth, attempts, skipped, priority }: ClaimRow): ClaimedUrl {
  return skipped === null ? { url, depth, attempts, priority } : { url, depth, attempts, priority, skipped };
}

export interface UrlRow {
  url: string;
  depth: number;
  status: number | null;
  error: string | null;
  skipped: string | null;
  title: string | null;
  /** The page's links as a JSON array. */
  links: string | null;
  fetched_at: string | null;
  final_url: string | null;
  content_type: string | null;
  bytes: number;
  canonical: string | null;
  /** 1 or 0. */
  noindex: number;
  /** Extracted fields as a JSON object, NULL when none. */
  fields: string | null;
  etag: string | null;
  last_modified: string | null;
  content_hash: string | null;
  change: ChangeKind | null;
  body_ref: string | null;
}

/** The columns `toRecord` reads, in the order both stores select them. */
export const RECORD_COLUMN_NAMES = [
  'url', 'depth', 'status', 'error', 'skipped', 'title', 'links', 'fetched_at', 'final_url', 'content_type', 'bytes', 'canonical', 'noindex',
  'fields', 'etag', 'last_modified', 'content_hash', 'change', 'body_ref',
] as const satisfies ReadonlyArray<keyof UrlRow>;

export const RECORD_COLUMNS = RECORD_COLUMN_NAMES.join(', ');

/** A `fields` value as stored: JSON text, NULL when the crawl extracted nothing. */
export function storedFields(fields: PageRecord['fields']): string | null {
  return Object.keys(fields).length > 0 ? JSON.stringify(fields) : null;
}

export function toRecord(row: UrlRow): PageRecord {
  return {
    url: row.url,
    depth: row.depth,
    status: row.status,
    error: row.error,
    skipped: row.skipped,
    title: row.title,
    links: row.links ? (JSON.parse(row.links) as string[]) : [],
    fetchedAt: row.fetched_at ?? '',
    finalUrl: row.final_url,
    contentType: row.content_type,
    bytes: row.bytes,
    canonical: row.canonical,
    noindex: row.noindex === 1,
    fields: row.fields ? (JSON.parse(row.fields) as PageRecord['fields']) : {},
    etag: row.etag,
    lastModified: row.last_modified,
    contentHash: row.content_hash,
    change: row.change,
    bodyRef: row.body_ref,
  };
}
