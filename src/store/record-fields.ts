/**
 * The fields of a page record, declared once: each field's column, how it is stored and read
 * back, and its CSV cell. Both frontier stores build their record statements from this list
 * (the columns a completion writes, the columns a read selects, the conversion either way),
 * and the CSV export its columns, so a new field is one entry here plus a migration in each
 * store (the round trip of every field in test/unit-store.test.ts fails on a missing column).
 */
import type { PageRecord } from './frontier-store';

/**
 * How a value is kept: as is (text or integer); a flag (SQLite 1/0, PostgreSQL boolean, read
 * back as 0/1 by both); a JSON list or object in a text column (an empty object kept as NULL).
 */
type Storage = 'value' | 'flag' | 'json-list' | 'json-object';

interface RecordField {
  name: keyof PageRecord;
  column: string;
  storage: Storage;
  /** Set when the URL is queued, not by its completion. */
  queued?: true;
  /** What a NULL column reads back as, for fields the record never leaves null. */
  nullAs?: string;
}

/** In CSV column order (`fields` has columns of its own, `fields.<name>`, after these). */
export const RECORD_FIELDS: readonly RecordField[] = [
  { name: 'url', column: 'url', storage: 'value', queued: true },
  { name: 'depth', column: 'depth', storage: 'value', queued: true },
  { name: 'status', column: 'status', storage: 'value' },
  { name: 'error', column: 'error', storage: 'value' },
  { name: 'skipped', column: 'skipped', storage: 'value' },
  { name: 'change', column: 'change', storage: 'value' },
  { name: 'title', column: 'title', storage: 'value' },
  { name: 'fetchedAt', column: 'fetched_at', storage: 'value', nullAs: '' },
  { name: 'finalUrl', column: 'final_url', storage: 'value' },
  { name: 'contentType', column: 'content_type', storage: 'value' },
  { name: 'bytes', column: 'bytes', storage: 'value' },
  { name: 'canonical', column: 'canonical', storage: 'value' },
  { name: 'noindex', column: 'noindex', storage: 'flag' },
  { name: 'etag', column: 'etag', storage: 'value' },
  { name: 'lastModified', column: 'last_modified', storage: 'value' },
  { name: 'contentHash', column: 'content_hash', storage: 'value' },
  { name: 'bodyRef', column: 'body_ref', storage: 'value' },
  { name: 'links', column: 'links', storage: 'json-list' },
  { name: 'fields', column: 'fields', storage: 'json-object' },
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
  return raw ?? field.nullAs ?? null;
}

export function toRecord(row: RecordRow): PageRecord {
  const record: Record<string, unknown> = {};
  for (const field of RECORD_FIELDS) record[field.name] = readValue(field, row[field.column] ?? null);
  return record as unknown as PageRecord;
}
