/**
 * robots.txt, with RFC 9309 semantics: a 2xx body is parsed (robots-parser); a 4xx means no
 * rules; a 5xx or an unreachable file means "disallow everything" until it is fetched again.
 * An unreachable file keeps its cause. Where that cause is the host's (no such name, nothing
 * listening, a refused certificate), the host's pages are recorded with it rather than as
 * skipped for robots.txt: no page of the host could have been fetched, and the record should
 * say why.
 * Redirects are followed up to five hops; a file we cannot get to through them (more hops, a
 * loop, a blocked address) is unavailable, like a 4xx. A file over 512 KiB is parsed up to
 * there. The fetched file is kept in the frontier store, so all workers of a crawl share one
 * fetch; parsed rules are cached per process.
 */
import robotsParser from 'robots-parser';
import type { FrontierStore, RobotsRecord } from '../store/frontier-store';
import { setTimeout as sleep } from 'node:timers/promises';
import { FetchError, RETRYABLE_ERROR_CODES, type FetchErrorCode } from './errors';
import { fetchResource, type FetchPolicy } from './fetch-page';
import type { Transport } from './transport';

export interface RobotsRules {
  isAllowed(url: string): boolean;
  crawlDelayMs: number | null;
  /** The file's `Sitemap:` URLs (absolute, as written). */
  sitemaps: string[];
  /**
   * Set when robots.txt failed in a way every page of the host would fail too (see
   * `HOST_ERRORS`): its pages are recorded with this error, not as skipped for robots.txt.
   */
  hostError: FetchErrorCode | null;
}

const ROBOTS_MAX_BYTES = 512 * 1024; // RFC 9309 asks parsers to handle at least 500 KiB
const ROBOTS_MAX_REDIRECTS = 5; // RFC 9309 section 2.3.1.2
const ROBOTS_TTL_MS = 24 * 60 * 60 * 1000;
const ROBOTS_ATTEMPTS = 3;
const ROBOTS_RETRY_MS = 500;
const DISALLOW_ALL = 'User-agent: *\nDisallow: /\n';
/** Recorded for a file that is unavailable without a status of its own: no rules, like a 404. */
const UNAVAILABLE_STATUS = 404;

/**
 * Failures of the host rather than of the file, after robots.txt's tries: its name does not
 * resolve, nothing accepts a connection at its address, or its certificate is refused. No page
 * of it can be fetched either. A timeout, a reset or a 5xx is a server in trouble, whose pages
 * might answer: those stay a disallow, as RFC 9309 asks.
 */
const HOST_ERRORS: ReadonlySet<string> = new Set<FetchErrorCode>(['dns', 'connect', 'tls-certificate']);

/** Failures that mean the file is unavailable (RFC 9309 section 2.3.1.2), not that the server is in trouble. */
const UNAVAILABLE_ERRORS: ReadonlySet<FetchErrorCode> = new Set(['too-many-redirects', 'redirect-loop', 'bad-redirect', 'blocked-address']);

/**
 * Wildcards read at most. Matching a rule costs O(pattern x path) once it has wildcards, and
 * every URL check walks every rule: a 512 KiB file of `*a*a*a...` rules made one check of a
 * long path take 4.5 s of event-loop time. Past this budget the file is cut before the line
 * that crosses it, as it is past the size cap (RFC 9309 lets a crawler bound what it parses).
 */
export const ROBOTS_MAX_WILDCARDS = 2_000;

/** The file up to the line whose rule would cross the wildcard budget (comments do not count). */
function withinWildcardBudget(text: string): string {
  let wildcards = 0;
  let offset = 0;
  for (const line of text.split('\n')) {
    const rule = line.split('#', 1)[0];
    for (let at = rule.indexOf('*'); at !== -1; at = rule.indexOf('*', at + 1)) wildcards += 1;
    if (wildcards > ROBOTS_MAX_WILDCARDS) return text.slice(0, offset);
    offset += line.length + 1;
  }
  return text;
}

/** The part of robots.txt that is parsed: the first ROBOTS_MAX_BYTES (without the line the cut went through), within the wildcard budget. */
function parsedPart(body: Buffer): string {
  const lastNewline = body.length <= ROBOTS_MAX_BYTES ? body.length - 1 : body.lastIndexOf(0x0a, ROBOTS_MAX_BYTES - 1);
  return withinWildcardBudget(body.subarray(0, lastNewline + 1).toString('utf8'));
}

/** What a robots.txt fetch needs from the crawl's fetch policy. */
export type RobotsFetchPolicy = Pick<FetchPolicy, 'userAgent' | 'guard' | 'headersFor' | 'proxy'>;

function rulesFrom(robotsUrl: string, record: RobotsRecord, userAgent: string): RobotsRules {
  const status = record.status;
  const text = status !== null && status >= 200 && status < 300 ? record.body : status !== null && status < 500 ? '' : DISALLOW_ALL;
  const parsed = robotsParser(robotsUrl, text);
  const delay = parsed.getCrawlDelay(userAgent);
  return {
    isAllowed: (url) => parsed.isAllowed(url, userAgent) !== false,
    crawlDelayMs: delay === undefined ? null : delay * 1000,
    sitemaps: parsed.getSitemaps(),
    hostError: status === null && record.error !== null && HOST_ERRORS.has(record.error) ? (record.error as FetchErrorCode) : null,
  };
}

export class RobotsCache {
  private readonly parsed = new Map<string, { rules: RobotsRules; fetchedAt: number }>();

  constructor(
    private readonly transport: Transport,
    private readonly timeoutMs: number,
  ) {}

  async rules(store: FrontierStore, cacheKey: string, origin: string, fetchPolicy: RobotsFetchPolicy, signal: AbortSignal): Promise<RobotsRules> {
    const now = Date.now();
    const cached = this.parsed.get(cacheKey);
    if (cached && now - cached.fetchedAt < ROBOTS_TTL_MS) return cached.rules;
    const host = new URL(origin).host;
    const robotsUrl = `${origin}/robots.txt`;
    let record = await store.robots(host);
    if (!record || now - record.fetchedAt >= ROBOTS_TTL_MS) {
      record = await this.download(robotsUrl, fetchPolicy, signal);
      await store.saveRobots(host, record);
    }
    const rules = rulesFrom(robotsUrl, record, fetchPolicy.userAgent);
    this.parsed.set(cacheKey, { rules, fetchedAt: record.fetchedAt });
    return rules;
  }

  private async download(robotsUrl: string, fetchPolicy: RobotsFetchPolicy, signal: AbortSignal): Promise<RobotsRecord> {
    const policy: FetchPolicy = {
      ...fetchPolicy,
      timeoutMs: this.timeoutMs,
      // One byte more than we parse tells a file that was cut from one that fits exactly.
      maxBodyBytes: ROBOTS_MAX_BYTES + 1,
      truncateBody: true,
      maxRedirects: ROBOTS_MAX_REDIRECTS,
      allowRedirect: () => true,
    };
    // "Unreachable" makes the whole host disallowed for a day, so a transient failure (a reset
    // keep-alive socket, a 503) is retried before it is believed.
    for (let attempt = 1; ; attempt++) {
      try {
        const response = await fetchResource(this.transport, robotsUrl, policy, signal, (status) => status >= 200 && status < 300);
        if (response.status >= 500 && attempt < ROBOTS_ATTEMPTS) {
          await sleep(ROBOTS_RETRY_MS * attempt, undefined, { signal });
          continue;
        }
        return { status: response.status, body: response.body ? parsedPart(response.body) : '', fetchedAt: Date.now(), error: null };
      } catch (err) {
        if (signal.aborted) throw err;
        if (err instanceof FetchError && UNAVAILABLE_ERRORS.has(err.code)) return { status: UNAVAILABLE_STATUS, body: '', fetchedAt: Date.now(), error: null };
        if (err instanceof FetchError && RETRYABLE_ERROR_CODES.has(err.code) && attempt < ROBOTS_ATTEMPTS) {
          await sleep(ROBOTS_RETRY_MS * attempt, undefined, { signal });
          continue;
        }
        return { status: null, body: '', fetchedAt: Date.now(), error: err instanceof FetchError ? err.code : 'network' };
      }
    }
  }
}
