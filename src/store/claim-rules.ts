/**
 * The crawl's claim rules, decided once for both frontier stores: how many URLs of a key a
 * batch may take (its share, the batch limit, the key's holders, the host's page cap), and the
 * order in which a ready claim tries keys. Each store reads the counts under its own locks and
 * writes what the rule decided, in its dialect; the one count both read in SQL, a key's other
 * holders, is stated here, so what holding a key means is written once.
 */
import type { ClaimBounds, ClaimedUrl, ReadyClaim } from './frontier-store';
import { CLAIMED } from './url-states';

/** What a claim of one key was asked for (`FrontierStore.claim`). */
export interface ClaimRequest {
  /** URLs of the key the batch may hold, finished or not. */
  limit: number;
  maxPagesPerHost: number;
  bounds: ClaimBounds;
}

/**
 * What a store counted under the lock that serializes claims of the key. The rule reads each
 * count only when its decision needs it, so a store may define a count that costs a query as
 * a getter: `batchRows` is read only under a batch limit, `otherHolders` only with a holder
 * bound and a batch that holds none of the key's URLs, `taken` only when there is room.
 */
export interface ClaimCounts {
  /** The batch's rows of the key, in any state. */
  readonly share: number;
  /** The batch's rows over all its keys, in any state. */
  readonly batchRows: number;
  /** Whether the batch holds claimed URLs of the key. */
  readonly holding: boolean;
  /** Batches other than this one holding claimed URLs of the key. */
  readonly otherHolders: number;
  /** URLs of the key handed out to be fetched, the count the page cap bounds. */
  readonly taken: number;
}

/**
 * SQL for `ClaimCounts.otherHolders`: the batches other than `batch` with claimed URLs of key
 * `host` in the URL table `urls` (`crawl`: the condition that picks one crawl's rows of a table
 * that holds many). Each argument is SQL: a parameter, or a column of an outer query.
 */
export function otherHoldersSql(urls: string, host: string, batch: string, crawl?: string): string {
  return `(SELECT count(DISTINCT batch_id) FROM ${urls} WHERE ${crawl === undefined ? '' : `${crawl} AND `}host = ${host} AND state = ${CLAIMED} AND batch_id <> ${batch})`;
}

/** URLs to claim, most important first: `fresh` to fetch, then `capped` to record as `host-page-cap` skips. */
export interface ClaimPlan {
  fresh: number;
  capped: number;
}

/**
 * How many URLs the batch claims of the key: its share's room, within the batch limit; past
 * the page cap the room is still claimed, as skips, so a capped host's backlog drains.
 * Null when it claims none: no room left, or the batch would become one holder of the key too
 * many (topping up a key it holds adds no holder).
 */
export function planClaim({ limit, maxPagesPerHost, bounds }: ClaimRequest, counts: ClaimCounts): ClaimPlan | null {
  let room = limit - counts.share;
  if (bounds.batchLimit !== undefined) room = Math.min(room, bounds.batchLimit - counts.batchRows);
  if (room <= 0) return null;
  if (bounds.holders !== undefined && !counts.holding && counts.otherHolders >= bounds.holders) return null;
  const fresh = Math.min(room, Math.max(0, maxPagesPerHost - counts.taken));
  return { fresh, capped: room - fresh };
}

/**
 * The keys a ready claim tries, in order: those the batch holds (a retried attempt resumes
 * them), then `ready()`, which is asked only once none the batch holds had anything left.
 */
function* readyCandidates(held: readonly string[], ready: () => readonly string[]): Generator<{ key: string; held: boolean }> {
  for (const key of held) yield { key, held: true };
  for (const key of ready()) yield { key, held: false };
}

/**
 * The first key that yields URLs, claimed by `claimOf`, or null. `claimOf` runs inside the
 * store's transaction: synchronous for SQLite (whose transactions cannot span an await), a
 * promise over a PostgreSQL connection, which makes the result a promise too (or null at
 * once when there is no key to try).
 */
export function firstReadyClaim(held: readonly string[], ready: () => readonly string[], claimOf: (key: string, held: boolean) => ClaimedUrl[]): ReadyClaim | null;
export function firstReadyClaim(
  held: readonly string[],
  ready: () => readonly string[],
  claimOf: (key: string, held: boolean) => Promise<ClaimedUrl[]>,
): Promise<ReadyClaim | null> | null;
export function firstReadyClaim(
  held: readonly string[],
  ready: () => readonly string[],
  claimOf: (key: string, held: boolean) => ClaimedUrl[] | Promise<ClaimedUrl[]>,
): ReadyClaim | null | Promise<ReadyClaim | null> {
  const candidates = readyCandidates(held, ready);
  const next = (): ReadyClaim | null | Promise<ReadyClaim | null> => {
    for (let step = candidates.next(); !step.done; step = candidates.next()) {
      const { key } = step.value;
      const urls = claimOf(key, step.value.held);
      if (urls instanceof Promise) return urls.then((claimed) => (claimed.length > 0 ? { key, urls: claimed } : next()));
      if (urls.length > 0) return { key, urls };
    }
    return null;
  };
  return next();
}
