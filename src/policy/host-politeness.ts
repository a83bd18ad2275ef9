/**
 * The per-host politeness policy: how long to leave between two requests to a host, and how
 * a response changes that. Pure functions; the store keeps the state they work on
 * (`HostPacing`, shared by every worker of the crawl) and applies their decisions atomically
 * (`startRequest`, `updatePacing`), so one rule governs a host across workers.
 *
 * The gap before a request is the largest of:
 * - the host's minimum delay: its `hosts` override of `delayMs`, else the crawl's `delayMs`,
 *   or robots.txt Crawl-delay capped at `maxCrawlDelayMs`, whichever is larger;
 * - AutoThrottle's delay for the host, when enabled (never below that minimum);
 * - after failures, the host's backoff or its Retry-After: these move the host's next request
 *   time itself, so every worker waits them out.
 */
import type { CrawlConfig } from '../shared/crawl-config';
import type { HostOverride } from '../shared/politeness-config';
import type { HostPacing, PacingUpdate } from '../store/frontier-store';
import { isRetryable, type FetchErrorCode } from '../fetch/errors';

export interface HostPacingPolicy {
  /** The host's minimum gap between requests: delay or Crawl-delay (capped), whichever is larger. */
  minDelayMs: number;
  /** Which of the two `minDelayMs` is: it names the cause when the gap holds the host. */
  minDelayFrom: 'delay' | 'crawl-delay';
  autoThrottle: CrawlConfig['autoThrottle'];
  backoff: CrawlConfig['backoff'];
  maxRetryAfterMs: number;
}

/** A host's policy, from the crawl's config, the host's override and its robots Crawl-delay. */
export function hostPacingPolicy(config: CrawlConfig, override: HostOverride | undefined, crawlDelayMs: number | null): HostPacingPolicy {
  const delayMs = override?.delayMs ?? config.delayMs;
  const robotsDelayMs = crawlDelayMs === null ? 0 : Math.min(crawlDelayMs, config.maxCrawlDelayMs);
  return {
    minDelayMs: Math.max(delayMs, robotsDelayMs),
    minDelayFrom: robotsDelayMs > delayMs ? 'crawl-delay' : 'delay',
    autoThrottle: config.autoThrottle,
    backoff: config.backoff,
    maxRetryAfterMs: config.maxRetryAfterMs,
  };
}

/** Scrapy's rule: the start delay, never below the minimum delay. */
function startDelayMs(policy: HostPacingPolicy): number {
  return Math.max(policy.minDelayMs, policy.autoThrottle.startDelayMs);
}

/** The gap to reserve after a request to the host starts. */
export function requestGapMs(policy: HostPacingPolicy, pacing: HostPacing): number {
  if (!policy.autoThrottle.enabled) return policy.minDelayMs;
  return Math.max(policy.minDelayMs, pacing.throttleDelayMs ?? startDelayMs(policy));
}

/** What one request to the host came to. */
export interface RequestOutcome {
  /** The final response's status; null when no response arrived. */
  status: number | null;
  error: FetchErrorCode | null;
  /** From sending the request to the response headers; null without a response. */
  latencyMs: number | null;
  /** The response's Retry-After (429 and 503 only), uncapped; null when absent. */
  retryAfterMs: number | null;
}

/**
 * Whether the host is in trouble: transient failures (connection errors, timeouts, 408,
 * 425, 429, 5xx) count against it, any other response clears it, and failures the host did
 * not cause (a blocked address, a too-large body) change nothing.
 */
function health(outcome: RequestOutcome): 'failure' | 'success' | 'neutral' {
  if (isRetryable(outcome)) return 'failure';
  return outcome.status === null ? 'neutral' : 'success';
}

/** Backoff after the `streak`-th failure in a row: base, 2 x base, 4 x base, ... up to max. */
export function backoffDelayMs(backoff: CrawlConfig['backoff'], streak: number): number {
  if (streak <= 0 || backoff.baseMs === 0) return 0;
  return Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(streak - 1, 40));
}

/**
 * Scrapy's AutoThrottle (scrapy/extensions/throttle.py, docs "Throttling algorithm"): with a
 * target of N requests in flight, a server that takes `latency` to answer should get a
 * request every latency / N. The new delay is the mean of the old one and that target, but
 * at least the target ("works better with problematic sites"), kept within
 * [minimum delay, AUTOTHROTTLE_MAX_DELAY]; and a non-200 response never lowers it, since
 * error pages tend to be fast and would otherwise speed the crawl up as a site struggles.
 */
export function throttledDelayMs(policy: HostPacingPolicy, currentMs: number | null, latencyMs: number, status: number): number {
  const { targetConcurrency, maxDelayMs } = policy.autoThrottle;
  const old = currentMs ?? startDelayMs(policy);
  const target = latencyMs / targetConcurrency;
  const next = Math.round(Math.min(Math.max(policy.minDelayMs, Math.max(target, (old + target) / 2)), maxDelayMs));
  return status !== 200 && next <= old ? old : next;
}

/** The host's pacing after one request, and how long every worker must now leave it alone. */
export function pacingAfter(policy: HostPacingPolicy, current: HostPacing, outcome: RequestOutcome, now: number): PacingUpdate {
  const state = health(outcome);
  const errorStreak = state === 'failure' ? current.errorStreak + 1 : state === 'success' ? 0 : current.errorStreak;
  const throttleDelayMs =
    policy.autoThrottle.enabled && outcome.latencyMs !== null && outcome.status !== null
      ? throttledDelayMs(policy, current.throttleDelayMs, outcome.latencyMs, outcome.status)
      : current.throttleDelayMs;
  const waitMs = holdAfterMs(policy, outcome, state === 'failure' ? errorStreak : 0);
  return { pacing: { errorStreak, throttleDelayMs }, notBefore: waitMs > 0 ? now + waitMs : null };
}

/** How long every worker must leave the host alone after `outcome`: its Retry-After (capped), or the backoff of a failure `errorStreak` in a row (0: none). */
function holdAfterMs(policy: HostPacingPolicy, outcome: RequestOutcome, errorStreak: number): number {
  const retryAfterMs = outcome.retryAfterMs === null ? 0 : Math.min(outcome.retryAfterMs, policy.maxRetryAfterMs);
  return Math.max(backoffDelayMs(policy.backoff, errorStreak), retryAfterMs);
}

/** `12 s`, `1.5 s`: a wait as `status` and the Web UI print it. */
function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/** A failed request as its outcome names it: `HTTP 503`, or the fetch error's code. */
function failureName({ status, error }: RequestOutcome): string {
  return status !== null ? `HTTP ${status}` : (error ?? 'a failure');
}

/** What the host's last failed request said, as the reason it is held. */
function failureReason(policy: HostPacingPolicy, errorStreak: number, failure: RequestOutcome): string {
  const { retryAfterMs } = failure;
  if (retryAfterMs !== null) {
    const capped = retryAfterMs > policy.maxRetryAfterMs ? ` (held ${seconds(policy.maxRetryAfterMs)}, the crawl's maxRetryAfterMs)` : '';
    return `${failureName(failure)} with Retry-After ${seconds(retryAfterMs)}${capped}`;
  }
  const streak = errorStreak > 1 ? `${errorStreak} failed requests in a row, the last ` : '';
  return `backoff after ${streak}${failureName(failure)}`;
}

/**
 * Why a host is held for longer than a batch waits, in the words `status` and the workflow's
 * timer give: whichever is longer of its own gap between requests (the gap's largest part
 * named) and the wait the last failed request of the batch to it set (its Retry-After or the
 * backoff). Undefined for a hold that a failure in another batch set: that batch says why.
 */
export function holdReason(policy: HostPacingPolicy, gapMs: number, longWaitMs: number, errorStreak: number, lastFailure: RequestOutcome | undefined): string | undefined {
  if (lastFailure !== undefined && holdAfterMs(policy, lastFailure, errorStreak) >= gapMs) return failureReason(policy, errorStreak, lastFailure);
  return gapMs > longWaitMs ? gapReason(policy, gapMs) : undefined;
}

/** Why the host's requests are `gapMs` apart, naming the gap's largest part: AutoThrottle, robots.txt Crawl-delay or the delay. */
export function gapReason(policy: HostPacingPolicy, gapMs: number): string {
  if (gapMs > policy.minDelayMs) return `AutoThrottle's delay of ${seconds(gapMs)} between requests`;
  return policy.minDelayFrom === 'crawl-delay' ? `robots.txt Crawl-delay of ${seconds(gapMs)}` : `a delay of ${seconds(gapMs)} between requests`;
}
