/**
 * Claimed URLs as both frontier stores read them back, and their conversion to the interface's
 * shape (records have theirs in record-fields.ts): one mapping, so the SQLite file and the
 * server database hand out identical claims.
 */
import type { ClaimedUrl } from './frontier-store';

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
