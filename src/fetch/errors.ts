/**
 * Fetch errors carry a stable `code`, the short string that appears in a page record's
 * `error` field. Whether a failure is worth retrying is data, decided here and nowhere else.
 */
export const FETCH_ERROR_CODES = [
  'timeout',
  'dns',
  'connect',
  'reset',
  'truncated',
  'too-large',
  'bad-content',
  'redirect-loop',
  'too-many-redirects',
  'bad-redirect',
  'network',
] as const;

export type FetchErrorCode = (typeof FETCH_ERROR_CODES)[number];

export class FetchError extends Error {
  constructor(
    readonly code: FetchErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'FetchError';
  }
}

/** Transient transport failures: the same request may well succeed a moment later. */
export const RETRYABLE_ERROR_CODES: ReadonlySet<FetchErrorCode> = new Set(['timeout', 'dns', 'connect', 'reset', 'truncated', 'network']);

/** HTTP statuses that mean "not now" rather than "not ever". */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 425, 429, 500, 502, 503, 504]);

/** Statuses whose Retry-After header we honour by deferring the whole host. */
export const BACKOFF_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/** Node and undici error codes, mapped onto ours. */
const TRANSPORT_CODES: Readonly<Record<string, FetchErrorCode>> = {
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  EAI_FAIL: 'dns',
  ECONNREFUSED: 'connect',
  EHOSTUNREACH: 'connect',
  ENETUNREACH: 'connect',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  ETIMEDOUT: 'timeout',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  UND_ERR_SOCKET: 'reset',
  UND_ERR_CLOSED: 'reset',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'truncated',
  ERR_STREAM_PREMATURE_CLOSE: 'truncated',
  Z_DATA_ERROR: 'bad-content',
  Z_BUF_ERROR: 'truncated',
  ERR_INVALID_URL: 'bad-redirect',
};

function errorCodeOf(err: unknown): string | undefined {
  for (let current = err; current instanceof Error; current = current.cause) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code in TRANSPORT_CODES) return code;
  }
  return undefined;
}

/** Turns anything a transport throws into a FetchError with one of our codes. */
export function toFetchError(err: unknown): FetchError {
  if (err instanceof FetchError) return err;
  const code = errorCodeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  return new FetchError(code ? TRANSPORT_CODES[code] : 'network', message, { cause: err });
}

export function isRetryable(outcome: { error: FetchErrorCode | null; status: number | null }): boolean {
  if (outcome.error) return RETRYABLE_ERROR_CODES.has(outcome.error);
  return outcome.status !== null && RETRYABLE_STATUSES.has(outcome.status);
}
