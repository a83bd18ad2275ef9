/**
 * Reads a crawl's sitemaps when it starts: the configured ones and those its seed hosts'
 * robots.txt lists, following sitemap indexes to a bounded depth, and queues the URLs they
 * name at depth 0 (like seeds: the site itself names them as entry points), after the same
 * normalization, scope and include/exclude filters as links, and marked for rendering by
 * `render.match` as links and seeds are.
 *
 * Every fetch goes through the crawl's transport and address guard and waits for the host's
 * request slot, like a page. A sitemap that cannot be read is reported and skipped: sitemaps
 * add URLs to a crawl, they are never a reason for it to fail.
 */
import type { CrawlConfig } from '../shared/crawl-config';
import type { FrontierEntry, FrontierStore } from '../store/frontier-store';
import type { PolitenessKeys } from '../policy/politeness-key';
import { cancellableSleep, RequestStarts, type TakenStart } from '../store/request-starts';
import type { AddressGuard } from '../fetch/address-guard';
import { FetchError } from '../fetch/errors';
import { fetchResource, type FetchPolicy } from '../fetch/fetch-page';
import type { RobotsCache } from '../fetch/robots';
import type { Transport } from '../fetch/transport';
import { normalizeUrl } from '../policy/normalize-url';
import { markRendered, renderMatcher } from '../policy/render-routing';
import type { UrlPolicy } from '../policy/url-policy';
import { decodeSitemapBody, parseSitemap, SitemapError, SITEMAP_MAX_BYTES, type ParsedSitemap } from './sitemap-parse';

/** Failures listed in the report at most (the count covers all). */
const MAX_REPORTED_FAILURES = 20;
/** Longest wait for a host's request slot before asking again. */
const MAX_SLOT_WAIT_MS = 10_000;

export interface SitemapFailure {
  url: string;
  /** A fetch error code (`timeout`, `blocked-address`, ...) or a SitemapError code (`http-status`, `not-a-sitemap`, ...). */
  reason: string;
  detail: string;
}

/** What the reading found: counts, and the first failures. It goes to workflow history: small. */
export interface SitemapReport {
  /** Sitemap files read (indexes included). */
  files: number;
  failed: number;
  /** Page URLs the sitemaps named that passed normalization, scope and filters. */
  accepted: number;
  /** Of those, URLs new to the frontier. */
  added: number;
  /**
   * Entries not used, by reason: `invalid`, `out-of-scope`, `excluded`, `not-included`, `max-urls` (past
   * `maxUrls`), `max-files` (sitemaps left unread), `index-depth`, `file-cap` (a file over 50,000 entries, counted once).
   */
  dropped: Record<string, number>;
  failures: SitemapFailure[];
}

export interface SitemapReading {
  crawlId: string;
  config: CrawlConfig;
  store: FrontierStore;
  transport: Transport;
  robots: RobotsCache;
  guard: AddressGuard;
  urls: UrlPolicy;
  /** Puts the URLs found under their politeness keys and shards (see politeness-key.ts). */
  keys: PolitenessKeys;
  signal: AbortSignal;
}

/** The politeness key the store paces `url`'s host under. */
async function keyOf(reading: SitemapReading, url: string): Promise<string> {
  const host = new URL(url).host;
  return (await reading.keys([{ url, host, depth: 0 }]))[0].host;
}

interface SitemapRef {
  url: string;
  /** Sitemap indexes passed through to get here. */
  level: number;
}

/** The configured sitemaps, then the robots.txt ones of each seed origin, each once. */
async function startingSitemaps(reading: SitemapReading): Promise<string[]> {
  const { config, crawlId, store, robots, guard, signal } = reading;
  const found = [...config.sitemaps.urls];
  if (config.sitemaps.fromRobots) {
    for (const origin of new Set(config.seeds.map((seed) => new URL(seed).origin))) {
      const key = `${crawlId}\n${new URL(origin).host}`; // the batches' cache key, so the file is parsed once
      const rules = await robots.rules(store, key, origin, { userAgent: config.userAgent, guard }, signal);
      found.push(...rules.sitemaps);
    }
  }
  return [...new Set(found.flatMap((url) => normalizeUrl(url) ?? []))];
}

/** Waits for the sitemap host's next request start, however long it is deferred. */
async function takeStart(reading: SitemapReading, starts: RequestStarts): Promise<TakenStart> {
  for (;;) {
    const start = await starts.take(reading.config.delayMs, MAX_SLOT_WAIT_MS);
    if ('waitedMs' in start) return start;
    await cancellableSleep(Math.min(start.deferUntil - Date.now(), MAX_SLOT_WAIT_MS), reading.signal);
  }
}

async function fetchSitemap(reading: SitemapReading, url: string): Promise<ParsedSitemap> {
  const { config, transport, guard, signal, store } = reading;
  const host = new URL(url).host;
  const starts = new RequestStarts(store, await keyOf(reading, url), signal, (sent) => sent === host);
  const start = await takeStart(reading, starts);
  const policy: FetchPolicy = {
    userAgent: config.userAgent,
    timeoutMs: config.timeoutMs,
    maxBodyBytes: SITEMAP_MAX_BYTES,
    maxRedirects: config.maxRedirects,
    // Sitemaps are often served from another host (a CDN); the address guard still applies.
    allowRedirect: () => true,
    guard,
    onSent: start.sent,
  };
  try {
    const response = await fetchResource(transport, url, policy, signal, (status) => status >= 200 && status < 300);
    if (response.body === null) throw new SitemapError('http-status', `HTTP ${response.status}`);
    return parseSitemap(decodeSitemapBody(response.body));
  } finally {
    await starts.settled();
  }
}

/** Reads the sitemaps, breadth first, and queues their URLs. */
export async function readSitemaps(reading: SitemapReading): Promise<SitemapReport> {
  const { config, store, urls, signal } = reading;
  const { maxUrls, maxFiles, maxIndexDepth } = config.sitemaps;
  const report: SitemapReport = { files: 0, failed: 0, accepted: 0, added: 0, dropped: {}, failures: [] };
  const drop = (reason: string, n = 1): void => {
    if (n > 0) report.dropped[reason] = (report.dropped[reason] ?? 0) + n;
  };
  const renders = renderMatcher(config);
  const queue: SitemapRef[] = (await startingSitemaps(reading)).map((url) => ({ url, level: 0 }));
  const visited = new Set(queue.map((ref) => ref.url));

  for (let ref = queue.shift(); ref !== undefined; ref = queue.shift()) {
    if (signal.aborted) throw signal.reason;
    if (report.files + report.failed >= maxFiles) {
      drop('max-files', queue.length + 1);
      break;
    }
    let sitemap: ParsedSitemap;
    try {
      sitemap = await fetchSitemap(reading, ref.url);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (!(err instanceof FetchError || err instanceof SitemapError)) throw err;
      report.failed += 1;
      if (report.failures.length < MAX_REPORTED_FAILURES) report.failures.push({ url: ref.url, reason: err.code, detail: err.message.slice(0, 200) });
      continue;
    }
    report.files += 1;
    if (sitemap.kind === 'sitemapindex') {
      for (const loc of sitemap.locs) {
        const url = normalizeUrl(loc, ref.url);
        if (url === undefined) drop('invalid');
        else if (ref.level >= maxIndexDepth) drop('index-depth');
        else if (!visited.has(url)) {
          visited.add(url);
          queue.push({ url, level: ref.level + 1 });
        }
      }
    } else {
      const entries: FrontierEntry[] = [];
      for (const loc of sitemap.locs) {
        const normalized = urls.normalize(loc, ref.url);
        if (normalized === undefined || normalized.length > config.maxUrlLength) {
          drop('invalid');
          continue;
        }
        const url = new URL(normalized);
        const refusal = urls.admit(url);
        if (refusal !== null) drop(refusal);
        else if (report.accepted >= maxUrls) drop('max-urls');
        else {
          report.accepted += 1;
          entries.push({ url: normalized, host: url.host, depth: 0 });
        }
      }
      if (sitemap.truncated) drop('file-cap'); // past the protocol's 50,000 entries: the rest were not even read
      const keyed = await reading.keys(entries);
      report.added += await store.enqueue(markRendered(keyed, renders));
    }
  }
  return report;
}
