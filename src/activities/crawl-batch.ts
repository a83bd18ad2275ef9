/**
 * The batch activity: claims up to `limit` URLs of one host, fetches and parses them one
 * after another (a batch is one connection's worth of politeness), writes each record and
 * its new links to the store, and returns counts and a view of the crawl — never pages.
 *
 * Liveness and stopping: a ticker heartbeats every second whatever the network does, so a
 * slow response never looks like a dead worker, and reads the store's stop order for the
 * batch's run; cancellation reaches the in-flight request through the batch's AbortSignal
 * (see batch-ticker.ts).
 *
 * Resume: the batch ID is the same on every attempt, and the store hands a retried attempt
 * the URLs its predecessor claimed and did not finish; finished ones are never redone.
 *
 * Outages: store calls wait out a short outage; a longer one ends the batch with a
 * `store-unavailable` report (its claims kept under its ID), so the workflow can show the
 * crawl waiting and have the claims given back once the store answers.
 */
import { Context } from '@temporalio/activity';
import type { BatchProgress, BatchReport, BatchResult, HostDeferral, LegacyBatchInput } from '../shared/crawl-types';
import type { CrawlConfig } from '../shared/crawl-config';
import { changesNothing, type ClaimBounds, type ClaimedUrl, type FrontierStore, type HostPacing, type ReadyClaim } from '../store/frontier-store';
import { RequestStarts } from '../store/request-starts';
import type { HostOverride } from '../shared/politeness-config';
import { BACKOFF_STATUSES, FetchError, isRetryable, type FetchErrorCode } from '../fetch/errors';
import { AddressGuard } from '../fetch/address-guard';
import { fetchPage, type FetchedPage, type FetchPolicy } from '../fetch/fetch-page';
import { markRendered, renderMatcher, type UrlMatcher } from '../policy/render-routing';
import type { Transport } from '../fetch/transport';
import { proxyRoute, requestProfile, type ProxyRoute, type RequestProfile } from '../fetch/request-profile';
import { hostOverride, hostOverrideKey } from '../policy/host-overrides';
import { politenessKeys, type PolitenessKeys } from '../policy/politeness-key';
import { sharePriority } from '../policy/frontier-order';
import { hostPacingPolicy, pacingAfter, requestGapMs, type RequestOutcome } from '../policy/host-politeness';
import { statusClass } from '../observability/metrics';
import type { Extractor } from '../parse/extract-fields';
import { loadExtractor } from '../parse/load-extractor';
import { conditionalHeaders } from '../recrawl/change';
import { captureRecords } from '../warc/warc-record';
import { buildPagePolicy, failedOutcome, fetchedOutcome, skippedOutcome, withChange, type OutcomeContext, type PageOutcome, type PagePolicy } from './page-outcome';
import type { ActivityDeps } from './deps';
import { activityFailure } from './activity-failures';
import { patientBodyWriter, patientStore, storeWaitMetrics, type Patience } from '../store/patient-store';
import { storeOutage } from '../store/store-errors';
import type { BatchOrder, HostShare } from '../scheduling/crawl-plan';
import type { BodyStore } from '../bodies/body-store';
import { seedFileScope } from './seed-scope';
import { BatchStop, startTicker } from './batch-ticker';

/** Waits longer than this are handed back to the workflow as durable timers. */
export const LONG_WAIT_MS = 10_000;
/** Hosts in a view of the crawl that starts or resumes a run: enough to fill every batch slot. */
export const SNAPSHOT_HOSTS = 200;
/**
 * Hosts in the view a batch reports: enough to refill the slot it frees, few enough that a
 * report stays a few hundred bytes (every report is kept in history).
 */
export const REPORT_HOSTS = 48;
/**
 * How long a batch's store calls wait out an outage before the batch reports it. Short, so
 * the workflow shows the wait soon; far below the heartbeat timeout (the ticker runs on).
 */
export const BATCH_STORE_PATIENCE_MS = 5_000;

type Attempt = { page: FetchedPage } | { error: FetchErrorCode };

/** One batch's work: which URLs to claim, under which config; `run` is set for batches of a 0.3 workflow run. */
interface BatchWork {
  crawlId: string;
  batchId: string;
  shares: HostShare[];
  config: CrawlConfig;
  run?: string;
  shard?: number;
  /** URLs to take from the store's ready keys after the shares, and the key concurrency that bounds every claim. */
  fill?: { urls: number; perHostConcurrency: number };
}
type UrlResult = { outcome: PageOutcome } | { deferUntil: number; attempts: number };

/** A host's override and what requests to it look like. */
interface HostRequests {
  override: HostOverride | undefined;
  profile: RequestProfile;
}

/** The entry of hosts without an override (no `hosts` key is empty). */
const NO_OVERRIDE = '';

/**
 * Every request profile of the crawl, by `hosts` key: as many as the config has, however many
 * hosts the crawl meets. Built up front, so a variable missing on this worker fails a batch at
 * once, never in the middle of a redirect; kept per key, so it fails only the batches of the
 * hosts whose requests need it.
 */
function requestsByOverride(config: CrawlConfig): (key: string) => HostRequests {
  const build = (key: string): HostRequests | Error => {
    const override = key === NO_OVERRIDE ? undefined : config.hosts[key];
    try {
      return { override, profile: requestProfile(config, override === undefined ? undefined : key) };
    } catch (err) {
      return err as Error;
    }
  };
  const requests = new Map<string, HostRequests | Error>([NO_OVERRIDE, ...Object.keys(config.hosts)].map((key) => [key, build(key)]));
  return (key) => {
    const requestsOf = requests.get(key)!;
    if (requestsOf instanceof Error) throw requestsOf;
    return requestsOf;
  };
}

/** What a crawl's config implies for every URL, built once per crawl and worker. */
interface CrawlPolicy {
  page: PagePolicy;
  guard: AddressGuard;
  extractor: Extractor | undefined;
  /** Which discovered URLs are queued for rendering (`render.match`); null when the crawl renders nothing. */
  renders: UrlMatcher | null;
  proxy: ProxyRoute | undefined;
  /** Puts found URLs under their politeness keys and shards. */
  keys: PolitenessKeys;
  hostRequests(host: string): HostRequests;
  /** The override whose delay and concurrency apply to a politeness key. */
  pacingOverride(key: string): HostOverride | undefined;
  /** Asked on every redirect hop: each host gets its own headers and cookies. */
  headersFor(url: URL): Readonly<Record<string, string>>;
}

/**
 * How a batch turns a URL into a page: fetched (fetch batches), or fetched and rendered in a
 * browser (render batches, see render-batch.ts). Everything else about a batch is the same.
 */
export interface PageLoader {
  /** Claims URLs enqueued for rendering (true) or for fetching. */
  render: boolean;
  /** `headers` are added to the page request (a recrawl's conditional headers). */
  load(url: string, policy: FetchPolicy, config: CrawlConfig, signal: AbortSignal, headers: Record<string, string>): Promise<FetchedPage>;
}

export function fetchLoader(transport: Transport): PageLoader {
  return { render: false, load: (url, policy, _config, signal, headers) => fetchPage(transport, url, policy, signal, headers) };
}

/** Whether a host is one of the claimed URLs': the hosts under a politeness key that this batch meets. */
function hostsOf(claimed: readonly ClaimedUrl[]): (host: string) => boolean {
  const hosts = new Set(claimed.map((item) => new URL(item.url).host));
  return (host) => hosts.has(host);
}

function throwIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason;
}

export function createBatchActivities(deps: ActivityDeps, loader: PageLoader = fetchLoader(deps.transport)) {
  const { stores, robots, metrics, workerId, bodies, configs } = deps;
  const queueGauge = metrics.queueLength.labels(workerId);
  /** One policy per crawl, rebuilt when seeds are added (they join the scope and the trusted seed addresses). */
  const policies = new Map<string, CrawlPolicy & { seeds: number }>();

  async function policyFor(crawlId: string, config: CrawlConfig, store: FrontierStore): Promise<CrawlPolicy> {
    let policy = policies.get(crawlId);
    if (policy?.seeds !== config.seeds.length) {
      const requests = requestsByOverride(config);
      const hostRequests = (host: string): HostRequests => requests(hostOverrideKey(config.hosts, host) ?? NO_OVERRIDE);
      policy = {
        page: buildPagePolicy(config, await seedFileScope(store, config)),
        guard: AddressGuard.forCrawl(config),
        extractor: await loadExtractor(config.extract),
        renders: renderMatcher(config),
        proxy: proxyRoute(config),
        keys: politenessKeys(config, (hostname) => deps.transport.resolve(hostname)),
        hostRequests,
        pacingOverride: (key) => hostOverride(config.hosts, key),
        headersFor: (url) => hostRequests(url.host).profile.headers,
        seeds: config.seeds.length,
      };
      policies.set(crawlId, policy);
    }
    return policy;
  }

  async function attemptFetch(url: string, policy: FetchPolicy, config: CrawlConfig, signal: AbortSignal, headers: Record<string, string>): Promise<Attempt> {
    const stopTimer = metrics.taskDuration.startTimer({ type: loader.render ? 'render' : 'fetch' });
    try {
      const page = await loader.load(url, policy, config, signal, headers);
      stopTimer({ status: statusClass(page.status) });
      return { page };
    } catch (err) {
      throwIfCancelled(signal);
      if (!(err instanceof FetchError)) throw err;
      stopTimer({ status: 'error' });
      metrics.fetchErrors.inc({ code: err.code });
      return { error: err.code };
    }
  }

  async function processUrl(
    input: Pick<BatchWork, 'crawlId' | 'config'> & { host: string },
    store: FrontierStore,
    item: ClaimedUrl,
    crawlPolicy: CrawlPolicy,
    pacing: { current: HostPacing },
    starts: RequestStarts,
    signal: AbortSignal,
  ): Promise<UrlResult> {
    const { config, host, crawlId } = input;
    // A recrawl reads the earlier crawl's record of the URL: validators, hash, links.
    const context: OutcomeContext = {
      extractor: crawlPolicy.extractor,
      recrawl: config.recrawlOf === undefined ? undefined : { previous: await stores.use(config.recrawlOf, (previous) => previous.record(item.url)) },
    };
    if (item.skipped !== undefined) return { outcome: withChange(skippedOutcome(item, item.skipped), context) }; // over the host's page cap
    const { page: pagePolicy, guard, proxy, headersFor } = crawlPolicy;
    // Requests (headers, cookies, robots.txt) belong to the URL's host; pacing to its politeness key.
    const url = new URL(item.url);
    const { profile } = crawlPolicy.hostRequests(url.host);
    const override = crawlPolicy.pacingOverride(host);
    let crawlDelayMs: number | null = null;
    if (config.respectRobots) {
      const rules = await robots.rules(store, `${crawlId}\n${url.host}`, url.origin, { userAgent: profile.userAgent, guard, headersFor, proxy }, signal);
      if (rules.hostError !== null) return { outcome: withChange(failedOutcome(item, rules.hostError), context) };
      if (!rules.isAllowed(item.url)) return { outcome: withChange(skippedOutcome(item, 'robots'), context) };
      crawlDelayMs = rules.crawlDelayMs;
    }
    const pacingPolicy = hostPacingPolicy(config, override, crawlDelayMs);
    const policy: FetchPolicy = {
      userAgent: profile.userAgent,
      timeoutMs: config.timeoutMs,
      maxBodyBytes: config.maxBodyBytes,
      maxRedirects: config.maxRedirects,
      allowRedirect: (target) => pagePolicy.urls.admit(target) === null,
      acceptsContentType: pagePolicy.acceptsContentType,
      guard,
      headersFor,
      proxy,
    };
    for (let attempts = item.attempts; ; ) {
      const start = await starts.take(requestGapMs(pacingPolicy, pacing.current), LONG_WAIT_MS);
      if ('deferUntil' in start) return { deferUntil: start.deferUntil, attempts };
      metrics.politenessWait.observe(start.waitedMs / 1000);

      const attemptPolicy = start.sent ? { ...policy, onSent: start.sent } : policy;
      const attempt = await attemptFetch(item.url, attemptPolicy, config, signal, conditionalHeaders(context.recrawl?.previous));
      attempts += 1;
      const page = 'page' in attempt ? attempt.page : null;
      const outcome: RequestOutcome = {
        status: page?.status ?? null,
        error: 'error' in attempt ? attempt.error : null,
        latencyMs: page?.latencyMs ?? null,
        retryAfterMs: page !== null && BACKOFF_STATUSES.has(page.status) ? page.retryAfterMs : null,
      };
      // Backoff, Retry-After and AutoThrottle land in the store's state for the host, so every
      // worker of the crawl waits them out; a retry simply asks for the next slot.
      // The common case (a success on a host this worker saw healthy) changes nothing: no store
      // transaction per page. A failure or a throttle change always goes to the shared state.
      if (!changesNothing(pacing.current, pacingAfter(pacingPolicy, pacing.current, outcome, Date.now()))) {
        pacing.current = await store.updatePacing(host, (current) => pacingAfter(pacingPolicy, current, outcome, Date.now()));
      }
      if (attempts <= config.maxRetries && isRetryable(outcome)) {
        metrics.retries.inc();
        continue;
      }
      if ('error' in attempt) return { outcome: withChange(failedOutcome(item, attempt.error), context) };
      return { outcome: fetchedOutcome(item, attempt.page, config, pagePolicy, context) };
    }
  }

  /** Batches running per crawl, and each crawl's latest frontier size, for the crawl gauges. */
  const runningBatches = new Map<string, number>();
  const frontierSizes = new Map<string, number>();
  const updateCrawlGauges = (): void => {
    metrics.activeCrawls.set(runningBatches.size);
    let queued = 0;
    for (const size of frontierSizes.values()) queued += size;
    metrics.frontierQueued.set(queued);
  };
  const trackBatch = (crawlId: string, delta: 1 | -1): void => {
    const running = (runningBatches.get(crawlId) ?? 0) + delta;
    if (running > 0) runningBatches.set(crawlId, running);
    else {
      runningBatches.delete(crawlId);
      frontierSizes.delete(crawlId);
    }
    updateCrawlGauges();
  };
  const countDropped = (dropped: PageOutcome['dropped'], alreadySeen: number): void => {
    for (const [reason, n] of Object.entries(dropped ?? {})) if (n > 0) metrics.droppedUrls.inc({ reason }, n);
    if (alreadySeen > 0) metrics.droppedUrls.inc({ reason: 'already-seen' }, alreadySeen);
  };

  /** What one attempt of a batch carries from host to host. */
  interface BatchRun {
    work: BatchWork;
    store: FrontierStore;
    policy: CrawlPolicy;
    progress: BatchProgress;
    stop: BatchStop;
    bodyWriter: ReturnType<BodyStore['writer']> | undefined;
  }

  /**
   * Claims the share of one host and fetches its URLs in order; stops early for a long wait
   * the host asked for (the deferral is returned) or a hand-over (the rest is given back).
   */
  async function crawlShare(run: BatchRun, { host, limit }: HostShare, bounds: ClaimBounds): Promise<{ claimed: number; deferUntil?: number }> {
    const claimed = await run.store.claim(run.work.batchId, host, limit, run.work.config.maxPagesPerHost, loader.render, bounds);
    return { claimed: claimed.length, ...(await crawlClaimed(run, host, claimed)) };
  }

  /** Fetches the claimed URLs of one key in order (see `crawlShare`). */
  async function crawlClaimed(run: BatchRun, host: string, claimed: readonly ClaimedUrl[]): Promise<{ deferUntil?: number }> {
    const { work, store, policy, progress, stop, bodyWriter } = run;
    const { signal } = stop;
    const pacing = { current: await store.hostPacing(host) };
    const starts = new RequestStarts(store, host, signal, work.config.politenessKey === 'host' ? undefined : hostsOf(claimed));
    const hostWork = { ...work, host };
    queueGauge.inc(claimed.length);
    let pending = claimed.length;
    try {
      for (const item of claimed) {
        throwIfCancelled(signal);
        if (stop.asked) {
          await store.release(work.batchId);
          break;
        }
        const result = await processUrl(hostWork, store, item, policy, pacing, starts, signal);
        if ('deferUntil' in result) {
          await store.release(work.batchId, { url: item.url, attempts: result.attempts });
          metrics.hostDeferrals.inc();
          return { deferUntil: result.deferUntil };
        }
        const { record, discovered, dropped, capture } = result.outcome;
        if (bodyWriter && capture) record.bodyRef = await bodyWriter.append(captureRecords(capture, new Date(record.fetchedAt)));
        const found = sharePriority(discovered, item.priority, work.config.frontierOrder);
        const keyed = await policy.keys(found);
        const added = await store.complete(work.batchId, record, markRendered(keyed, policy.renders));
        countDropped(dropped, discovered.length - added);
        metrics.pages.inc({ outcome: record.error ? 'error' : record.skipped ? 'skipped' : 'fetched', status_class: statusClass(record.status) });
        metrics.bytes.inc(record.bytes);
        progress.processed += 1;
        pending -= 1;
        queueGauge.dec();
      }
      return {};
    } finally {
      queueGauge.dec(pending);
      await starts.settled();
    }
  }

  /** How many batches may hold a key at once: its override's concurrency, or the crawl's. */
  const holdersOf = (run: BatchRun, key: string): number | undefined =>
    run.work.fill && (run.policy.pacingOverride(key)?.perHostConcurrency ?? run.work.fill.perHostConcurrency);

  /**
   * After its shares, a filling batch takes the ready work the store hands out, a few keys at a
   * time, crawled one after another, until it holds as many URLs as it was ordered
   * (`batchLimit`, which the store checks with every claim) or no key has anything for it.
   */
  async function fillFromStore(run: BatchRun, batchLimit: number, claimedSoFar: number, deferred: HostDeferral[]): Promise<number> {
    const { work, store, stop } = run;
    const { perHostConcurrency } = work.fill!;
    const overrides = Object.values(work.config.hosts).map((override) => override.perHostConcurrency ?? 0);
    const query = {
      render: loader.render,
      shard: work.shard,
      batchLimit,
      maxPagesPerHost: work.config.maxPagesPerHost,
      holdersOf: (key: string) => holdersOf(run, key)!,
      maxHolders: Math.max(perHostConcurrency, ...overrides),
    };
    let claimed = 0;
    while (claimedSoFar + claimed < batchLimit && !stop.asked) {
      const claims = await store.claimReady(work.batchId, { ...query, freeBy: Date.now() + LONG_WAIT_MS });
      if (claims.length === 0) break;
      claimed += await crawlReadyClaims(run, claims, deferred);
    }
    return claimed;
  }

  /**
   * Crawls the keys of one ready claim in order; returns the URLs of those it crawled. A
   * deferral or a hand-over gives back every URL the batch holds unfinished, the later keys'
   * too, so those are left to a later claim.
   */
  async function crawlReadyClaims(run: BatchRun, claims: readonly ReadyClaim[], deferred: HostDeferral[]): Promise<number> {
    let crawledUrls = 0;
    for (const { key, urls } of claims) {
      if (run.stop.asked) {
        await run.store.release(run.work.batchId);
        break;
      }
      const crawled = await crawlClaimed(run, key, urls);
      crawledUrls += urls.length;
      if (crawled.deferUntil !== undefined) {
        deferred.push({ host: key, until: crawled.deferUntil });
        break;
      }
    }
    return crawledUrls;
  }

  /**
   * Crawls the batch's hosts one after another; a cancelled batch gives back what it had not
   * finished, and one the store's abort order stopped returns what it did.
   */
  async function runBatch(work: BatchWork, store: FrontierStore): Promise<{ claimed: number; deferred: HostDeferral[] }> {
    const context = Context.current();
    const stop = new BatchStop(context.cancellationSignal);
    const { signal } = stop;
    const resumed = context.info.heartbeatDetails as BatchProgress | undefined;
    const progress: BatchProgress = { processed: resumed?.processed ?? 0 };
    if (resumed) {
      metrics.batchResumes.inc();
      context.log.info('resuming batch from heartbeat', { batchId: work.batchId, processed: resumed.processed, attempt: context.info.attempt });
    }
    // Each attempt writes its own file (or rows): what a failed attempt wrote is never referenced.
    const bodyWriter = work.config.storeBodies ? patientBodyWriter(bodies.writer(work.crawlId, work.batchId, context.info.attempt), batchPatience(signal)) : undefined;
    const run: BatchRun = { work, store, policy: await policyFor(work.crawlId, work.config, store), progress, stop, bodyWriter };
    const stopTimer = metrics.taskDuration.startTimer({ type: 'batch' });
    const stopTicker = startTicker(work.run, work.shard, store, progress, stop);
    trackBatch(work.crawlId, 1);
    let claimed = 0;
    const deferred: HostDeferral[] = [];
    try {
      const batchLimit = work.shares.reduce((sum, share) => sum + share.limit, work.fill?.urls ?? 0);
      for (const share of work.shares) {
        if (stop.asked) break;
        // A share is bounded by its own limit per key; only the fill after it needs the batch-wide one.
        const crawled = await crawlShare(run, share, { holders: holdersOf(run, share.host) });
        claimed += crawled.claimed;
        if (crawled.deferUntil !== undefined) deferred.push({ host: share.host, until: crawled.deferUntil });
      }
      // Shares the view overstated (keys others took meanwhile) leave room: it is filled like the fill itself.
      if (work.fill) claimed += await fillFromStore(run, batchLimit, claimed, deferred);
      stopTimer({ status: deferred.length === 0 ? 'completed' : 'deferred' });
    } catch (err) {
      stopTimer({ status: signal.aborted ? 'cancelled' : 'failed' });
      if (signal.aborted) await store.release(work.batchId);
      if (!stop.abortedByStoreAlone) throw err;
    } finally {
      stopTicker();
      trackBatch(work.crawlId, -1);
      await bodyWriter?.close();
    }
    context.log.info('batch finished', { batchId: work.batchId, hosts: work.shares.length, claimed, deferred: deferred.length });
    return { claimed, deferred };
  }

  /** How long a batch's store calls and body writes wait out an outage, with the wait on the metrics. */
  const batchPatience = (signal: AbortSignal): Patience => ({ patienceMs: BATCH_STORE_PATIENCE_MS, signal, onWait: storeWaitMetrics(metrics) });

  /** The store as a batch uses it: patient through short outages. */
  const batchStore = (store: FrontierStore, signal: AbortSignal): FrontierStore => patientStore(store, batchPatience(signal));

  /** A batch of the 0.3 workflow: the config comes from the store, the result is a view of the crawl. */
  async function orderedBatch(order: BatchOrder, store: FrontierStore): Promise<BatchReport> {
    const recorded = await configs.get(store, order);
    const config = recorded.delayMs === order.delayMs ? recorded : { ...recorded, delayMs: order.delayMs };
    const fill = order.perHostConcurrency === undefined ? undefined : { urls: order.fill ?? 0, perHostConcurrency: order.perHostConcurrency };
    const { claimed, deferred } = await runBatch({ ...order, shares: order.hosts, config, fill }, store);
    const view = await store.view(REPORT_HOSTS, order.shard);
    frontierSizes.set(order.crawlId, view.queued);
    updateCrawlGauges();
    return { kind: 'done', batchId: order.batchId, hosts: order.hosts.map(({ host }) => host), claimed, deferred, view };
  }

  /** A batch of a crawl started by 0.2.0: the config comes with it, the result has its totals and snapshot. */
  async function legacyBatch(input: LegacyBatchInput, store: FrontierStore): Promise<BatchResult> {
    const { claimed, deferred } = await runBatch({ ...input, shares: [{ host: input.host, limit: input.limit }] }, store);
    const totals = await store.batchTotals(input.batchId);
    const frontier = await store.snapshot(SNAPSHOT_HOSTS);
    return { batchId: input.batchId, host: input.host, claimed, totals, deferUntil: deferred[0]?.until ?? null, frontier };
  }

  /** Runs `work` on the batch's store; a store outage that outlasted the batch's patience is returned. */
  async function onStore<T>(crawlId: string, work: (store: FrontierStore) => Promise<T>, onOutage: (message: string) => T | undefined): Promise<T> {
    const context = Context.current();
    try {
      return await stores.use(crawlId, (store) => work(batchStore(store, context.cancellationSignal)));
    } catch (err) {
      const outage = context.cancellationSignal.aborted ? undefined : storeOutage(err);
      const reported = outage && onOutage(outage.message);
      if (reported !== undefined) return reported;
      throw activityFailure(err, context.info.attempt);
    }
  }

  return {
    /** A batch ordered by the 0.3 workflow; a long store outage is reported, not failed. */
    ordered: (order: BatchOrder): Promise<BatchReport> =>
      onStore(order.crawlId, (store) => orderedBatch(order, store), (message) => ({
        kind: 'store-unavailable',
        batchId: order.batchId,
        hosts: order.hosts.map(({ host }) => host),
        message,
      })),
    /** A batch of a crawl started by 0.2.0, which retries an outage as a failed attempt. */
    legacy: (input: LegacyBatchInput): Promise<BatchResult> => onStore(input.crawlId, (store) => legacyBatch(input, store), () => undefined),
  };
}
