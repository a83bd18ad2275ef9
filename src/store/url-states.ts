/**
 * The states of a URL's row and the one `skipped` reason the stores write themselves: the
 * values both frontier stores' SQL stores and compares, declared once, so the SQLite file and
 * the server database mean the same by the same number.
 */

/** Waiting for a batch to claim it. */
export const QUEUED = 0;
/** Held by one batch (`batch_id`) until the batch completes it or gives it back. */
export const CLAIMED = 1;
/** Finished: the row is the URL's record. */
export const DONE = 2;
/** A URL of the previous crawl that a recrawl never reached (`recordGone`): a record, never fetched. */
export const GONE = 3;

/** The `skipped` reason of a URL its host's page cap (`maxPagesPerHost`) left unfetched. */
export const HOST_PAGE_CAP = 'host-page-cap';
