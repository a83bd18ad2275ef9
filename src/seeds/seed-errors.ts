/**
 * Why a seed list cannot be queued. Free of Node APIs, so the workflow can tell these codes
 * (which fail the crawl before its first fetch) from store trouble (which it waits out).
 */
export const INVALID_SEED_LINE = 'invalid-seed-line';
export const SEEDS_FILE_UNREADABLE = 'seeds-file-unreadable';
export const SEEDS_FILE_EMPTY = 'seeds-file-empty';

/** A line of a seed list that is not a seed URL: the message names the list and the line (`seeds.txt:123: ...`). */
export class InvalidSeedLineError extends Error {
  readonly code = INVALID_SEED_LINE;
  constructor(
    readonly list: string,
    readonly line: number,
    reason: string,
  ) {
    super(`${list}:${line}: ${reason}`);
    this.name = 'InvalidSeedLineError';
  }
}

export class UnreadableSeedsFileError extends Error {
  readonly code = SEEDS_FILE_UNREADABLE;
}

/** A seed file with no seed URL in it, for a crawl with no inline seeds: a crawl of nothing, refused as `seeds: []` is. */
export class EmptySeedsFileError extends Error {
  readonly code = SEEDS_FILE_EMPTY;
}
