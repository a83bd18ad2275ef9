/**
 * One attempt of a batch: its shares of hosts, then ready work from the store, its keys
 * crawled in turn and each key's claimed URLs in order, every record and its new links
 * written before the next.
 *
 * Liveness and stopping: a ticker heartbeats every second whatever the network does, so a
 * slow response never looks like a dead worker, and reads the store's stop order for the
 * batch's run; cancellation reaches the in-flight request through the batch's AbortSignal
 * (see batch-ticker.ts).
 *
 * Resume: the batch ID is the same on every attempt, and the store hands a retried attempt
 * the URLs its predecessor claimed and did not finish; finished ones are never redone.
 */
import { Context } from '@temporalio/activity';
import type { BatchProgress, HostDeferral } from '../shared/crawl-types';
import type { CrawlConfig } from '../shared/crawl-config';
import type { ClaimedUrl, FrontierStore, ReadyClaim, ReadyQuery } from '../store/frontier-store';
import { RequestStarts } from '../store/request-starts';
import { markRendered } from '../policy/render-routing';
import { sharePriority } from '../policy/frontier-order';
import { statusClass, type CrawlMetrics } from '../observability/metrics';
import { captureRecords } from '../warc/warc-record';
import { patientBodyWriter, storeWaitMetrics, type Patience } from '../store/patient-store';
import { batchSeqOf, type HostShare } from '../scheduling/crawl-plan';
import type { BodyStore } from '../bodies/body-store';
import { BatchStop, startTicker } from './batch-ticker';
import type { BatchGauges } from './batch-gauges';
import type { CrawlPolicies, CrawlPolicy } from './crawl-policy';
import type { PageLoader } from './page-loader';
import type { PageOutcome } from './page-outcome';
import { LONG_WAIT_MS, type KeyRequests, type UrlProcessor, type UrlWaits } from './url-processor';
import { WorkNotices } from './work-notices';

/**
 * How long a batch's store calls wait out an outage before the batch reports it. Short, so
 * the workflow shows the wait soon; far below the heartbeat timeout (the ticker runs on).
 */
export const BATCH_STORE_PATIENCE_MS = 5_000;

/**
 * How long in all a batch that waits for work (`BatchOrder.waitsForWork`) may wait: long
 * enough for the first pages of a slow site, short enough that a slot given up on goes back
 * to the workflow.
 */
const WORK_WAIT_MS = 10_000;
/** A waiting batch asks the store again at least this often: other workers' batches send no notice. */
const WORK_POLL_MS = 250;
/**
 * A batch crawling what it claimed looks for a newer config (seeds added) at most this often:
 * a page fetched later than that after the add follows its links into the added seeds' sites,
 * for one indexed read a second per batch rather than one per page.
 */
const CONFIG_CHECK_MS = 1_000;

/**
 * A key's next URL that would wait longer than this for the host, while the batch has other
 * keys to crawl, is left for the key's next turn (`crawlInTurn`). Shorter waits are waited:
 * they cost less than going round the other keys.
 */
const YIELD_AFTER_MS = 5;

/**
 * A filling batch whose keys' hosts are all busy for at least this long claims other work to
 * crawl meanwhile (`topUp`). A shorter wait is waited: a claim costs a write transaction.
 */
const TOP_UP_AFTER_MS = 50;
/**
 * After a top-up that found nothing, the batch waits for its own keys this long before it asks
 * the store again: a paced one-host crawl would otherwise ask before every request.
 */
const TOP_UP_RETRY_MS = 1_000;

/**
 * A key a batch crawls: its claimed URLs (a URL left between retries carries the attempts it
 * made), the next one to fetch (past the last once the key is done or its rest was given back),
 * its requests once it has been reached, and when its host is free again, while the key is
 * left for a later turn.
 */
interface KeyWalk {
  host: string;
  urls: ClaimedUrl[];
  next: number;
  requests?: KeyRequests;
  freeAt?: number;
}

/** How long a key's first URL, and each later one, may wait for its host (`crawlInTurn`). */
interface KeyAsk {
  first: UrlWaits;
  later: UrlWaits;
}
/** Every request waits for its host, up to what a batch waits out. */
const WAITS: UrlWaits = { firstMs: LONG_WAIT_MS, retryMs: LONG_WAIT_MS };
/** Every request takes what its host gives now. */
const NOW: UrlWaits = { firstMs: YIELD_AFTER_MS, retryMs: YIELD_AFTER_MS };
/** A key alone in a batch that does not fill (a render batch, or one of a plan from before fills) waits for its host throughout: nothing else can be claimed meanwhile. */
const ALONE: KeyAsk = { first: WAITS, later: WAITS };
/** A key among others takes what its host gives now, and is left for a later turn after. */
const IN_TURN: KeyAsk = { first: NOW, later: NOW };
/** When none of a turn's keys could go, the one free soonest: its first request waits for the host. */
const SOONEST: KeyAsk = { first: { firstMs: LONG_WAIT_MS, retryMs: YIELD_AFTER_MS }, later: NOW };

/** The URLs the walks claimed, finished or not. */
const urlsIn = (walks: readonly KeyWalk[]): number => walks.reduce((sum, walk) => sum + walk.urls.length, 0);

/** The keys with URLs left. */
const walksLeft = (walks: readonly KeyWalk[]): KeyWalk[] => walks.filter((walk) => walk.next < walk.urls.length);

/** The key whose host is free soonest, when every key left found its host busy; else undefined. */
function soonestFree(walks: readonly KeyWalk[]): KeyWalk | undefined {
  let soonest: KeyWalk | undefined;
  for (const walk of walks) {
    if (walk.freeAt === undefined) return undefined;
    if (soonest === undefined || walk.freeAt < soonest.freeAt!) soonest = walk;
  }
  return soonest;
}

/** How long a batch's store calls and body writes wait out an outage, with the wait on the metrics. */
export const batchPatience = (metrics: CrawlMetrics, signal: AbortSignal): Patience => ({
  patienceMs: BATCH_STORE_PATIENCE_MS,
  signal,
  onWait: storeWaitMetrics(metrics),
});

/** One batch's work: which URLs to claim, under which config; `run` is set for batches of a 0.3 workflow run. */
export interface BatchWork {
  crawlId: string;
  batchId: string;
  shares: HostShare[];
  config: CrawlConfig;
  run?: string;
  shard?: number;
  /** URLs to take from the store's ready keys after the shares, and the key concurrency that bounds every claim. */
  fill?: { urls: number; perHostConcurrency: number; waitsForWork?: boolean };
  /** The recorded config version `config` is, and how to read another (batches of a 0.2.0 crawl carry their config instead). */
  recorded?: { version: number; read(version: number): Promise<CrawlConfig> };
}

/** What one attempt of a batch carries from host to host. */
interface BatchRun {
  work: BatchWork;
  store: FrontierStore;
  policy: CrawlPolicy;
  progress: BatchProgress;
  stop: BatchStop;
  bodyWriter: ReturnType<BodyStore['writer']> | undefined;
  /** When the store's config version was last read (`followConfig`). */
  configCheckedAt: number;
  /** What a filling batch asks the store's ready keys for (`fillFromStore`, `topUp`); absent when the batch does not fill. */
  readyQuery?: Omit<ReadyQuery, 'freeBy'>;
  /** Until when a batch whose keys are all busy waits for them without asking the store for more (`topUp`). */
  topUpAfter: number;
  /** The URLs its top-ups claimed. */
  toppedUp: number;
}

/** Whether a host is one of the claimed URLs': the hosts under a politeness key that this batch meets. */
function hostsOf(claimed: readonly ClaimedUrl[]): (host: string) => boolean {
  const hosts = new Set(claimed.map((item) => new URL(item.url).host));
  return (host) => hosts.has(host);
}

/** How many batches may hold a key at once: its override's concurrency, or the crawl's. */
const holdersOf = (run: BatchRun, key: string): number | undefined =>
  run.work.fill && (run.policy.pacingOverride(key)?.perHostConcurrency ?? run.work.fill.perHostConcurrency);

export class BatchRunner {
  private readonly notices = new WorkNotices();

  constructor(
    private readonly deps: { metrics: CrawlMetrics; bodies: BodyStore },
    private readonly loader: PageLoader,
    private readonly policies: CrawlPolicies,
    private readonly gauges: BatchGauges,
    private readonly urls: UrlProcessor,
  ) {}

  /**
   * Crawls the batch's hosts one after another; a cancelled batch gives back what it had not
   * finished, and one the store's abort order stopped returns what it did.
   */
  async run(work: BatchWork, store: FrontierStore): Promise<{ claimed: number; deferred: HostDeferral[] }> {
    const { metrics } = this.deps;
    const context = Context.current();
    const stop = new BatchStop(context.cancellationSignal);
    const resumed = context.info.heartbeatDetails as BatchProgress | undefined;
    const progress: BatchProgress = { processed: resumed?.processed ?? 0 };
    if (resumed) {
      metrics.batchResumes.inc();
      context.log.info('resuming batch from heartbeat', { batchId: work.batchId, processed: resumed.processed, attempt: context.info.attempt });
    }
    // Each attempt writes its own file (or rows): what a failed attempt wrote is never referenced.
    const bodyWriter = work.config.storeBodies
      ? patientBodyWriter(this.deps.bodies.writer(work.crawlId, work.batchId, context.info.attempt), batchPatience(metrics, stop.signal))
      : undefined;
    const policy = await this.policies.forCrawl(work.crawlId, work.config, store);
    const run: BatchRun = { work, store, policy, progress, stop, bodyWriter, configCheckedAt: Date.now(), topUpAfter: 0, toppedUp: 0 };
    const stopTimer = metrics.taskDuration.startTimer({ type: 'batch' });
    const stopTicker = startTicker({ run: work.run, seq: batchSeqOf(work.batchId) }, work.shard, store, progress, stop);
    this.gauges.trackBatch(work.crawlId, 1);
    let claimed = 0;
    const deferred: HostDeferral[] = [];
    try {
      claimed = await this.crawlWork(run, deferred);
      stopTimer({ status: deferred.length === 0 ? 'completed' : 'deferred' });
      // Batches waiting for work learn that this one's claims are done: the crawl may be quiet now.
      if (claimed > 0) this.notices.notify(work.crawlId);
    } catch (err) {
      stopTimer({ status: stop.signal.aborted ? 'cancelled' : 'failed' });
      if (stop.signal.aborted) await store.release(work.batchId);
      if (!stop.abortedByStoreAlone) throw err;
    } finally {
      stopTicker();
      stop.end();
      this.gauges.trackBatch(work.crawlId, -1);
      await bodyWriter?.close();
    }
    context.log.info('batch finished', { batchId: work.batchId, hosts: work.shares.length, claimed, deferred: deferred.length });
    return { claimed, deferred };
  }

  /**
   * When a filling batch's claim could next find a key, after one found none: a key free
   * within what a batch waits out is claimed and waited for (`fillFromStore`), so the lane's
   * first hold to end, less that wait. Undefined when the lane has no backlog.
   */
  async claimableAt(store: FrontierStore, shard: number | undefined): Promise<number | undefined> {
    const freeAt = await store.backlogFreeAt(this.loader.render, shard);
    return freeAt === null ? undefined : freeAt - LONG_WAIT_MS;
  }

  /** The batch's shares, then its fill; returns the URLs claimed, adding each key's deferral to `deferred`. */
  private async crawlWork(run: BatchRun, deferred: HostDeferral[]): Promise<number> {
    const { work } = run;
    const batchLimit = work.shares.reduce((sum, share) => sum + share.limit, work.fill?.urls ?? 0);
    if (work.fill) run.readyQuery = this.readyQueryOf(run, work.fill, batchLimit);
    const walks = await this.claimShares(run);
    const shared = urlsIn(walks);
    if (shared > 0) await this.followConfig(run);
    await this.crawlInTurn(run, walks, deferred);
    const claimed = shared + run.toppedUp;
    // Shares the view overstated (keys others took meanwhile) leave room: it is filled like the fill itself.
    if (run.readyQuery) return claimed + (await this.fillFromStore(run, run.readyQuery, claimed, deferred));
    return claimed;
  }

  /** What a filling batch asks the store's ready keys for: its lane and shard, its limit, and each key's holder bound. */
  private readyQueryOf(run: BatchRun, fill: NonNullable<BatchWork['fill']>, batchLimit: number): Omit<ReadyQuery, 'freeBy'> {
    const { config, shard } = run.work;
    const overrides = Object.values(config.hosts).map((override) => override.perHostConcurrency ?? 0);
    return {
      render: this.loader.render,
      shard,
      batchLimit,
      maxPagesPerHost: config.maxPagesPerHost,
      holdersOf: (key: string) => holdersOf(run, key)!,
      maxHolders: Math.max(fill.perHostConcurrency, ...overrides),
      spread: fill.waitsForWork,
    };
  }

  /** Claims the batch's shares: a share is bounded by its own limit per key; only the fill after them needs the batch-wide one. */
  private async claimShares(run: BatchRun): Promise<KeyWalk[]> {
    const { work, store } = run;
    if (work.shares.length === 0) return [];
    const shares = work.shares.map(({ host, limit }) => ({ host, limit, holders: holdersOf(run, host) }));
    const claimed = await store.claimShares(work.batchId, shares, work.config.maxPagesPerHost, this.loader.render);
    return work.shares.map(({ host }, n) => ({ host, urls: claimed[n], next: 0 }));
  }

  /**
   * Crawls the batch's keys in turn, each from where it was left: a key's URLs in order until
   * the next one would wait for the host's gap (a delay, a Crawl-delay, a backoff) while other
   * keys are left, then the next key. A key whose host was busy is asked again once it is free,
   * and a turn in which no key could go tops the batch up with other keys (`topUp`) or waits
   * for the one free soonest, so a paced or backed-off host never holds up the others. A batch
   * of many paced keys thus keeps one request going where one key at a time would sit out each
   * gap. A deferral (a wait longer than a batch sits idle) gives back the rest of its key, and
   * the others go on; a hand-over gives back every URL the batch holds unfinished and ends the
   * walk. Returns the URLs of the keys it reached.
   */
  private async crawlInTurn(run: BatchRun, walks: KeyWalk[], deferred: HostDeferral[]): Promise<number> {
    const unfinished = () => walks.reduce((sum, walk) => sum + walk.urls.length - walk.next, 0);
    this.gauges.held.inc(unfinished());
    let reached = 0;
    /** Crawls a key as `ask` says; false once the batch was asked to stop, its claims given back. */
    const crawl = async (walk: KeyWalk, ask: KeyAsk): Promise<boolean> => {
      if (run.stop.asked) {
        await run.store.release(run.work.batchId);
        return false;
      }
      if (walk.requests === undefined) reached += walk.urls.length;
      const deferral = await this.crawlKey(run, walk, ask);
      if (deferral !== undefined) deferred.push(deferral);
      return true;
    };
    try {
      for (let turn = walksLeft(walks); turn.length > 0; turn = walksLeft(walks)) {
        // A lone key of a filling batch is asked in turn too: while its host is busy, the batch may take other keys.
        const ask = turn.length > 1 || run.readyQuery !== undefined ? IN_TURN : ALONE;
        for (const walk of turn) {
          if (ask === IN_TURN && walk.freeAt !== undefined && walk.freeAt > Date.now() + YIELD_AFTER_MS) continue;
          if (!(await crawl(walk, ask))) return reached;
        }
        const soonest = soonestFree(walksLeft(turn));
        if (soonest === undefined) continue;
        const added = await this.topUp(run, soonest.freeAt!);
        if (added.length > 0) walks.push(...added);
        else if (!(await crawl(soonest, SOONEST))) return reached;
      }
      return reached;
    } finally {
      this.gauges.held.dec(unfinished());
      await Promise.all(walks.map((walk) => walk.requests?.starts.settled()));
    }
  }

  /**
   * When every key left of a filling batch waits for its host until `freeAt`, claims keys the
   * batch holds nothing of that are free by then, to crawl in the same turns: a batch whose
   * keys are paced hosts then works through their gaps instead of sitting them out in its slot
   * while other hosts' URLs wait for one. Returns the keys claimed, counted as held: none when
   * the wait is short, the batch is stopping, or a top-up found nothing a moment ago.
   */
  private async topUp(run: BatchRun, freeAt: number): Promise<KeyWalk[]> {
    const now = Date.now();
    if (run.readyQuery === undefined || run.stop.asked || freeAt - now < TOP_UP_AFTER_MS || now < run.topUpAfter) return [];
    const claims = await run.store.claimReady(run.work.batchId, { ...run.readyQuery, freeBy: freeAt, besidesHeld: true });
    if (claims.length === 0) run.topUpAfter = now + TOP_UP_RETRY_MS;
    else await this.followConfig(run);
    const walks = claims.map(({ key, urls }) => ({ host: key, urls, next: 0 }));
    const added = urlsIn(walks);
    run.toppedUp += added;
    this.gauges.held.inc(added);
    return walks;
  }

  /**
   * Seeds added to a running crawl are recorded as a new config version before they are queued,
   * so a claim may hand the batch URLs that only a later version's scope takes in: the store's
   * version, read after each claim, says when. A batch that crawled them with the config it was
   * ordered with would drop every link they have as out of scope. Pages claimed before the add
   * have links into the added sites too: the version is read again while they are crawled
   * (`CONFIG_CHECK_MS`).
   */
  private async followConfig(run: BatchRun): Promise<void> {
    run.configCheckedAt = Date.now();
    const { recorded } = run.work;
    if (recorded === undefined) return;
    const latest = await run.store.configVersion();
    if (latest <= recorded.version) return;
    const config = await recorded.read(latest);
    run.work = { ...run.work, config, recorded: { ...recorded, version: latest } };
    run.policy = await this.policies.forCrawl(run.work.crawlId, config, run.store);
  }

  /**
   * Fetches a key's claimed URLs in order from where the walk left it, each waiting for the
   * host as `ask` says (see `crawlInTurn`). A URL whose host would make it wait longer than that
   * is left for the key's next turn, with the time the host is free. Returns the key's deferral
   * when the host asked for a longer wait, the key's unfinished URLs given back.
   */
  private async crawlKey(run: BatchRun, walk: KeyWalk, ask: KeyAsk): Promise<HostDeferral | undefined> {
    const { work, store, stop } = run;
    const { signal } = stop;
    const { host } = walk;
    walk.requests ??= {
      pacing: { current: await store.hostPacing(host) },
      starts: new RequestStarts(store, host, signal, work.config.politenessKey === 'host' ? undefined : hostsOf(walk.urls)),
    };
    walk.freeAt = undefined;
    let urlWork = { crawlId: work.crawlId, config: work.config, host };
    for (const from = walk.next; walk.next < walk.urls.length && !stop.asked; walk.next += 1) {
      signal.throwIfAborted();
      if (Date.now() - run.configCheckedAt >= CONFIG_CHECK_MS) {
        await this.followConfig(run);
        urlWork = { ...urlWork, config: run.work.config };
      }
      const item = walk.urls[walk.next];
      run.progress.gap = walk.requests.gap;
      const result = await this.urls.process(urlWork, store, item, run.policy, walk.requests, signal, walk.next === from ? ask.first : ask.later);
      if ('deferUntil' in result) {
        if (ask !== ALONE && result.deferUntil <= Date.now() + LONG_WAIT_MS) {
          walk.freeAt = result.deferUntil;
          if (result.attempts !== item.attempts) walk.urls[walk.next] = { ...item, attempts: result.attempts };
          return undefined;
        }
        await store.releaseKey(work.batchId, host, { url: item.url, attempts: result.attempts });
        this.gauges.held.dec(walk.urls.length - walk.next);
        walk.next = walk.urls.length;
        this.deps.metrics.hostDeferrals.inc();
        const { deferUntil: until, reason } = result;
        return reason === undefined ? { host, until } : { host, until, reason };
      }
      await this.complete(run, item, result.outcome);
      this.gauges.held.dec();
    }
    return undefined;
  }

  /** Writes a URL's record and its new links (its body first, when the crawl keeps bodies). */
  private async complete(run: BatchRun, item: ClaimedUrl, { record, discovered, dropped, capture }: PageOutcome): Promise<void> {
    const { work, store, policy, bodyWriter } = run;
    const { metrics } = this.deps;
    if (bodyWriter && capture) {
      const stored = captureRecords(capture, new Date(record.fetchedAt));
      record.bodyRef = await bodyWriter.append(stored.bytes);
      record.payloadRecord = stored.payload;
    }
    const found = sharePriority(discovered, item.priority, work.config.frontierOrder);
    const keyed = await policy.keys(found);
    const added = await store.complete(work.batchId, record, markRendered(keyed, policy.renders));
    if (added > 0) this.notices.notify(work.crawlId);
    this.gauges.countDropped(dropped, discovered.length - added);
    metrics.pages.inc({ outcome: record.error ? 'error' : record.skipped ? 'skipped' : 'fetched', status_class: statusClass(record.status) });
    metrics.bytes.inc(record.bytes);
    run.progress.processed += 1;
  }

  /**
   * After its shares, a filling batch takes the ready work the store hands out, a few keys at a
   * time, crawled one after another, until it holds as many URLs as it was ordered
   * (`batchLimit`, which the store checks with every claim) or no key has anything for it.
   */
  private async fillFromStore(run: BatchRun, query: Omit<ReadyQuery, 'freeBy'>, claimedSoFar: number, deferred: HostDeferral[]): Promise<number> {
    const { work, store, stop } = run;
    const { batchLimit } = query;
    let claimed = 0;
    const waitUntil = work.fill!.waitsForWork ? Date.now() + WORK_WAIT_MS : 0;
    // What is queued as a waiting batch starts belongs to the shares launched with it: it
    // claims what running batches queue from now on.
    if (work.fill!.waitsForWork) await this.nextNotice(run, WORK_POLL_MS);
    while (claimedSoFar + claimed < batchLimit && !stop.asked) {
      const claims = await store.claimReady(work.batchId, { ...query, freeBy: Date.now() + LONG_WAIT_MS });
      if (claims.length > 0) {
        await this.followConfig(run);
        claimed += await this.crawlReadyClaims(run, claims, deferred);
      } else if (!(await this.waitForWork(run, waitUntil))) break;
    }
    return claimed;
  }

  /**
   * Waits for work, when the batch may (see `BatchOrder.waitsForWork`) and there is some to wait
   * for: nothing is queued and other batches hold claims whose pages may queue links; or URLs
   * are queued on keys whose hosts are free, which only the keys' holders keep from this batch,
   * and it claims them as the holders let go: a batch that ended instead could report after
   * the holders and close the store to launches for a second, with those URLs there to claim.
   * A backlog held back by pacing past what a batch waits out is left to the workflow's timer.
   * Returns whether to claim again.
   */
  private async waitForWork(run: BatchRun, until: number): Promise<boolean> {
    const { work, store } = run;
    const left = until - Date.now();
    if (left <= 0) return false;
    const { queued } = await store.view(0, work.shard);
    if (queued > 0 ? !(await this.onlyHoldersHoldBack(run)) : await store.quiet()) return false;
    await this.nextNotice(run, Math.min(left, WORK_POLL_MS));
    return true;
  }

  /** Whether a key of the batch's lane with backlog is free within what a batch waits out: a claim that found nothing was kept from it by its holders. */
  private async onlyHoldersHoldBack({ work, store }: BatchRun): Promise<boolean> {
    const freeAt = await store.backlogFreeAt(this.loader.render, work.shard);
    return freeAt !== null && freeAt <= Date.now() + LONG_WAIT_MS;
  }

  /** Resolves on the crawl's next notice or after `ms`; throws the batch's cancellation. */
  private async nextNotice({ work, stop }: BatchRun, ms: number): Promise<void> {
    await this.notices.next(work.crawlId, ms, stop.signal);
    stop.signal.throwIfAborted();
  }

  /** Crawls the keys of one ready claim in turn (`crawlInTurn`); returns the URLs of those it reached. */
  private crawlReadyClaims(run: BatchRun, claims: readonly ReadyClaim[], deferred: HostDeferral[]): Promise<number> {
    return this.crawlInTurn(run, claims.map(({ key, urls }) => ({ host: key, urls, next: 0 })), deferred);
  }
}
