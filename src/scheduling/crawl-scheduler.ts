/**
 * The crawl's scheduling decisions, as a plain class with no Temporal import, so they are
 * unit-tested in milliseconds and the workflow only drives them: which batches to launch
 * (global and per-host concurrency, the page budget, host holds, the render lane), what a
 * batch's end means, when the crawl waits for its store, hands over to a new run, fails or ends.
 *
 * It knows the crawl through views of the store (frontier snapshot and totals, read
 * together): the totals it shows are the store's, so they agree with what was recorded.
 */
import type { CrawlLimits } from '../shared/crawl-config';
import type { BatchFailure, BatchReport, CrawlStatus, CrawlView, HostDeferral, HostState, StoreWait } from '../shared/crawl-types';
import { hostOverrideKey } from '../policy/host-overrides';
import type { CrawlPlan, HostShare } from './crawl-plan';
import { FailureWatch, type FailureWatchState } from './failure-watch';
import { backlogLanes, type Lane } from './lanes';

/** What a run hands to the next across continue-as-new: counters, holds and the latest view. */
export interface SchedulerState {
  limits: CrawlLimits;
  paused: boolean;
  stopping: boolean;
  batchSeq: number;
  batchesCompleted: number;
  /** Hosts held until a time (epoch ms): Retry-After or a long Crawl-delay. */
  hostReadyAt: Record<string, number>;
  /** Why those hosts are held, where their batches said (`HostDeferral.reason`); absent from older runs' states. */
  holdReasons?: Record<string, string>;
  view: CrawlView;
  failures: FailureWatchState;
}

/** A batch to start: its sequence number names it. */
export interface Launch {
  seq: number;
  shares: HostShare[];
  render: boolean;
  /** URLs the batch may take after its shares from keys the store has ready (`BatchOrder.fill`). */
  fill: number;
  /** Set on a filling batch launched before the frontier had work for it (`BatchOrder.waitsForWork`). */
  waits?: true;
}

/**
 * How long a crawl whose batches found nothing to claim waits before it asks the store again,
 * when no running batch will end sooner: every key with backlog was held or held back.
 */
export const FRUITLESS_RETRY_MS = 1_000;

/** A filling batch found nothing at `since`; the store said a key would be claimable at `claimableAt`. */
interface Fruitless {
  since: number;
  claimableAt?: number;
}

/** When the store is worth asking again after a fruitless fill: the short retry, or when a key is claimable if later. */
const retryAt = ({ since, claimableAt = 0 }: Fruitless): number => Math.max(since + FRUITLESS_RETRY_MS, claimableAt);

/** When the schedule wants to look again with nothing else to wake it, and why: the words of its timer in the Web UI. */
export interface Wake {
  at: number;
  why: string;
}

export type Outcome = 'completed' | 'max-pages-reached' | 'stopped' | 'failed' | 'continue-as-new';

interface Running {
  hosts: string[];
  /** URLs the batch may claim in all: its shares and its fill. */
  limit: number;
  render: boolean;
  fill: number;
  /** Launched to wait for work (`Launch.waits`). */
  waits: boolean;
}

export function initialSchedulerState(plan: CrawlPlan, view: CrawlView): SchedulerState {
  return {
    limits: { ...plan.limits },
    paused: false,
    stopping: false,
    batchSeq: 0,
    batchesCompleted: 0,
    hostReadyAt: {},
    holdReasons: {},
    view,
    failures: { tallies: [], streak: null },
  };
}

/**
 * Whether `a` is newer than `b`: versions grow with every change to the queue or the totals, except
 * that URLs another shard finds for this shard's keys only grow its queue (FrontierStore.view).
 */
export function isNewerView(a: CrawlView, b: CrawlView): boolean {
  return a.version > b.version || (a.version === b.version && (a.queued > b.queued || a.totals.processed > b.totals.processed));
}

export class CrawlScheduler {
  private readonly state: SchedulerState & Required<Pick<SchedulerState, 'holdReasons'>>;
  private readonly failures: FailureWatch;
  private readonly running = new Map<string, Running>();
  /** Batches stopped by a store outage, holding their claims until the store answers. */
  private readonly parked = new Map<string, string[]>();
  /** URLs handed to batches since the current view arrived, per lane. */
  private launchedSinceView = new Map<string, number>();
  /** Batches told to fill since the current view arrived: each takes at least one URL the view does not name. */
  private fillsSinceView = 0;
  /**
   * When a filling batch last claimed nothing, until one claims something again, and when it
   * found the store would next have a key to claim (`BatchReport.claimableAt`): the store is
   * asked again at the later of the two.
   */
  private fruitless: Fruitless | null = null;
  private storeWait: StoreWait | null = null;
  private handingOver = false;

  constructor(
    private readonly plan: CrawlPlan,
    state: SchedulerState,
  ) {
    this.state = { ...state, limits: { ...state.limits }, hostReadyAt: { ...state.hostReadyAt }, holdReasons: { ...state.holdReasons } };
    this.failures = new FailureWatch(state.failures);
  }

  get limits(): CrawlLimits {
    return this.state.limits;
  }

  get view(): CrawlView {
    return this.state.view;
  }

  pause(): void {
    this.state.paused = true;
  }

  resume(): void {
    this.state.paused = false;
  }

  stop(): void {
    this.state.stopping = true;
  }

  setLimits(change: Partial<CrawlLimits>): CrawlLimits {
    this.state.limits = { ...this.state.limits, ...change };
    return this.state.limits;
  }

  /** No new batches: the run is about to continue-as-new once the running ones have handed over. */
  handOver(): void {
    this.handingOver = true;
  }

  acceptView(view: CrawlView): void {
    if (!isNewerView(view, this.state.view)) return;
    this.state.view = view;
    this.launchedSinceView = new Map();
    this.fillsSinceView = 0;
  }

  /**
   * Seeds were added (`added` of them new to the crawl), and `view` shows them queued. A
   * filling batch that found nothing closed the store to launches until a batch claims again
   * (`storeHasWork`); the new seeds are work it could not have seen, and the running batches
   * may hold slow pages for as long as a site takes, so the store is worth asking at once.
   */
  seedsAdded(view: CrawlView, added: number): void {
    this.acceptView(view);
    if (added > 0) this.fruitless = null;
  }

  budgetLeft(): number {
    return this.budgetBeyond((batch) => batch.limit);
  }

  /**
   * Whether the page budget is spent for any URL queued from now on (an added seed): the pages
   * done and the shares of running batches reach `maxPages`. A share is backlog the view named
   * for its host, which the batch claims whole as it starts it. A batch's fill is left out,
   * unlike in `budgetLeft`: a filling batch claims what the store has ready as it goes, so it
   * may take a URL queued now. What this cannot foresee, rare and never beyond the budget: a
   * share the view overstated (others took the key's URLs meanwhile) leaves room its batch
   * fills from the store, and a batch that hands unfetched URLs back (a host's long wait, a
   * hand-over) frees their budget for later batches.
   */
  budgetSpent(): boolean {
    return this.budgetBeyond((batch) => batch.limit - batch.fill) <= 0;
  }

  /** The page budget left beyond the pages done and what each running batch holds of it by `reservation`. */
  private budgetBeyond(reservation: (batch: Running) => number): number {
    let reserved = 0;
    for (const batch of this.running.values()) reserved += reservation(batch);
    return this.plan.maxPages - this.state.view.totals.processed - reserved;
  }

  private hostBatches(host: string): number {
    let n = 0;
    for (const batch of this.running.values()) if (batch.hosts.includes(host)) n += 1;
    return n;
  }

  private renderBatches(): number {
    let n = 0;
    for (const batch of this.running.values()) if (batch.render) n += 1;
    return n;
  }

  private hostConcurrency(host: string): number {
    const key = hostOverrideKey(this.plan.hostConcurrency, host);
    return (key === undefined ? undefined : this.plan.hostConcurrency[key]) ?? this.state.limits.perHostConcurrency;
  }

  private launching(): boolean {
    return !this.state.paused && !this.state.stopping && !this.handingOver && this.storeWait === null && this.fatal() === null;
  }

  /**
   * Whether the store is worth asking for work at `now`: not while the last filling batch found
   * nothing, until a batch claims again or, with none running, a short wait has passed.
   */
  private storeHasWork(now: number): boolean {
    return this.fruitless === null || this.storeRetryDue(now);
  }

  /**
   * Whether the store may be asked again after a filling batch found nothing: the short wait
   * has passed with no batch running. Once `launches` has run at `now`, true means that asking
   * launched nothing: every key with backlog is held.
   */
  storeRetryDue(now: number): boolean {
    return this.fruitless !== null && this.running.size === 0 && now >= retryAt(this.fruitless);
  }

  /**
   * What the store's frontier may have become since a filling batch found nothing and read
   * when a key frees: another batch ended (it may have given URLs back) or the store recovered
   * (parked claims were released). The short retry stands; the reading does not.
   */
  private frontierMoved(): void {
    if (this.fruitless !== null) this.fruitless = { since: this.fruitless.since };
  }

  /** The view's backlog not yet handed to a batch. */
  private unlaunched(): number {
    let launched = this.fillsSinceView;
    for (const n of this.launchedSinceView.values()) launched += n;
    return this.state.view.queued - launched;
  }

  /**
   * The backlog of keys the view does not name (it names the biggest only), less a URL for each
   * batch told to fill since: what filling from the store may still find. The named keys'
   * backlog is the shares', which count each key's batches against its concurrency.
   */
  private unlisted(): number {
    let listed = this.fillsSinceView;
    for (const { queued } of this.state.view.hosts) listed += queued;
    return this.state.view.queued - listed;
  }

  /**
   * URLs a packed batch is sized to: the batch size, or on a crawl that fills from the store
   * the unlaunched backlog spread over the free slots, so a broad crawl's start and tail keep
   * every slot busy with batches of equal work.
   */
  private packTarget(): number {
    if (!this.plan.fillsFromStore) return this.plan.batchSize;
    const free = Math.max(1, this.state.limits.concurrency - this.running.size);
    return Math.max(1, Math.min(this.plan.batchSize, Math.ceil(this.unlaunched() / free)));
  }

  /**
   * The lane's share of a launch, at most `room` URLs, or 0 when the lane may not launch now.
   * A big host's backlog is split over its batch slots, so it is crawled in parallel; when
   * batches are packed, a host goes into one batch whole, as far as the batch has room.
   * `waiting` running batches wait for work (`waitingBatches`): they take a fetch lane's URLs
   * from the store as well, so they count as its slots, and what the share leaves is theirs.
   */
  private shareOf(lane: Lane, room: number, packing: boolean, waiting: number): number {
    const { concurrency } = this.state.limits;
    const estimate = lane.queued - (this.launchedSinceView.get(lane.key) ?? 0);
    const hostSlots = this.hostConcurrency(lane.host) - this.hostBatches(lane.host);
    if (estimate <= 0 || hostSlots <= 0) return 0;
    if (lane.render && this.renderBatches() >= (this.plan.render?.maxConcurrentBatches ?? 0)) return 0;
    const slots = concurrency - this.running.size + (lane.render ? 0 : waiting);
    const share = packing ? estimate : Math.ceil(estimate / Math.max(1, Math.min(hostSlots, slots)));
    return Math.min(room, share, this.budgetLeft());
  }

  /** Running batches launched to wait for work (`Launch.waits`). */
  waitingBatches(): number {
    let waiting = 0;
    for (const batch of this.running.values()) if (batch.waits) waiting += 1;
    return waiting;
  }

  /**
   * Round-robin over ready hosts with backlog, one share per lane per pass, within every limit.
   * When there are more hosts with work than free batch slots (a broad crawl), small shares
   * are packed into one batch up to the batch size, so a crawl of many small hosts runs as few
   * full batches rather than many tiny ones: fewer activities, fewer history events.
   * `sharesWithWaiting` splits a host's backlog over the running batches that wait for work
   * too (`shareOf`): when their activities start late, after the links they were launched for
   * are queued, a batch ordered into the one free slot would otherwise take a host's links
   * whole and fetch them one after another while they idle.
   */
  launches(now: number, sharesWithWaiting = false): Launch[] {
    if (!this.launching() || (this.plan.fillsFromStore && !this.storeHasWork(now))) return [];
    const target = this.packTarget();
    const launches = this.shareLaunches(now, target, sharesWithWaiting ? this.waitingBatches() : 0);
    if (this.plan.fillsFromStore) this.fillLaunches(launches, target);
    return launches;
  }

  /**
   * Tops up the new batches to `target` from the store's ready keys, then starts batches that
   * only fill while slots, budget and backlog the view does not name last: the view names the
   * biggest hosts only, and the store knows which of the rest are free.
   *
   * A filling batch claims one key at a time as it goes, so it keeps finding the work that
   * batches before it discover: a fill-only batch is sized by the budget, not by the backlog
   * the view shows, and a broad crawl runs as long batches, few history events per page.
   */
  private fillLaunches(launches: Launch[], target: number): void {
    for (const launch of launches) this.addFill(launch, target - this.running.get(String(launch.seq))!.limit);
    while (this.running.size < this.state.limits.concurrency && this.budgetLeft() > 0) {
      const waits = this.unlisted() <= 0;
      if (waits && !this.rampingUp()) return;
      const budgetShare = Math.ceil(this.budgetLeft() / (this.state.limits.concurrency - this.running.size));
      const launch = this.start(null, 0, false);
      this.addFill(launch, Math.min(this.plan.batchSize, budgetShare), waits);
      launches.push(launch);
    }
  }

  /**
   * Whether free slots may get batches that wait for work (`BatchOrder.waitsForWork`): the
   * frontier has fewer unlaunched URLs than there are free slots, and running batches may
   * find more. At a crawl's start each level of links would otherwise cost a round of batches
   * through the workflow, with most slots empty meanwhile; and a slot freed while running
   * batches hold the links would stay empty until one of them ends. A waiting batch that
   * found nothing stops launches like any filling batch (`storeHasWork`), so they are not
   * replaced by more of the same.
   */
  private rampingUp(): boolean {
    const free = this.state.limits.concurrency - this.running.size;
    return this.plan.waitsForWork === true && this.running.size > 0 && this.unlaunched() < free;
  }

  private addFill(launch: Launch, room: number, waits = false): void {
    const fill = Math.min(room, this.budgetLeft());
    if (fill <= 0 || (!waits && this.unlisted() <= 0)) return;
    const batch = this.running.get(String(launch.seq))!;
    if (waits) launch.waits = batch.waits = true;
    launch.fill += fill;
    batch.fill += fill;
    batch.limit += fill;
    this.fillsSinceView += 1;
  }

  /** The launches of host shares the view names, packed up to `target` URLs (see `launches`). */
  private shareLaunches(now: number, target: number, waiting: number): Launch[] {
    const lanes = backlogLanes(
      this.state.view.hosts.filter(({ host }) => this.heldUntil(host, now) === null),
      this.plan.render !== null,
    );
    const launches: Launch[] = [];
    for (let launched = true; launched; ) {
      launched = false;
      const pack = lanes.filter((lane) => lane.queued > (this.launchedSinceView.get(lane.key) ?? 0)).length > this.state.limits.concurrency - this.running.size;
      const size = pack ? target : this.plan.batchSize;
      let open: Launch | undefined;
      for (const lane of lanes) {
        if (this.budgetLeft() <= 0) return launches;
        const joins = open !== undefined && open.render === lane.render && !open.shares.some((share) => share.host === lane.host);
        if (!joins && this.running.size >= this.state.limits.concurrency) return launches;
        const room = joins ? size - this.running.get(String(open!.seq))!.limit : size;
        const limit = this.shareOf(lane, room, pack, waiting);
        if (limit <= 0) continue;
        if (joins) this.extend(open!, lane, limit);
        else launches.push((open = this.start(lane, limit, lane.render)));
        launched = true;
        if (!pack || this.running.get(String(open!.seq))!.limit >= size) open = undefined;
      }
    }
    return launches;
  }

  /** A new batch, with a first share of `lane` unless it only fills. */
  private start(lane: Lane | null, limit: number, render: boolean): Launch {
    this.state.batchSeq += 1;
    const launch: Launch = { seq: this.state.batchSeq, shares: [], render, fill: 0 };
    this.running.set(String(launch.seq), { hosts: [], limit: 0, render, fill: 0, waits: false });
    if (lane !== null) this.extend(launch, lane, limit);
    return launch;
  }

  private extend(launch: Launch, lane: Lane, limit: number): void {
    const batch = this.running.get(String(launch.seq))!;
    launch.shares.push({ host: lane.host, limit });
    batch.hosts.push(lane.host);
    batch.limit += limit;
    this.launchedSinceView.set(lane.key, (this.launchedSinceView.get(lane.key) ?? 0) + limit);
  }

  /**
   * A batch ended without failing. `seq` names it as its launch did. `heedClaimable`: a
   * filling batch's `claimableAt` is waited for (older runs retried a second on regardless).
   */
  batchEnded(seq: number, report: BatchReport, now: number, heedClaimable = false): void {
    const key = String(seq);
    if (report.kind === 'store-unavailable') {
      this.running.delete(key);
      this.parked.set(key, report.hosts);
      this.storeWait ??= { since: now, message: report.message };
      return;
    }
    const batch = this.running.get(key);
    this.running.delete(key);
    if (report.claimed > 0) this.fruitless = null;
    else if (batch !== undefined && batch.fill > 0) this.fruitless = { since: now, ...(heedClaimable ? { claimableAt: report.claimableAt } : {}) };
    else this.frontierMoved();
    this.state.batchesCompleted += 1;
    // A batch that claimed nothing does not end a run of failures (see `succeededEver`).
    if (report.claimed > 0 || !this.plan.waitsForWork) this.failures.succeeded();
    this.recordHolds(report.deferred, now);
    this.acceptView(report.view);
  }

  /** Forgets the holds that have passed, then holds each deferred host until its time, for the reason given. */
  private recordHolds(deferred: readonly HostDeferral[], now: number): void {
    const { hostReadyAt, holdReasons } = this.state;
    for (const [host, at] of Object.entries(hostReadyAt)) {
      if (at > now) continue;
      delete hostReadyAt[host];
      delete holdReasons[host];
    }
    for (const { host, until, reason } of deferred) {
      hostReadyAt[host] = until;
      // A batch that met the hold without causing it cannot say why; the one that caused it can, before or after.
      if (reason !== undefined) holdReasons[host] = reason;
    }
  }

  /** A batch failed for good; it still holds its claims until `batchAbandoned`. */
  batchFailed(seq: number, failure: BatchFailure): void {
    const batch = this.running.get(String(seq));
    // The hosts a batch filled with are the store's choice: the batch counts as one more host.
    if (batch) this.failures.failed(batch.fill > 0 ? [...batch.hosts, `(hosts batch ${seq} took from the store)`] : batch.hosts, failure);
  }

  /** A failed batch's URLs are recorded as failures (`view` after that), or it was cancelled (no view). */
  batchAbandoned(seq: number, view?: CrawlView): void {
    this.running.delete(String(seq));
    this.frontierMoved();
    if (view) this.acceptView(view);
  }

  /** Sequence numbers of the batches an outage stopped. */
  parkedBatches(): number[] {
    return [...this.parked.keys()].map(Number);
  }

  /** The store answered again and the claims of `released` were given back. */
  storeRecovered(released: readonly number[], view: CrawlView): void {
    for (const seq of released) this.parked.delete(String(seq));
    if (this.parked.size === 0) this.storeWait = null;
    this.frontierMoved();
    this.acceptView(view);
  }

  /** Hosts with work: with backlog in the view, or with batches running. */
  private hostsWithWork(): number {
    const hosts = new Set(this.state.view.hosts.map(({ host }) => host));
    for (const batch of this.running.values()) for (const host of batch.hosts) hosts.add(host);
    return hosts.size;
  }

  fatal(): BatchFailure | null {
    return this.failures.fatal(this.hostsWithWork(), this.succeededEver());
  }

  /**
   * Whether the crawl's batches have shown they can succeed. A batch that claimed nothing (a
   * waiting batch that found no work) shows nothing: on crawls that launch waiting batches,
   * only URLs that ended other than as errors count. Plans recorded before keep counting
   * every batch that ended, as their histories did.
   */
  private succeededEver(): boolean {
    if (!this.plan.waitsForWork) return this.state.batchesCompleted > 0;
    const { processed, errors } = this.state.view.totals;
    return processed > errors;
  }

  /** How the run ends, once nothing runs; null while there is (or may be) more to do. */
  outcome(): Outcome | null {
    if (this.running.size > 0 || this.parked.size > 0) return null;
    if (this.state.stopping) return 'stopped';
    if (this.fatal() !== null) return 'failed';
    if (this.handingOver) return 'continue-as-new';
    if (this.state.view.queued === 0) return 'completed';
    if (this.budgetLeft() <= 0) return 'max-pages-reached';
    return null;
  }

  /**
   * The earliest held host with backlog, or the store's retry after a fruitless fill, when the
   * crawl has nothing else to wake it, and why the crawl waits for it: the words of the
   * workflow's timer in the Web UI. `skipDueRetry` leaves out a retry that is due already
   * (`storeRetryDue`): it launched nothing, and waking for it again at once would repeat that
   * until the holds end.
   */
  nextWake(now: number, skipDueRetry = false): Wake | undefined {
    if (!this.launching()) return undefined;
    let next: Wake | undefined;
    if (this.fruitless !== null && this.running.size === 0 && !(skipDueRetry && this.storeRetryDue(now))) {
      const at = retryAt(this.fruitless);
      next = { at, why: at > this.fruitless.since + FRUITLESS_RETRY_MS ? 'every key with backlog is held' : 'the store (no key was free) asked us to wait' };
    }
    for (const { host } of this.state.view.hosts) {
      const at = this.heldUntil(host, now);
      if (at === null || (next !== undefined && at >= next.at)) continue;
      const reason = this.state.holdReasons[host];
      next = { at, why: reason === undefined ? `${host} asked us to wait` : `${host} is held: ${reason}` };
    }
    return next;
  }

  status(): CrawlStatus {
    if (this.state.stopping) return 'stopping';
    if (this.fatal() !== null) return 'failing';
    if (this.storeWait !== null) return 'waiting-for-store';
    return this.state.paused ? 'paused' : 'running';
  }

  /** When the host's hold ends, while it is still ahead of `now`; null for a host not held. */
  private heldUntil(host: string, now: number): number | null {
    const at = this.state.hostReadyAt[host];
    return at !== undefined && at > now ? at : null;
  }

  hostState(host: string, now: number): HostState {
    const readyAt = this.heldUntil(host, now);
    return {
      host,
      queued: this.state.view.hosts.find((entry) => entry.host === host)?.queued ?? 0,
      batchesInFlight: this.hostBatches(host),
      readyAt,
      holdReason: readyAt === null ? null : (this.state.holdReasons[host] ?? null),
    };
  }

  /** The hosts of the view held at `now`, the first `max` of them by backlog, as `hostState` gives them. */
  heldHosts(now: number, max: number): HostState[] {
    const held = this.state.view.hosts.filter(({ host }) => this.heldUntil(host, now) !== null);
    return held.slice(0, max).map(({ host }) => this.hostState(host, now));
  }

  /** What progress shows of the schedule, with the totals and queue of `view` (the schedule's own by default). */
  counts(view: CrawlView = this.state.view) {
    return {
      status: this.status(),
      ...view.totals,
      queued: view.queued,
      batchesInFlight: this.batchesInFlight,
      batchesCompleted: this.state.batchesCompleted,
      hostsInFlight: [...new Set([...this.running.values()].flatMap((batch) => batch.hosts))],
      storeWait: this.storeWait,
      failures: this.failures.summary(),
    };
  }

  /** Batches launched and not yet reported. */
  get batchesInFlight(): number {
    return this.running.size;
  }

  get batchSeq(): number {
    return this.state.batchSeq;
  }

  /** The state for the next run; only whole when nothing runs (see `outcome`). */
  carried(): SchedulerState {
    const { limits, hostReadyAt, holdReasons } = this.state;
    return { ...this.state, limits: { ...limits }, hostReadyAt: { ...hostReadyAt }, holdReasons: { ...holdReasons }, failures: this.failures.state() };
  }
}
