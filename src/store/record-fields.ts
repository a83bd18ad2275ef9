/**
 * The fields of a page record, declared once: each field's column, how it is stored and read
 * back, and its CSV cell. Both frontier stores build their record statements from this list
 * (the columns a completion writes, the columns a read selects, the conversion either way),
 * and the CSV export its columns, and SQLite's schema for a new file its record columns; so a
 * new field is one entry here plus a migration in each store (test/unit-store.test.ts fails on
 * a store without a column for every field).
 */
import type { PageRecord } from './frontier-store';

/**
 * How a value is kept: text or an integer, as is; a flag (SQLite 1/0, PostgreSQL boolean, read
 * back as 0/1 by both); a JSON list or object in a text column (an empty object kept as NULL);
 * `json`, a JSON value or null in a text column (NULL is null).
 */
export type Storage = 'text' | 'integer' | 'flag' | 'json-list' | 'json-object' | 'json';

interface RecordField {
  name: keyof PageRecord;
  column: string;
  storage: Storage;
  /** What the field means, for the record table in docs/configuration.md (`npm run docs:config`). */
  doc: string;
  /** Set when the URL is queued, not by its completion: never null. */
  queued?: true;
  /**
   * What the column holds until the completion writes the field (NOT NULL, with this default),
   * for fields the record never leaves null and a queued URL has no value of yet.
   */
  default?: number | boolean;
  /** What a NULL column reads back as, for fields the record never leaves null. */
  nullAs?: string;
}

/** In CSV column order (`fields` has columns of its own, `fields.<name>`, after these). */
export const RECORD_FIELDS: readonly RecordField[] = [
  { name: 'url', column: 'url', storage: 'text', queued: true, doc: 'the normalized URL' },
  { name: 'depth', column: 'depth', storage: 'integer', queued: true, doc: 'link hops from a seed or sitemap URL' },
  { name: 'status', column: 'status', storage: 'integer', doc: 'HTTP status, or `null`' },
  { name: 'error', column: 'error', storage: 'text', doc: '`null`, or a short code: `timeout`, `dns`, `connect`, `reset`, `truncated`, `too-large`, `bad-content`, `redirect-loop`, `too-many-redirects`, `bad-redirect`, `blocked-address`, `network`, `tls-certificate` (the server\'s certificate was refused: not from a trusted CA, for another host name, expired or not yet valid; not retried), `render-failed`, or the code of the cause a batch failed with for good (`request-secret`, `batch-failed`, ...)' },
  { name: 'skipped', column: 'skipped', storage: 'text', doc: '`null`, or why the page was not fetched or kept: `robots`, `host-page-cap`, `content-type`, `canonical` (a duplicate of its canonical URL), `redirect-out-of-scope`, `redirect-excluded`, `redirect-not-included`' },
  { name: 'change', column: 'change', storage: 'text', doc: '`new`, `changed`, `unchanged` or `gone` in a recrawl, and `null` otherwise' },
  { name: 'title', column: 'title', storage: 'text', doc: 'the page title' },
  { name: 'fetchedAt', column: 'fetched_at', storage: 'text', nullAs: '', doc: 'when the crawl decided about the URL, in ISO 8601, UTC with milliseconds (`2026-06-01T12:00:00.000Z`), never empty: when it was fetched, or skipped or given up; for a `gone` record added at the end of a recrawl (`status` null), when the crawl recorded it gone' },
  { name: 'finalUrl', column: 'final_url', storage: 'text', doc: 'the URL after redirects' },
  { name: 'contentType', column: 'content_type', storage: 'text', doc: 'the response\'s media type' },
  { name: 'bytes', column: 'bytes', storage: 'integer', default: 0, doc: 'the body\'s size' },
  { name: 'canonical', column: 'canonical', storage: 'text', doc: 'the page\'s `rel=canonical` target' },
  { name: 'noindex', column: 'noindex', storage: 'flag', default: false, doc: 'the page\'s robots `noindex` (meta or X-Robots-Tag)' },
  { name: 'etag', column: 'etag', storage: 'text', doc: 'the response\'s `ETag`; a recrawl sends it back as `If-None-Match`' },
  { name: 'lastModified', column: 'last_modified', storage: 'text', doc: 'the response\'s `Last-Modified`; a recrawl sends it back as `If-Modified-Since`' },
  { name: 'contentHash', column: 'content_hash', storage: 'text', doc: 'sha256 (hex) of the decoded body of an HTML page, which a recrawl compares with the earlier crawl\'s' },
  { name: 'bodyRef', column: 'body_ref', storage: 'text', doc: 'where the page\'s WARC records were stored (`<file>#<offset>+<length>` in the crawl\'s body directory, or `db:<id>` with PostgreSQL), or `null`; for an unchanged page in a recrawl, a revisit record with no body' },
  {
    name: 'payloadRecord',
    column: 'payload_record',
    storage: 'json',
    doc: 'the WARC `response` record that holds the page\'s payload, `{ "id": "<urn:uuid:...>", "uri": ..., "date": ... }` (its `WARC-Record-ID`, `WARC-Target-URI` and `WARC-Date`): the one this crawl stored, or for a revisit the original capture it refers to, however many recrawls back; `null` when the crawl stored no body of the page',
  },
  { name: 'links', column: 'links', storage: 'json-list', doc: 'the page\'s links (absolute, normalized)' },
  { name: 'fields', column: 'fields', storage: 'json-object', doc: '`{ "<name>": string | string[] | null }`, one entry per `extract` field (`{}` when the crawl extracts nothing)' },
];

/** The fields a completion writes, in the order `completedValues` gives their values. */
export const COMPLETED_FIELDS = RECORD_FIELDS.filter((field) => field.queued === undefined);

/** A record as both stores return it from a SELECT of `recordColumns`: column -> value. */
export type RecordRow = Record<string, string | number | null>;

/** The columns a record read selects; `flag` says how a dialect reads a flag column as 0/1. */
export function recordColumns(flag: (column: string) => string = (column) => column): string {
  return RECORD_FIELDS.map((field) => (field.storage === 'flag' ? flag(field.column) : field.column)).join(', ');
}

/** One field's value as stored; `flag` is the dialect's form of a boolean. */
function storedValue(field: RecordField, record: PageRecord, flag: (value: boolean) => unknown): unknown {
  const value = record[field.name];
  if (field.storage === 'flag') return flag(value as boolean);
  if (field.storage === 'json-list') return JSON.stringify(value);
  if (field.storage === 'json-object') return Object.keys(value as object).length > 0 ? JSON.stringify(value) : null;
  if (field.storage === 'json') return value === null ? null : JSON.stringify(value);
  return value;
}

/** The values of `COMPLETED_FIELDS` for `record`, in that order. */
export function completedValues(record: PageRecord, flag: (value: boolean) => unknown): unknown[] {
  return COMPLETED_FIELDS.map((field) => storedValue(field, record, flag));
}

function readValue(field: RecordField, raw: string | number | null): unknown {
  if (field.storage === 'flag') return raw === 1;
  if (field.storage === 'json-list') return raw === null ? [] : (JSON.parse(raw as string) as unknown);
  if (field.storage === 'json-object') return raw === null ? {} : (JSON.parse(raw as string) as unknown);
  if (field.storage === 'json') return raw === null ? null : (JSON.parse(raw as string) as unknown);
  return raw ?? field.nullAs ?? null;
}

export function toRecord(row: RecordRow): PageRecord {
  const record: Record<string, unknown> = {};
  for (const field of RECORD_FIELDS) record[field.name] = readValue(field, row[field.column] ?? null);
  return record as unknown as PageRecord;
}
