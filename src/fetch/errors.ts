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
  'blocked-address',
  'network',
  // The server's TLS certificate was refused: not signed by a trusted CA, issued for another
  // name, expired or not yet valid. Asking again gets the same certificate.
  'tls-certificate',
  // A page whose scripts the browser could not run to the end (see src/render).
  'render-failed',
] as const;

export type FetchErrorCode = (typeof FETCH_ERROR_CODES)[number];

/**
 * Header fields whose values are credentials, written as `name: value`, `name=value`,
 * `"name":"value"` or `'name', 'value'` (undici's raw header lists). Everything after the
 * name up to the end of the line goes: losing some harmless text is better than a leak.
 */
const SECRET_HEADER = /\b((?:proxy-)?authorization|(?:set-)?cookie)(["']?\s*[:=,]\s*)[^\r\n]+/gi;

/** A message with credential header values replaced, so none reaches a log or a record. */
export function redactSecrets(message: string): string {
  return message.replace(SECRET_HEADER, '$1$2[redacted]');
}

export class FetchError extends Error {
  constructor(
    readonly code: FetchErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(redactSecrets(message), options);
    this.name = 'FetchError';
  }
}

/** Transient transport failures: the same request may well succeed a moment later. */
export const RETRYABLE_ERROR_CODES: ReadonlySet<FetchErrorCode> = new Set(['timeout', 'dns', 'connect', 'reset', 'truncated', 'network']);

/** HTTP statuses that mean "not now" rather than "not ever". */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 425, 429, 500, 502, 503, 504]);

/** Statuses whose Retry-After header we honour by deferring the whole host. */
export const BACKOFF_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/** OpenSSL's verification failures (as Node names them) and Node's host name check. */
const CERTIFICATE_ERRORS = [
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_CHAIN_TOO_LONG',
  'CERT_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
];

/** Node and undici error codes, mapped onto ours. */
const TRANSPORT_CODES: Readonly<Record<string, FetchErrorCode>> = {
  UND_ERR_HEADERS_OVERFLOW: 'too-large',
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
  ...Object.fromEntries(CERTIFICATE_ERRORS.map((code) => [code, 'tls-certificate' as const])),
};

/**
 * While the body streams, a peer that closes the connection (undici: "other side closed")
 * has sent less than the Content-Length or chunked framing promised: the response is
 * truncated. Before the headers, the same event is a reset connection.
 */
const BODY_TRANSPORT_CODES: Readonly<Record<string, FetchErrorCode>> = { ...TRANSPORT_CODES, UND_ERR_SOCKET: 'truncated' };

function errorCodeOf(err: unknown, codes: Readonly<Record<string, FetchErrorCode>>): FetchErrorCode | undefined {
  for (let current = err; current instanceof Error; current = current.cause) {
    // A response that is not HTTP at all: sending it again gives the same garbage.
    if (current.name === 'HTTPParserError') return 'bad-content';
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code in codes) return codes[code];
  }
  return undefined;
}

/** Turns anything a transport throws into a FetchError with one of our codes. */
export function toFetchError(err: unknown, during: 'response' | 'body' = 'response'): FetchError {
  if (err instanceof FetchError) return err;
  const code = errorCodeOf(err, during === 'body' ? BODY_TRANSPORT_CODES : TRANSPORT_CODES) ?? 'network';
  const message = err instanceof Error ? err.message : String(err);
  // The original error would carry a redacted secret along as our `cause`: drop it then.
  return new FetchError(code, message, redactSecrets(message) === message ? { cause: err } : undefined);
}

export function isRetryable(outcome: { error: FetchErrorCode | null; status: number | null }): boolean {
  if (outcome.error) return RETRYABLE_ERROR_CODES.has(outcome.error);
  return outcome.status !== null && RETRYABLE_STATUSES.has(outcome.status);
}
