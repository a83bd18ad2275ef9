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
 * bound and a batch that holds none of the key's URLs, `taken` only when there is room,
 * `queued` only when the claim is spread.
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
  /** URLs of the key queued in the claim's lane (fetch or render). */
  readonly queued: number;
}

/**
 * SQL for `ClaimCounts.otherHolders`: the batches other than `batch` with claimed URLs of key
 * `host` in the URL table `urls` (`crawl`: the condition that picks one crawl's rows of a table
 * that holds many). Each argument is SQL: a parameter, or a column of an outer query.
 */
export function otherHoldersSql(urls: string, host: string, batch: string, crawl?: string): string {
  return `(SELECT count(DISTINCT batch_id) FROM ${urls} WHERE ${crawl === undefined ? '' : `${crawl} AND `}host = ${host} AND state = ${CLAIMED} AND batch_id <> ${batch})`;
}

/**
 * The order in which a ready claim tries keys, as conditions on a key's `hosts` row, one tier
 * after the other; within a tier, the biggest backlog first. Keys no batch has claimed from
 * come first: a host not crawled yet has only its first URLs queued, and how much it holds is
 * unknown until they are fetched. Left until the big backlogs drain, such hosts would be
 * found at the end, and their pages would make the crawl's tail at their concurrency (the
 * biggest backlogs keep the workflow's shares meanwhile: its view names them). Each tier
 * reads an index of its own, so a claim stops after a few entries.
 */
export const READY_KEY_TIERS = ['taken = 0', 'taken > 0'] as const;

/** URLs to claim, most important first: `fresh` to fetch, then `capped` to record as `host-page-cap` skips. */
export interface ClaimPlan {
  fresh: number;
  capped: number;
}

/**
 * How many URLs the batch claims of the key: its share's room, within the batch limit; past
 * the page cap the room is still claimed, as skips, so a capped host's backlog drains.
 * Null when it claims none: no room left, or the batch would become one holder of the key too
 * many (topping up a key it holds adds no holder). A spread claim takes at most its even
 * part of the key's queue (`ClaimBounds.spread`), so an empty queue gives it none.
 */
export function planClaim({ limit, maxPagesPerHost, bounds }: ClaimRequest, counts: ClaimCounts): ClaimPlan | null {
  let room = limit - counts.share;
  if (bounds.batchLimit !== undefined) room = Math.min(room, bounds.batchLimit - counts.batchRows);
  if (room <= 0) return null;
  if (bounds.holders !== undefined && !counts.holding && counts.otherHolders >= bounds.holders) return null;
  if (bounds.spread && bounds.holders !== undefined) room = Math.min(room, Math.ceil(counts.queued / bounds.holders));
  if (room <= 0) return null;
  const fresh = Math.min(room, Math.max(0, maxPagesPerHost - counts.taken));
  return { fresh, capped: room - fresh };
}

/**
 * Ready keys a claim asks its store for in one transaction: the query's holder bound is the
 * largest any key has, so a key with a lower override may still refuse; a few more are always
 * at hand. Sixteen, so a claim on a broad crawl takes eight keys: on the bench's 1,000 hosts
 * that is 450 claims instead of 810, and 16% less of the worker's main thread in them.
 */
export const READY_CANDIDATES = 16;

/**
 * How many ready keys one claim takes. Each claim is a write transaction, and on a crawl of
 * many small hosts a key yields only a few URLs, so a batch takes several keys at once, up to
 * half of what the store found, when it found as many as it was asked for. With fewer ready
 * keys than that it takes one: a crawl of a few hosts keeps them spread over its batches
 * instead of one batch holding them all while it fetches one.
 */
export function keysPerReadyClaim(found: number): number {
  return found >= READY_CANDIDATES ? READY_CANDIDATES / 2 : 1;
}

/** What a ready claim walks (see `readyClaims`). */
export interface ReadyWalk {
  /** Keys the batch holds claimed URLs of: a retried attempt resumes them all. */
  held: readonly string[];
  /** The ready keys, best first; asked only once no held key had anything left. */
  ready: () => readonly string[];
  /** URLs the batch may still claim over every key. */
  room: number;
}

type ClaimOf<T> = (key: string, held: boolean) => T;

/**
 * The claims of a ready claim, in the order the batch crawls them: every held key that
 * yields URLs; else as many ready keys as `keysPerReadyClaim` allows and the room holds,
 * each claimed by `claimOf`. Empty when no key yields. `claimOf` runs inside the store's
 * transaction: synchronous for SQLite (whose transactions cannot span an await), a promise
 * over a PostgreSQL connection, which makes the result a promise too (or an array at once
 * when there is no key to try).
 */
export function readyClaims(walk: ReadyWalk, claimOf: ClaimOf<ClaimedUrl[]>): ReadyClaim[];
export function readyClaims(walk: ReadyWalk, claimOf: ClaimOf<Promise<ClaimedUrl[]>>): Promise<ReadyClaim[]> | ReadyClaim[];
export function readyClaims(walk: ReadyWalk, claimOf: ClaimOf<ClaimedUrl[] | Promise<ClaimedUrl[]>>): ReadyClaim[] | Promise<ReadyClaim[]> {
  const claims: ReadyClaim[] = [];
  let room = walk.room;
  const add = (key: string, urls: ClaimedUrl[], held: boolean): void => {
    if (urls.length === 0) return;
    claims.push({ key, urls });
    if (!held) room -= urls.length;
  };
  /** Claims `keys` in order while `wanted` claims are not yet made (ready keys: and room is left), then runs `then`. */
  const claimKeys = (keys: readonly string[], held: boolean, wanted: number, then: () => ReadyClaim[] | Promise<ReadyClaim[]>) => {
    let next = 0;
    const step = (): ReadyClaim[] | Promise<ReadyClaim[]> => {
      while (next < keys.length && claims.length < wanted && (held || room > 0)) {
        const key = keys[next++];
        const urls = claimOf(key, held);
        if (urls instanceof Promise) return urls.then((claimed) => (add(key, claimed, held), step()));
        add(key, urls, held);
      }
      return then();
    };
    return step();
  };
  return claimKeys(walk.held, true, Infinity, () => {
    if (claims.length > 0) return claims;
    const ready = walk.ready();
    return claimKeys(ready, false, keysPerReadyClaim(ready.length), () => claims);
  });
}
