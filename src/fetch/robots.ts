/**
 * robots.txt, with RFC 9309 semantics: a 2xx body is parsed (robots-parser); a 4xx means no
 * rules; a 5xx or an unreachable file means "disallow everything" until it is fetched again.
 * The fetched file is kept in the frontier store, so all workers of a crawl share one fetch;
 * parsed rules are cached per process.
 */
import robotsParser from 'robots-parser';
import type { FrontierStore, RobotsRecord } from '../store/frontier-store';
import { FetchError } from './errors';
import { fetchResource, type FetchPolicy } from './fetch-page';
import type { Transport } from './transport';

export interface RobotsRules {
  isAllowed(url: string): boolean;
  crawlDelayMs: number | null;
}

const ROBOTS_MAX_BYTES = 512 * 1024; // RFC 9309 asks parsers to handle at least 500 KiB
const ROBOTS_TTL_MS = 24 * 60 * 60 * 1000;
const DISALLOW_ALL = 'User-agent: *\nDisallow: /\n';

function rulesFrom(robotsUrl: string, record: RobotsRecord, userAgent: string): RobotsRules {
  const status = record.status;
  const text = status !== null && status >= 200 && status < 300 ? record.body : status !== null && status < 500 ? '' : DISALLOW_ALL;
  const parsed = robotsParser(robotsUrl, text);
  const delay = parsed.getCrawlDelay(userAgent);
  return {
    isAllowed: (url) => parsed.isAllowed(url, userAgent) !== false,
    crawlDelayMs: delay === undefined ? null : delay * 1000,
  };
}

export class RobotsCache {
  private readonly parsed = new Map<string, { rules: RobotsRules; fetchedAt: number }>();

  constructor(
    private readonly transport: Transport,
    private readonly timeoutMs: number,
  ) {}

  async rules(store: FrontierStore, cacheKey: string, origin: string, userAgent: string, signal: AbortSignal): Promise<RobotsRules> {
    const now = Date.now();
    const cached = this.parsed.get(cacheKey);
    if (cached && now - cached.fetchedAt < ROBOTS_TTL_MS) return cached.rules;
    const host = new URL(origin).host;
    const robotsUrl = `${origin}/robots.txt`;
    let record = store.robots(host);
    if (!record || now - record.fetchedAt >= ROBOTS_TTL_MS) {
      record = await this.download(robotsUrl, userAgent, signal);
      store.saveRobots(host, record);
    }
    const rules = rulesFrom(robotsUrl, record, userAgent);
    this.parsed.set(cacheKey, { rules, fetchedAt: record.fetchedAt });
    return rules;
  }

  private async download(robotsUrl: string, userAgent: string, signal: AbortSignal): Promise<RobotsRecord> {
    const policy: FetchPolicy = {
      userAgent,
      timeoutMs: this.timeoutMs,
      maxBodyBytes: ROBOTS_MAX_BYTES,
      maxRedirects: 5,
      allowRedirect: () => true,
    };
    try {
      const response = await fetchResource(this.transport, robotsUrl, policy, signal, (status) => status >= 200 && status < 300);
      return { status: response.status, body: response.body?.toString('utf8') ?? '', fetchedAt: Date.now() };
    } catch (err) {
      if (signal.aborted) throw err;
      // A file larger than we read is parsed up to the cap by RFC 9309; we treat it as missing rules.
      if (err instanceof FetchError && err.code === 'too-large') return { status: 404, body: '', fetchedAt: Date.now() };
      return { status: null, body: '', fetchedAt: Date.now() };
    }
  }
}
