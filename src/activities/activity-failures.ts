/**
 * Whether an activity's error is worth another attempt: decided here, once, for every
 * activity of the crawl, and handed to Temporal as data (an ApplicationFailure's type and
 * `nonRetryable`).
 * - A store outage is always retryable: waiting cures it (store-errors.ts).
 * - Errors whose cause stays with the worker or the input (a missing variable, a bad config)
 *   are not: every attempt would fail the same way.
 * - Anything else is retried a few times, then given up with its message, so a bug never
 *   loops for ever.
 */
import { ApplicationFailure, CancelledFailure } from '@temporalio/activity';
import { InvalidCrawlConfigError } from '../shared/crawl-config';
import { RequestSecretError } from '../fetch/request-profile';
import { storeOutage } from '../store/store-errors';
import { UnknownCrawlError } from '../store/store-backend';
import { UnrecordedConfigError } from './recorded-config';
import { InvalidCrawlIdError } from '../shared/crawl-id';
import { EmptySeedsFileError, InvalidSeedLineError, UnreadableSeedsFileError } from '../seeds/seed-errors';

/** Attempts of an activity failing with an unclassified error before it is given up. */
export const UNCLASSIFIED_ATTEMPTS = 5;

/** The type of a failure with no code of its own. */
export const UNCLASSIFIED = 'batch-failed';

const PERMANENT: ReadonlyArray<new (...args: never[]) => Error & { code: string }> = [
  RequestSecretError,
  InvalidCrawlConfigError,
  UnknownCrawlError,
  UnrecordedConfigError,
  InvalidSeedLineError,
  UnreadableSeedsFileError,
  EmptySeedsFileError,
  InvalidCrawlIdError,
];

/** What to throw for `err` from attempt `attempt` of an activity. */
export function activityFailure(err: unknown, attempt: number): unknown {
  if (err instanceof ApplicationFailure || err instanceof CancelledFailure) return err;
  const outage = storeOutage(err);
  if (outage) return ApplicationFailure.retryable(outage.message, outage.code);
  const error = err instanceof Error ? err : new Error(String(err));
  const permanent = PERMANENT.find((type) => error instanceof type);
  const own = (error as Error & { code?: unknown }).code;
  const code = typeof own === 'string' ? own : UNCLASSIFIED;
  if (permanent) return ApplicationFailure.create({ message: error.message, type: code, nonRetryable: true, cause: error });
  return ApplicationFailure.create({ message: error.message, type: code, nonRetryable: attempt >= UNCLASSIFIED_ATTEMPTS, cause: error });
}

/** Runs an activity's body, classifying what it throws. */
export async function classified<T>(attempt: number, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw activityFailure(err, attempt);
  }
}
