/**
 * What a crawl ID may be. It is the crawl's workflow ID, which Temporal takes as any text,
 * and also the name of the crawl's files: its SQLite store, its stored bodies' directory, its
 * staged seeds and its default results file (`<crawl-id>.jsonl` in the working directory), and
 * the `isPartOf` field of its WARC export. So it is checked once, here, against what those
 * need, by every command that takes an ID and by the activity that opens a crawl (a workflow
 * started with `temporal workflow start` takes any ID). Pure JavaScript: workflows import it.
 */

/**
 * Crawl IDs are encoded into file names, which keeps `/` and `\` out of them: the IDs of
 * existing stores keep their files.
 */
export function crawlFileName(crawlId: string): string {
  return encodeURIComponent(crawlId);
}

/** 255 bytes, most file systems' limit for a name, less the longest suffix a crawl's file takes (`.sqlite-wal`). */
export const MAX_CRAWL_FILE_NAME = 244;

/**
 * What Temporal appends to a schedule's ID for each crawl it starts (`<schedule-id>-<time>`,
 * the time in RFC 3339), at its longest.
 */
export const SCHEDULED_RUN_SUFFIX = '-2009-11-10T23:00:00Z';

/** Control characters: a line break in a WARC header ends the field and breaks the file; in a terminal they garble output. */
const CONTROL = /\p{Cc}/u;

export const INVALID_CRAWL_ID = 'invalid-crawl-id';

export class InvalidCrawlIdError extends Error {
  readonly code = INVALID_CRAWL_ID;
}

/**
 * Why `id` cannot be a crawl ID, or undefined when it can. `reserve` is the length of a
 * suffix the ID will get (a schedule's crawls), which the file name must have room for.
 */
export function crawlIdProblem(id: string, reserve = 0): string | undefined {
  if (CONTROL.test(id)) return 'must not contain control characters (line breaks, tabs)';
  if (id === '.' || id === '..') return 'must not be "." or "..", which name directories';
  const max = MAX_CRAWL_FILE_NAME - reserve;
  const length = crawlFileName(id).length;
  if (length > max) return `is too long for a file name: ${length} characters encoded, at most ${max} (characters other than A-Z a-z 0-9 - _ . ! ~ * ' ( ) take 3 per UTF-8 byte)`;
  return undefined;
}

/** The error for `id` as a `what` ("crawl ID", "schedule ID"), or undefined when it is a good one; `reserve` as for crawlIdProblem. */
export function invalidCrawlId(id: string, what = 'crawl ID', reserve = 0): InvalidCrawlIdError | undefined {
  const problem = crawlIdProblem(id, reserve);
  // JSON quoting keeps the message on one line whatever the ID holds.
  return problem === undefined ? undefined : new InvalidCrawlIdError(`${what} ${JSON.stringify(id)} ${problem}`);
}

/** Throws InvalidCrawlIdError, naming the ID, unless `crawlId` can be a crawl ID. */
export function checkCrawlId(crawlId: string): void {
  const invalid = invalidCrawlId(crawlId);
  if (invalid !== undefined) throw invalid;
}
