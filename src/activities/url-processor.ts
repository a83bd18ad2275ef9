/**
 * One claimed URL, from claim to outcome: robots.txt, a request slot under the host's
 * pacing, the fetch and its retries. Backoff, Retry-After and AutoThrottle land in the store's
 * state for the host, so every worker of the crawl waits them out. A wait longer than
 * `LONG_WAIT_MS` is not waited here: the URL is given back with the time it may go, and the
 * workflow waits on a durable timer.
 */
import type { CrawlConfig } from '../shared/crawl-config';
import { changesNothing, type ClaimedUrl, type FrontierStore, type HostPacing } from '../store/frontier-store';
import type { RequestStarts } from '../store/request-starts';
import type { StoreRegistry } from '../store/store-registry';
import { BACKOFF_STATUSES, FetchError, isRetryable, type FetchErrorCode } from '../fetch/errors';
import type { FetchedPage, FetchPolicy } from '../fetch/fetch-page';
import type { RobotsCache } from '../fetch/robots';
import { gapReason, holdReason, hostPacingPolicy, pacingAfter, requestGapMs, type HostPacingPolicy, type RequestOutcome } from '../policy/host-politeness';
import type { KeyGap } from '../shared/crawl-types';
import { statusClass, type CrawlMetrics } from '../observability/metrics';
import { conditionalHeaders, keepsEarlierLinks } from '../recrawl/change';
import { failedOutcome, fetchedOutcome, skippedOutcome, withChange, withEarlierLinks, type OutcomeContext, type PageOutcome } from './page-outcome';
import type { CrawlPolicy } from './crawl-policy';
import type { PageLoader } from './page-loader';

/** Waits longer than this are handed back to the workflow as durable timers. */
export const LONG_WAIT_MS = 10_000;

/** How long a URL's first request, and each retry, may wait for its host (`UrlProcessor.process`). */
export interface UrlWaits {
  firstMs: number;
  retryMs: number;
}

type Attempt = { page: FetchedPage } | { error: FetchErrorCode };
/** The URL's outcome, or the time its host may be asked again and why (`holdReason`). */
export type UrlResult = { outcome: PageOutcome } | { deferUntil: number; attempts: number; reason: string | undefined };

/** Where a URL is processed: its crawl, and the politeness key its requests are paced under. */
export interface UrlWork {
  crawlId: string;
  config: CrawlConfig;
  host: string;
}

/** The requests of one politeness key in a batch: its pacing as last read, and its request slots. */
export interface KeyRequests {
  pacing: { current: HostPacing };
  starts: RequestStarts;
  /** The outcome of the batch's last request under the key, when it failed: what a hold then says it waits for. */
  lastFailure?: RequestOutcome;
  /** The gap kept between the key's requests as of the last one, when there is one: what the batch's heartbeat shows. */
  gap?: KeyGap;
}

/** The fetch policy of a URL's requests: the crawl's limits, and the host's own headers and route. */
function fetchPolicyOf(config: CrawlConfig, crawlPolicy: CrawlPolicy, userAgent: string): FetchPolicy {
  const { page: pagePolicy, guard, proxy, headersFor } = crawlPolicy;
  return {
    userAgent,
    timeoutMs: config.timeoutMs,
    maxBodyBytes: config.maxBodyBytes,
    maxRedirects: config.maxRedirects,
    allowRedirect: (target) => pagePolicy.urls.admit(target) === null,
    acceptsContentType: pagePolicy.acceptsContentType,
    guard,
    headersFor,
    proxy,
    // The hops are stored with the page: their bodies are read only then.
    recordRedirects: config.storeBodies,
  };
}

/** The key's gap as `gapMs` makes it: `kept` when the same, so a steady gap costs no new words per request. */
function keyGap(kept: KeyGap | undefined, key: string, policy: HostPacingPolicy, gapMs: number): KeyGap | undefined {
  if (gapMs <= 0) return undefined;
  return kept?.gapMs === gapMs ? kept : { key, gapMs, why: gapReason(policy, gapMs) };
}

export class UrlProcessor {
  constructor(
    private readonly deps: { stores: StoreRegistry; robots: RobotsCache; metrics: CrawlMetrics },
    private readonly loader: PageLoader,
  ) {}

  /**
   * `waits`: how long the URL's first request and each retry may wait for the host, past which
   * the result is the time the host is free and the attempts made so far (a batch with other
   * keys to crawl meanwhile asks with less than `LONG_WAIT_MS`, and comes back to the URL later).
   */
  async process(work: UrlWork, store: FrontierStore, item: ClaimedUrl, crawlPolicy: CrawlPolicy, key: KeyRequests, signal: AbortSignal, waits: UrlWaits): Promise<UrlResult> {
    const { recrawlOf } = work.config;
    // A recrawl reads the earlier crawl's record of the URL: validators, hash, links.
    const previous = recrawlOf === undefined ? undefined : await this.deps.stores.use(recrawlOf, (earlier) => earlier.record(item.url));
    const context: OutcomeContext = { extractor: crawlPolicy.extractor, recrawl: recrawlOf === undefined ? undefined : { previous } };
    const result = await this.read(work, store, item, crawlPolicy, key, signal, waits, context);
    if (recrawlOf === undefined || !('outcome' in result) || !keepsEarlierLinks(previous, result.outcome.record)) return result;
    // Only links to pages the earlier crawl recorded: a page it read as nofollow keeps its links in
    // its record, and they were never followed.
    const recorded = await this.deps.stores.use(recrawlOf, (earlier) => earlier.recordedAmong(previous.links));
    return { outcome: withEarlierLinks(result.outcome, recorded, work.config, crawlPolicy.page.urls) };
  }

  /** The URL's outcome from robots.txt, its fetch and retries, or the time its host may be asked again (`process`). */
  private async read(
    work: UrlWork,
    store: FrontierStore,
    item: ClaimedUrl,
    crawlPolicy: CrawlPolicy,
    key: KeyRequests,
    signal: AbortSignal,
    waits: UrlWaits,
    context: OutcomeContext,
  ): Promise<UrlResult> {
    const { config, host, crawlId } = work;
    if (item.skipped !== undefined) return { outcome: withChange(skippedOutcome(item, item.skipped), context) }; // over the host's page cap
    // Requests (headers, cookies, robots.txt) belong to the URL's host; pacing to its politeness key.
    const url = new URL(item.url);
    const { profile } = crawlPolicy.hostRequests(url.host);
    let crawlDelayMs: number | null = null;
    if (config.respectRobots) {
      const { guard, headersFor, proxy } = crawlPolicy;
      const rules = await this.deps.robots.rules(store, `${crawlId}\n${url.host}`, url.origin, { userAgent: profile.userAgent, guard, headersFor, proxy }, signal);
      if (rules.hostError !== null) return { outcome: withChange(failedOutcome(item, rules.hostError), context) };
      if (!rules.isAllowed(item.url)) return { outcome: withChange(skippedOutcome(item, 'robots'), context) };
      crawlDelayMs = rules.crawlDelayMs;
    }
    const pacingPolicy = hostPacingPolicy(config, crawlPolicy.pacingOverride(host), crawlDelayMs);
    const policy = fetchPolicyOf(config, crawlPolicy, profile.userAgent);
    const { pacing, starts } = key;
    const validators = conditionalHeaders(crawlPolicy.revalidates ? context.recrawl?.previous : undefined, config.storeBodies);
    for (let attempts = item.attempts; ; ) {
      const gapMs = requestGapMs(pacingPolicy, pacing.current);
      key.gap = keyGap(key.gap, host, pacingPolicy, gapMs);
      const start = await starts.take(gapMs, attempts === item.attempts ? waits.firstMs : waits.retryMs);
      if ('deferUntil' in start) return { deferUntil: start.deferUntil, attempts, reason: holdReason(pacingPolicy, gapMs, LONG_WAIT_MS, pacing.current.errorStreak, key.lastFailure) };
      this.deps.metrics.politenessWait.observe(start.waitedMs / 1000);

      const attemptPolicy = start.sent ? { ...policy, onSent: start.sent } : policy;
      const attempt = await this.attemptFetch(item.url, attemptPolicy, config, signal, validators);
      attempts += 1;
      const page = 'page' in attempt ? attempt.page : null;
      const outcome: RequestOutcome = {
        status: page?.status ?? null,
        error: 'error' in attempt ? attempt.error : null,
        latencyMs: page?.latencyMs ?? null,
        retryAfterMs: page !== null && BACKOFF_STATUSES.has(page.status) ? page.retryAfterMs : null,
      };
      // The common case (a success on a host this worker saw healthy) changes nothing: no store
      // transaction per page. A failure or a throttle change always goes to the shared state.
      if (!changesNothing(pacing.current, pacingAfter(pacingPolicy, pacing.current, outcome, Date.now()))) {
        pacing.current = await store.updatePacing(host, (current) => pacingAfter(pacingPolicy, current, outcome, Date.now()));
      }
      const failed = isRetryable(outcome);
      key.lastFailure = failed ? outcome : undefined;
      if (failed && attempts <= config.maxRetries) {
        this.deps.metrics.retries.inc();
        continue;
      }
      if ('error' in attempt) return { outcome: withChange(failedOutcome(item, attempt.error), context) };
      return { outcome: fetchedOutcome(item, attempt.page, config, crawlPolicy.page, context) };
    }
  }

  private async attemptFetch(url: string, policy: FetchPolicy, config: CrawlConfig, signal: AbortSignal, headers: Record<string, string>): Promise<Attempt> {
    const { metrics } = this.deps;
    const stopTimer = metrics.taskDuration.startTimer({ type: this.loader.render ? 'render' : 'fetch' });
    try {
      const page = await this.loader.load(url, policy, config, signal, headers);
      stopTimer({ status: statusClass(page.status) });
      return { page };
    } catch (err) {
      signal.throwIfAborted();
      if (!(err instanceof FetchError)) throw err;
      stopTimer({ status: 'error' });
      metrics.fetchErrors.inc({ code: err.code });
      return { error: err.code };
    }
  }
}
