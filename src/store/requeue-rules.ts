/**
 * What giving claimed URLs back (`release`, `releaseAll`) does, stated once as the SQL both
 * frontier stores build their statements from: each URL is queued again of its kind and a
 * retried one keeps its attempt count, and each host's counters move by what its URLs were
 * claimed as. A claim moves the same counters by the same rows the other way, so it is stated
 * here too, as the mirror. The stores differ only in where the rows come from (SQLite reads
 * them before a requeue and after a claim, PostgreSQL's one statement from the update's
 * RETURNING) and in how the returned shards bump their versions (a loop, or the statement's
 * last part).
 */
import type { CountDialect } from './store-rows';
import { QUEUED } from './url-states';

/**
 * A host counter, the rows given back that it counts (by the `render` and `skipped` they were
 * claimed with), and whether giving them back adds to it or takes from it.
 */
interface RequeueCounter {
  counter: string;
  rows: string;
  sign: '+' | '-';
}

const REQUEUE_COUNTERS: readonly RequeueCounter[] = [
  // Every URL given back is queued again,
  { counter: 'queued', rows: 'true', sign: '+' },
  // of its kind, so a render URL is render backlog again,
  { counter: 'render_queued', rows: 'render', sign: '+' },
  // and one claimed to be fetched gives its place under the page cap back; one claimed as a
  // `host-page-cap` skip never took a place.
  { counter: 'taken', rows: 'skipped IS NULL', sign: '-' },
];

/**
 * The SET list that queues a claimed URL again; `retriedUrl` (SQL: a parameter, or NULL for
 * none) names the URL whose attempt count becomes `attempts`, so its retry counts the attempt
 * that failed.
 */
export function requeuedUrl(retriedUrl: string, attempts: string): string {
  return `state = ${QUEUED}, batch_id = NULL, skipped = NULL, attempts = CASE WHEN url = ${retriedUrl} THEN ${attempts} ELSE attempts END`;
}

/** A claim moves each counter the other way. */
const MIRRORED = { '+': '-', '-': '+' } as const;

/** Where a dialect's UPDATE of host counters finds the rows to count. */
export interface CountedRows {
  /** The hosts table, as the dialect names it. */
  hosts: string;
  /** A condition on the hosts row `h`: the crawl's, in a table that holds many crawls. */
  crawl?: string;
  /** The rows given back or claimed, as claimed: a FROM clause, with its WHERE, over rows with `host`, `render`, `skipped`. */
  rows: string;
}

/**
 * One UPDATE that moves each host's counters by its rows, in host order (the order concurrent
 * writers lock host rows in), returning the shard of every host it changed, whose version the
 * caller bumps.
 */
function moveHostCounts(dialect: CountDialect, { hosts, crawl, rows }: CountedRows, move: 'requeue' | 'claim'): string {
  const counts = REQUEUE_COUNTERS.map(({ counter, rows: counted }) => `${dialect.count(counted)} AS ${counter}`).join(', ');
  const updates = REQUEUE_COUNTERS.map(({ counter, sign }) => `${counter} = h.${counter} ${move === 'claim' ? MIRRORED[sign] : sign} p.${counter}`).join(', ');
  return `UPDATE ${hosts} AS h SET ${updates}
    FROM (SELECT host, ${counts} FROM ${rows} GROUP BY host ORDER BY host) AS p
    WHERE ${crawl === undefined ? '' : `${crawl} AND `}h.host = p.host RETURNING shard`;
}

/** The host counters given back by the claimed rows `rows` (read before they are queued again). */
export function requeueHostCounts(dialect: CountDialect, rows: CountedRows): string {
  return moveHostCounts(dialect, rows, 'requeue');
}

/**
 * The host counters a claim takes, the mirror of `requeueHostCounts`: the rows just claimed
 * leave the queue (and the render backlog), and those to be fetched take a place under the cap.
 */
export function claimHostCounts(dialect: CountDialect, rows: CountedRows): string {
  return moveHostCounts(dialect, rows, 'claim');
}
