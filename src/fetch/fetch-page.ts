/**
 * One page fetch: follows redirects (hop limit, loop detection, a scope check on every hop),
 * caps time and size, and decodes HTML. Cancellation comes in as an AbortSignal and reaches
 * the socket; a cancelled fetch rethrows the signal's reason so the activity reports
 * cancellation, not an error.
 */
import type { AddressGuard } from './address-guard';
import { decodeHtml } from './charset';
import { onAbort } from './abort-fan-out';
import { FetchError, toFetchError } from './errors';
import type { RequestStop, TransportResponse } from './response';
import type { OnSent, Transport } from './transport';
import type { HopHeaders, ProxyRoute } from './request-profile';
import type { RedirectHop } from '../warc/warc-record';

export interface FetchPolicy {
  userAgent: string;
  timeoutMs: number;
  maxBodyBytes: number;
  maxRedirects: number;
  /** Checked on every redirect hop; a target it rejects ends the fetch with `redirectBlocked`. */
  allowRedirect(target: URL): boolean;
  /** Which addresses every hop may connect to (`blocked-address` otherwise). */
  guard: AddressGuard;
  /** Keep the first maxBodyBytes of a longer body instead of failing with `too-large`. */
  truncateBody?: boolean;
  /** Media types whose body `fetchPage` reads (others are dropped after the headers); default all HTML. */
  acceptsContentType?: (contentType: string | null) => boolean;
  /**
   * Request headers for one hop (lower-case names; a user-agent here replaces `userAgent`).
   * Asked again on every redirect hop, so one host's cookies and credentials never follow a
   * redirect to another host.
   */
  headersFor?: (url: URL) => HopHeaders;
  /** The proxy every hop goes through. */
  proxy?: ProxyRoute;
  /** Told when each hop's request goes out (politeness counts the gap from then). */
  onSent?: OnSent;
  /**
   * Keep every followed redirect's exchange in `redirects`, its body read rather than dropped:
   * what a crawl storing bodies archives. Off, a hop's body is dropped unread.
   */
  recordRedirects?: boolean;
}

export interface FetchedResource {
  finalUrl: string;
  status: number;
  contentType: string | null;
  /** The (decompressed) body when `wantsBody` accepted the response, else null. */
  body: Buffer | null;
  /** Bytes received on the wire for the final response. */
  bytes: number;
  retryAfterMs: number | null;
  /** Where an out-of-scope redirect pointed; the hop was not followed. */
  redirectBlocked: string | null;
  robotsHeader: string | null;
  /** The final response's headers as undici gives them (names lowercased), for WARC records. */
  headers: TransportResponse['headers'];
  /**
   * The headers sent with the final request, the host's included, as its WARC request record
   * keeps them: secret values `[redacted]` (request-profile.ts).
   */
  requestHeaders: Record<string, string>;
  /** From sending the request to the final response's headers (redirect hops included). */
  latencyMs: number;
  /**
   * With `recordRedirects`, each redirect followed, in order, as its WARC records keep it (its
   * request headers redacted like `requestHeaders`); otherwise, and with no redirect, empty.
   */
  redirects: readonly RedirectHop[];
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** The `redirects` of a fetch that recorded none: shared, so a page with no redirect allocates nothing for them. */
const NO_REDIRECTS: readonly RedirectHop[] = Object.freeze([]);
const HTML_TYPES = /\b(?:text\/html|application\/xhtml\+xml)\b/i;

/** A single-valued header (the first, if a server repeated it). */
function header(response: TransportResponse, name: string): string | null {
  const value = response.headers[name];
  return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
}

/** A list-valued header: repeated fields joined, as RFC 9110 section 5.3 allows. */
function headerList(response: TransportResponse, name: string): string | null {
  const value = response.headers[name];
  return Array.isArray(value) ? value.join(', ') : (value ?? null);
}

const HTTP_DATE = /^[A-Za-z]{3},? \d{1,2}[ -][A-Za-z]{3}[ -]\d{2,4} \d{2}:\d{2}:\d{2} GMT$/;

/** Retry-After is either delta-seconds or an HTTP date (RFC 9110 section 10.2.3); anything else is ignored. */
export function parseRetryAfter(value: string | null, now: number): number | null {
  const trimmed = value?.trim();
  if (!trimmed) return null;
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!HTTP_DATE.test(trimmed)) return null;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * Leading bytes of common binary formats that servers mislabel as text/html. PDF matters
 * most: unlike images and archives it has no NUL byte near its start.
 */
const BINARY_SIGNATURES = ['%PDF-', '\x89PNG', 'GIF8', '\xff\xd8\xff', 'PK\x03\x04', '\x1f\x8b', '\x7fELF'].map((text) => Buffer.from(text, 'latin1'));

const startsWith = (bytes: Buffer, signature: Buffer): boolean =>
  // `compare` on ranges makes no view of the body (a `subarray` per signature cost 1 µs a page).
  bytes.length >= signature.length && bytes[0] === signature[0] && bytes.compare(signature, 0, signature.length, 0, signature.length) === 0;

/**
 * Binary data: a known binary signature, or NUL characters in the decoded text (checked
 * after decoding, so UTF-16 passes).
 */
function looksBinary(bytes: Buffer, text: string): boolean {
  return BINARY_SIGNATURES.some((signature) => startsWith(bytes, signature)) || text.slice(0, 1024).includes('\u0000');
}

/**
 * What stops one fetch's requests: the caller's cancellation or the fetch's own deadline,
 * whichever comes first. Disposed when the fetch ends, so its timer and its subscription to
 * the caller's signal (abort-fan-out.ts) go at once. Not an AbortController of its own per
 * fetch: making one, and the transport listening to it, cost more than the rest of the
 * deadline (bench/PROFILE.md).
 */
class FetchDeadline implements RequestStop {
  private readonly timer: NodeJS.Timeout;
  private readonly unsubscribe: () => void;
  private stopRequest: ((reason: unknown) => void) | undefined;
  private stopped: { reason: unknown } | undefined;
  expired = false;

  constructor(cancellation: AbortSignal, timeoutMs: number) {
    this.timer = setTimeout(() => {
      this.expired = true;
      this.stopWith(new DOMException(`no response within ${timeoutMs} ms`, 'TimeoutError'));
    }, timeoutMs).unref();
    this.unsubscribe = onAbort(cancellation, () => this.stopWith(cancellation.reason));
  }

  watch(stop: (reason: unknown) => void): () => void {
    this.stopRequest = stop;
    if (this.stopped) stop(this.stopped.reason);
    return () => {
      if (this.stopRequest === stop) this.stopRequest = undefined;
    };
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.unsubscribe();
  }

  private stopWith(reason: unknown): void {
    if (this.stopped) return;
    this.stopped = { reason };
    this.stopRequest?.(reason);
  }
}

/** Where a redirect leads, or the FetchError that ends the fetch there. */
function redirectTarget(location: string, from: URL, visited: ReadonlySet<string>, hop: number, maxRedirects: number): URL {
  let target: URL;
  try {
    target = new URL(location, from);
  } catch (err) {
    throw new FetchError('bad-redirect', `unparseable Location: ${location.slice(0, 200)}`, { cause: err });
  }
  target.hash = '';
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new FetchError('bad-redirect', `redirect to ${target.protocol} URL`);
  }
  if (visited.has(target.href)) throw new FetchError('redirect-loop', `redirect loop at ${target.href}`);
  if (hop >= maxRedirects) throw new FetchError('too-many-redirects', `more than ${maxRedirects} redirects`);
  return target;
}

/**
 * A followed redirect as its WARC records keep it, its body read to its end (decoded, as a
 * page's is). A body past the size cap keeps its first `maxBytes`, marked truncated by
 * `length`, as WARC 1.1 has a record cut at a size limit. One that cannot be read (a broken
 * encoding, a dropped connection) is kept empty and marked `unspecified` rather than failing
 * the page, which a crawl not storing bodies fetches all the same; a fetch stopped meanwhile
 * fails at its next request.
 */
async function redirectHop(url: URL, sentAt: number, response: TransportResponse, requestHeaders: Record<string, string>, maxBytes: number): Promise<RedirectHop> {
  const exchange = { url: url.href, sentAt, status: response.status, headers: response.headers, requestHeaders };
  try {
    const { bytes, truncated } = await response.body.read({ contentEncoding: header(response, 'content-encoding') ?? undefined, maxBytes, truncate: true });
    return truncated ? { ...exchange, body: bytes, truncated: 'length' } : { ...exchange, body: bytes };
  } catch {
    return { ...exchange, body: Buffer.alloc(0), truncated: 'unspecified' };
  }
}

interface FollowedRedirects {
  url: URL;
  response: TransportResponse;
  blocked: string | null;
  headers: Record<string, string>;
  redirects: readonly RedirectHop[];
}

async function followRedirects(transport: Transport, start: URL, policy: FetchPolicy, stop: RequestStop, extraHeaders: Record<string, string>): Promise<FollowedRedirects> {
  const headers = {
    'user-agent': policy.userAgent,
    accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5',
    'accept-encoding': 'gzip, deflate, br',
    ...extraHeaders,
  };
  // A hop's headers as its request record keeps them: the host's too, their secrets redacted.
  const recorded = (host: HopHeaders | undefined) => (host ? { ...headers, ...host.recordedHeaders } : headers);
  const visited = new Set<string>([start.href]);
  let redirects: RedirectHop[] | undefined;
  let url = start;
  for (let hop = 0; ; hop++) {
    const host = policy.headersFor?.(url);
    const hopHeaders = host ? { ...headers, ...host.headers } : headers;
    const sentAt = Date.now();
    const response = await transport.get(url, hopHeaders, stop, policy.guard, policy.proxy, policy.onSent);
    const location = header(response, 'location');
    const followed = redirects ?? NO_REDIRECTS;
    if (!REDIRECT_STATUSES.has(response.status) || location === null) return { url, response, blocked: null, headers: recorded(host), redirects: followed };
    let target: URL;
    try {
      target = redirectTarget(location, url, visited, hop, policy.maxRedirects);
    } catch (err) {
      response.body.discard();
      throw err;
    }
    // Not followed: its caller drops the body.
    if (!policy.allowRedirect(target)) return { url, response, blocked: target.href, headers: recorded(host), redirects: followed };
    if (policy.recordRedirects) (redirects ??= []).push(await redirectHop(url, sentAt, response, recorded(host), policy.maxBodyBytes));
    else response.body.discard();
    visited.add(target.href);
    url = target;
  }
}

export interface FetchedPage extends FetchedResource {
  /** Decoded text when the response is HTML, else null. */
  html: string | null;
}

export async function fetchResource(
  transport: Transport,
  resourceUrl: string,
  policy: FetchPolicy,
  signal: AbortSignal,
  wantsBody: (status: number, contentType: string | null) => boolean,
  /** Sent on every hop besides the usual ones: a recrawl's If-None-Match / If-Modified-Since. */
  extraHeaders: Record<string, string> = {},
): Promise<FetchedResource> {
  // A fetch its caller has already cancelled never starts.
  signal.throwIfAborted();
  const deadline = new FetchDeadline(signal, policy.timeoutMs);
  const startedAt = Date.now();
  try {
    const { url, response, blocked, headers, redirects } = await followRedirects(transport, new URL(resourceUrl), policy, deadline, extraHeaders);
    const latencyMs = Date.now() - startedAt;
    const contentType = header(response, 'content-type');
    const base = {
      latencyMs,
      finalUrl: url.href,
      status: response.status,
      contentType,
      retryAfterMs: parseRetryAfter(header(response, 'retry-after'), Date.now()),
      redirectBlocked: blocked,
      robotsHeader: headerList(response, 'x-robots-tag'),
      headers: response.headers,
      requestHeaders: headers,
      redirects,
    };
    if (blocked !== null || !wantsBody(response.status, contentType)) {
      response.body.discard();
      return { ...base, body: null, bytes: 0 };
    }
    const contentEncoding = header(response, 'content-encoding') ?? undefined;
    const { bytes, wireBytes } = await response.body.read({ contentEncoding, maxBytes: policy.maxBodyBytes, truncate: policy.truncateBody ?? false });
    return { ...base, body: bytes, bytes: wireBytes };
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (deadline.expired) throw new FetchError('timeout', `no complete response within ${policy.timeoutMs} ms`, { cause: err });
    throw toFetchError(err);
  } finally {
    deadline.dispose();
  }
}

const isHtmlPage = (status: number, contentType: string | null): boolean =>
  status < 300 && (contentType === null || HTML_TYPES.test(contentType));

export async function fetchPage(
  transport: Transport,
  pageUrl: string,
  policy: FetchPolicy,
  signal: AbortSignal,
  extraHeaders: Record<string, string> = {},
): Promise<FetchedPage> {
  const accepts = policy.acceptsContentType;
  const wantsBody = accepts ? (status: number, contentType: string | null) => isHtmlPage(status, contentType) && accepts(contentType) : isHtmlPage;
  const resource = await fetchResource(transport, pageUrl, policy, signal, wantsBody, extraHeaders);
  if (resource.body === null) return { ...resource, html: null };
  const html = decodeHtml(resource.body, resource.contentType ?? undefined);
  if (looksBinary(resource.body, html)) throw new FetchError('bad-content', 'binary data served as HTML');
  return { ...resource, html };
}
