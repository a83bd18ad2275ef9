/**
 * What both frontier stores read back, and how: the columns their SELECTs alias to the
 * interface's names (in double quotes, which both dialects keep as written), the conversions
 * of rows to the interface's shapes (records have theirs in record-fields.ts), the keyset
 * paging of records, and the order of `recordedAmong`'s answer. One reading, so the SQLite file and the server database hand out
 * identical claims, totals, robots.txt and pacing state.
 */
import { CHANGE_KINDS, type ChangeTotals, type ClaimedUrl, type CrawlEnd, type CrawlEndStatus, type CrawlTotals, type PageRecord, type StopOrder } from './frontier-store';
import { toRecord, type RecordRow } from './record-fields';
import { DONE, GONE, QUEUED } from './url-states';

/**
 * A stop order as its column holds it: the run ID, followed by ` abort` for an abort. Run IDs
 * have no spaces; a column written before aborts existed holds a bare ID, a hand-over.
 */
export function stopOrderText({ run, abort, upTo }: StopOrder): string {
  if (abort) return `${run}${ABORT_SUFFIX}`;
  return upTo === undefined ? run : `${run}${UP_TO_INFIX}${upTo}`;
}

export function toStopOrder(text: string | null | undefined): StopOrder | undefined {
  if (text === null || text === undefined) return undefined;
  if (text.endsWith(ABORT_SUFFIX)) return { run: text.slice(0, -ABORT_SUFFIX.length), abort: true };
  const upTo = UP_TO.exec(text);
  return upTo === null ? { run: text, abort: false } : { run: text.slice(0, upTo.index), abort: false, upTo: Number(upTo[1]) };
}

// Run IDs are UUIDs, so neither suffix can be part of one. A worker of an earlier release reads
// an order with `upTo` as addressed to no run of its own, and its batches run on as they did.
const ABORT_SUFFIX = ' abort';
const UP_TO_INFIX = ' up to ';
const UP_TO = / up to (\d+)$/;

/** The crawl's end as both stores keep it: four columns, the failure's two null unless it failed. */
export const END_COLUMNS = 'end_status AS "status", failure_code AS "failureCode", failure_message AS "failureMessage", ended_at AS "endedAt"';

export interface EndRow {
  status: CrawlEndStatus | null;
  failureCode: string | null;
  failureMessage: string | null;
  endedAt: string | null;
}

/** The row's end, or undefined when none is recorded (PostgreSQL keeps it on the crawl's row, null until it ends). */
export function toCrawlEnd(row: EndRow | undefined): CrawlEnd | undefined {
  if (row === undefined || row.status === null || row.endedAt === null) return undefined;
  // Written together by `endValues`: a code has its message.
  const failure = row.failureCode === null ? null : { code: row.failureCode, message: row.failureMessage ?? '' };
  return { status: row.status, failure, endedAt: row.endedAt };
}

/** The values of `END_COLUMNS` for an end, by the names they are read back as. */
export function endValues({ status, failure, endedAt }: CrawlEnd): { status: CrawlEndStatus; failureCode: string | null; failureMessage: string | null; endedAt: string } {
  return { status, failureCode: failure?.code ?? null, failureMessage: failure?.message ?? null, endedAt };
}

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

/** A host row's robots.txt as a `RobotsRecord`. */
export const ROBOTS_COLUMNS = `robots_status AS "status", coalesce(robots_body, '') AS "body", robots_fetched_at AS "fetchedAt", robots_error AS "error"`;

/** A host row's pacing state as a `HostPacing`. */
export const PACING_COLUMNS = 'error_streak AS "errorStreak", throttle_delay_ms AS "throttleDelayMs"';

/** How a dialect counts the rows a condition picks, and sums a column, each as a number (0 over no rows). */
export interface CountDialect {
  count(condition: string): string;
  sum(column: string): string;
}

/** What `BatchTotals` counts of a set of URL rows. */
const FINISHED: ReadonlyArray<readonly [string, string]> = [
  ['processed', `state = ${DONE}`],
  ['fetched', `state = ${DONE} AND status IS NOT NULL`],
  ['errors', `state = ${DONE} AND error IS NOT NULL`],
  ['skipped', `state = ${DONE} AND skipped IS NOT NULL`],
];

function countColumns(dialect: CountDialect, counts: ReadonlyArray<readonly [string, string]>): string {
  return [...counts.map(([alias, condition]) => `${dialect.count(condition)} AS "${alias}"`), `${dialect.sum('bytes')} AS "bytes"`].join(', ');
}

/** The columns of a `BatchTotals` over the URL rows a statement picks. */
export function batchTotalsColumns(dialect: CountDialect): string {
  return countColumns(dialect, FINISHED);
}

/** The columns `toTotals` reads, over every URL row of the crawl. */
export function crawlTotalsColumns(dialect: CountDialect): string {
  const changes = CHANGE_KINDS.map((kind) => [kind, `change = '${kind}'`] as const);
  return countColumns(dialect, [...FINISHED, ['queued', `state = ${QUEUED}`], ['discovered', `state <> ${GONE}`], ...changes]);
}

/** A row of `crawlTotalsColumns`: the totals, with the change counts alongside. */
export type TotalsRow = Omit<CrawlTotals, 'changes'> & ChangeTotals;

export function toTotals(row: TotalsRow): CrawlTotals {
  const { new: added, changed, unchanged, gone, ...totals } = row;
  return { ...totals, changes: { new: added, changed, unchanged, gone } };
}

/**
 * `recordedAmong` of both stores: `lookUp` is given the distinct URLs of a non-empty list and
 * returns those with a record, in any order; the answer keeps the caller's order and repeats.
 */
export async function recordedIn(urls: readonly string[], lookUp: (distinct: string[]) => string[] | Promise<string[]>): Promise<string[]> {
  if (urls.length === 0) return [];
  const recorded = new Set(await lookUp([...new Set(urls)]));
  return urls.filter((url) => recorded.has(url));
}

/**
 * Every record, read in keyset pages of `size` by `pageAfter` (the rows after an id, in id
 * order): memory stays flat, and no cursor or transaction is held open between pages while the
 * caller writes on the same connection.
 */
export async function* recordsInPages(
  pageAfter: (id: number, size: number) => Array<RecordRow & { id: number }> | Promise<Array<RecordRow & { id: number }>>,
  size: number,
): AsyncGenerator<PageRecord> {
  for (let after = 0; ; ) {
    const rows = await pageAfter(after, size);
    for (const row of rows) yield toRecord(row);
    if (rows.length < size) return;
    after = rows[rows.length - 1].id;
  }
}
