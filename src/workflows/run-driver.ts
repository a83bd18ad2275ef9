/**
 * The durable driver of one crawl's schedule, a thin layer over the pure CrawlScheduler
 * (src/scheduling): it launches the batches the scheduler asks for, feeds their reports back,
 * turns host holds into durable timers, waits out store outages, answers queries, signals and
 * updates, and continues-as-new before its history grows large. What it drives is the whole
 * crawl (crawlSession) or one shard of it (crawlShard); they differ only in how a run ends
 * and what it hands to the next.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  setCurrentDetails,
  workflowInfo,
} from '@temporalio/workflow';
import type { CrawlLimits } from '../shared/crawl-config';
import { parseLimitsChange } from '../shared/crawl-config';
import type { BatchTotals, CrawlEndStatus, CrawlProgress, CrawlStatus, CrawlSummary, EndReport, FrontierStats, HostState } from '../shared/crawl-types';
import { CrawlScheduler, type Launch, type Outcome, type Wake } from '../scheduling/crawl-scheduler';
import { batchIdOf, type BatchOrder, type CrawlPlan } from '../scheduling/crawl-plan';
import { ProgressRefresh } from '../scheduling/progress-refresh';
import { batchFailure, lifecycle, progressRead, runBatch, storeWatch } from './crawl-activities';
import { WakeTimer } from './wake-timer';
import { describeProgress } from './crawl-state';
import type { EarlyMessages, CrawlMessages } from './crawl-messages';
import type { CarriedCrawl, Opened } from './open-crawl';

/** The patch that has a cancelled run tell its batches to abort through the store (`abortBatches`). */
const ABORT_BATCHES_THROUGH_STORE = 'abort-batches-through-store';

/**
 * The patch that has added seeds reopen launches a filling batch that found nothing had stopped
 * (`CrawlScheduler.seedsAdded`): without it, the seeds wait for a running batch to end.
 */
const ADDED_SEEDS_REOPEN_STORE = 'added-seeds-reopen-store';

/**
 * The patch that has pause and stop reach the batches running then (`stopRunningBatches`):
 * without it, each ran on to the end of its batch, up to `batchSize` more pages.
 */
const PAUSE_STOPS_BATCHES = 'pause-stop-running-batches';

/**
 * The patch that has a crawl whose every key with backlog is held wait for the first hold to
 * end: without it, the store's due retry (`storeRetryDue`) woke the run again and again, a
 * timer and a workflow task each time, for as long as the holds lasted.
 */
const HOLDS_OUTLAST_STORE_RETRY = 'holds-outlast-store-retry';

/**
 * The patch that splits a host's backlog over the running batches that wait for work too
 * (`CrawlScheduler.launches`): without it, a batch ordered while they still waited to start took
 * the host's links whole.
 */
const SHARES_WITH_WAITING_BATCHES = 'shares-with-waiting-batches';

/**
 * The patch that has a filling batch that found nothing wait, before the store is asked again,
 * for when the batch found a key would be claimable (`BatchReport.claimableAt`): without it, a
 * crawl whose every key was held past what a batch waits out launched filling batches every
 * second, each of which found nothing, for as long as the holds lasted.
 */
const RETRY_WHEN_CLAIMABLE = 'retry-store-when-claimable';

/**
 * The patch that keeps the schedule's wake timer while its wake stays the same (`WakeTimer`):
 * without it, every wait started a timer of its own, and each batch's report cancelled it.
 */
const KEEP_WAKE_TIMER = 'keep-wake-timer';

/**
 * The patch that has a run read its store's counts while its batches run without reporting
 * (`ProgressRefresh`): without it, progress stood still from one batch report to the next.
 */
const LIVE_PROGRESS = 'live-progress';

/** Held hosts the Web UI's current details name, the biggest backlogs first. */
const HELD_HOSTS_SHOWN = 5;

/** Search attributes are upserted on status changes and every this many batches. */
const INDEX_EVERY_BATCHES = 25;

/** A run's summary, with the totals its end reads (the crawl's, or one shard's). */
export type RunSummary<T extends BatchTotals> = Omit<CrawlSummary, 'totals'> & { totals: T };

/** What the Web UI shows of a batch: its first host and how many more (or where its work will come from), its lane and its size. */
function batchSummary(seq: number, { hosts, render, fill = 0, waitsForWork }: BatchOrder): string {
  const limit = hosts.reduce((sum, share) => sum + share.limit, fill);
  const first = hosts.length > 0 ? hosts[0].host : waitsForWork ? 'links running batches find' : 'ready hosts';
  const more = hosts.length > 1 ? ` +${hosts.length - 1} hosts` : '';
  const filled = hosts.length > 0 && fill > 0 ? ' +ready hosts' : '';
  return `${first}${more}${filled} · ${render ? 'render ' : ''}batch ${seq} · up to ${limit} ${limit === 1 ? 'URL' : 'URLs'}`;
}

export abstract class RunDriver<T extends BatchTotals> implements CrawlMessages {
  private readonly runId = workflowInfo().runId;
  protected readonly scheduler: CrawlScheduler;
  protected readonly plan: CrawlPlan;
  /** Activities and their follow-ups still running; each settles into `changed`. */
  private readonly tasks = new Set<Promise<void>>();
  private changed = false;
  /** An activity that failed where the crawl cannot go on without it. */
  private broken: unknown;
  private recovering = false;
  private handingOver = false;
  private readonly wakeTimer = this.changeTimer();
  /** The progress read's own timer: on the schedule's, it would cancel a hold's timer and start it again around every read. */
  private readonly progressTimer = this.changeTimer();
  /** How the crawl ended, once it has: what progress then shows. */
  private ended: CrawlStatus | undefined;
  private readonly progressRefresh = new ProgressRefresh();

  /** `shard`: the shard this run drives, undefined for a crawl of one shard. */
  constructor(
    protected readonly crawlId: string,
    protected readonly opened: Opened,
    protected readonly shard?: number,
  ) {
    this.plan = opened.plan;
    this.scheduler = new CrawlScheduler(opened.plan, opened.scheduler);
  }

  private get deadlineAt(): number | null {
    return this.plan.deadlineMs === null ? null : this.opened.startedAt + this.plan.deadlineMs;
  }

  async run(messages: EarlyMessages): Promise<RunSummary<T>> {
    messages.attach(this);
    this.index();
    log.info(this.opened.fresh ? 'crawl started' : 'crawl continued', { ...this.ref, run: this.opened.run });
    if (this.opened.fresh) await this.opening();
    const root = CancellationScope.current();
    let outcome: Outcome;
    try {
      const { deadlineAt } = this;
      outcome = deadlineAt === null ? await this.scheduleToEnd() : await CancellationScope.withTimeout(Math.max(1, deadlineAt - Date.now()), () => this.scheduleToEnd());
    } catch (err) {
      if (!isCancellation(err)) throw err;
      await this.abortBatches();
      if (root.consideredCancelled) {
        await this.finish('cancelled');
        throw err;
      }
      return this.finish('deadline-exceeded');
    }
    if (outcome === 'continue-as-new') {
      await condition(allHandlersFinished);
      return continueAsNew<(input: object) => Promise<unknown>>(this.nextRunInput(this.carried()));
    }
    if (outcome === 'failed') return this.fail();
    return this.finish(outcome);
  }

  /**
   * Running batches hear of the cancellation of their scope only with a heartbeat response,
   * up to the worker's heartbeat throttle (5 s) away: they are told to abort through the
   * store too, whose stop order their tickers read every second. Told whether or not batches
   * are still running: which have settled by now depends on how the SDK orders an
   * activation's jobs, which replay need not repeat.
   */
  private async abortBatches(): Promise<void> {
    if (!patched(ABORT_BATCHES_THROUGH_STORE)) return;
    await CancellationScope.nonCancellable(() => lifecycle.abortRun({ ...this.ref, run: this.runId }));
  }

  private carried(): CarriedCrawl {
    return { plan: this.plan, scheduler: this.scheduler.carried(), startedAt: this.opened.startedAt, run: this.opened.run + 1 };
  }

  /** What a fresh run does before it schedules (sitemaps). */
  protected async opening(): Promise<void> {}

  /** The input of the next run, which continues this one. */
  protected abstract nextRunInput(carried: CarriedCrawl): object;

  /** The frontier has no work left for this run: whether its part of the crawl is complete. */
  protected abstract outOfWork(): Promise<boolean>;

  /** What the store is told once the run's work has ended (`end`: how); returns the totals it reports. */
  protected abstract close(end: EndReport): Promise<T>;

  /** The crawl's search attributes; `status` defaults to the scheduler's. */
  protected abstract index(status?: string): void;

  /** The crawl ID, and on a sharded crawl the shard, as lifecycle activities take them. */
  protected get ref(): { crawlId: string; shard?: number } {
    return this.shard === undefined ? { crawlId: this.crawlId } : { crawlId: this.crawlId, shard: this.shard };
  }

  /** Schedules until an outcome; a completed schedule counts only once `outOfWork` agrees. */
  private async scheduleToEnd(): Promise<Outcome> {
    for (;;) {
      const outcome = await this.schedule();
      if (outcome !== 'completed' || (await this.outOfWork())) return outcome;
    }
  }

  /** Waits up to `ms` for a change to the schedule (a message, a finished activity). */
  protected async waitForChange(ms: number): Promise<void> {
    this.changed = false;
    await condition(() => this.changed, ms);
  }

  /** Launches what the scheduler asks for and waits for the next change, until the run has an outcome. */
  private async schedule(): Promise<Outcome> {
    for (;;) {
      if (this.broken !== undefined) throw this.broken;
      if (workflowInfo().continueAsNewSuggested && !this.handingOver) this.handOver();
      const sharesWithWaiting = this.scheduler.waitingBatches() > 0 && patched(SHARES_WITH_WAITING_BATCHES);
      for (const launch of this.scheduler.launches(Date.now(), sharesWithWaiting)) this.launch(launch);
      if (this.scheduler.parkedBatches().length > 0 && !this.recovering) this.awaitStore();
      setCurrentDetails(describeProgress(this.progress(), this.scheduler.heldHosts(Date.now(), HELD_HOSTS_SHOWN)));
      const outcome = this.scheduler.outcome();
      if (outcome !== null && this.tasks.size === 0) return outcome;
      if (this.progressRefresh.due(Date.now(), this.scheduler.view) && this.scheduler.status() !== 'waiting-for-store') this.readProgress();
      this.changed = false;
      // patched() only where the choice arises, so histories that never met it keep their shape.
      const wake = this.scheduler.nextWake(Date.now(), this.scheduler.storeRetryDue(Date.now()) && patched(HOLDS_OUTLAST_STORE_RETRY));
      this.progressTimer.set(this.progressWake());
      await this.waitForWake(wake);
    }
  }

  /**
   * Waits for the next change, or for `wake` when there is one. patched() only where the
   * choice arises: a wake to wait for, or a timer kept from an earlier wait.
   */
  private async waitForWake(wake: Wake | undefined): Promise<void> {
    if (wake !== undefined && !this.wakeTimer.pending && !patched(KEEP_WAKE_TIMER)) {
      await condition(() => this.changed, Math.max(1, wake.at - Date.now()), { summary: wake.why });
      return;
    }
    if (wake !== undefined || this.wakeTimer.pending) this.wakeTimer.set(wake);
    await condition(() => this.changed);
  }

  /** A timer whose firing is a change to the schedule; one that fails stops the crawl. */
  private changeTimer(): WakeTimer {
    return new WakeTimer(
      () => void (this.changed = true),
      (err) => {
        this.broken ??= err;
        this.changed = true;
      },
    );
  }

  /** When to read the progress while batches run (`ProgressRefresh`). patched() only where the choice arises: batches are running. */
  private progressWake(): Wake | undefined {
    const running = this.scheduler.batchesInFlight > 0 && patched(LIVE_PROGRESS);
    return this.progressRefresh.wake(Date.now(), running, this.scheduler.view);
  }

  /**
   * Reads the store's counts for progress, and the search attributes when they moved (an
   * upsert is an event, and a batch held up by one slow page moves nothing); a read that fails
   * is left to the next refresh.
   */
  private readProgress(): void {
    const read = progressRead.crawlView({ ...this.ref, hosts: 0 }).then(
      (view) => {
        if (this.progressRefresh.arrived(view, this.scheduler.view)) this.index();
      },
      () => undefined,
    );
    this.track(read);
  }

  /** Runs `work` alongside the schedule; whatever it throws stops the crawl instead of being lost. */
  private track(work: Promise<void>): void {
    const task: Promise<void> = work
      .catch((err: unknown) => {
        this.broken ??= err;
      })
      .finally(() => {
        this.tasks.delete(task);
        this.changed = true;
      });
    this.tasks.add(task);
  }

  private batchId(seq: number): string {
    return batchIdOf(this.crawlId, this.runId, seq);
  }

  private launch({ seq, shares, render, fill, waits }: Launch): void {
    const { limits } = this.scheduler;
    const order: BatchOrder = {
      crawlId: this.crawlId,
      batchId: this.batchId(seq),
      run: this.runId,
      hosts: shares,
      render,
      configVersion: this.plan.configVersion,
      delayMs: limits.delayMs,
      ...(this.shard === undefined ? {} : { shard: this.shard }),
      ...(this.plan.fillsFromStore ? { fill, perHostConcurrency: limits.perHostConcurrency } : {}),
      ...(waits ? { waitsForWork: true } : {}),
    };
    this.track(
      runBatch(this.plan, order, batchSummary(seq, order)).then(
        (report) => {
          // patched() only where the choice arises: only a filling batch that found nothing says when to ask again.
          const heedClaimable = report.kind === 'done' && report.claimableAt !== undefined && patched(RETRY_WHEN_CLAIMABLE);
          this.scheduler.batchEnded(seq, report, Date.now(), heedClaimable);
          if (this.scheduler.counts().batchesCompleted % INDEX_EVERY_BATCHES === 0) this.index();
        },
        (err: unknown) => this.abandon(seq, err),
      ),
    );
  }

  /** A batch that failed for good: its unfinished URLs are recorded with the cause. A cancelled one gave its claims back. */
  private async abandon(seq: number, err: unknown): Promise<void> {
    if (isCancellation(err)) {
      this.scheduler.batchAbandoned(seq);
      return;
    }
    const failure = batchFailure(err);
    this.scheduler.batchFailed(seq, failure);
    log.warn('batch failed for good; its unfinished URLs are recorded as failed', { batchId: this.batchId(seq), ...failure });
    const { view } = await CancellationScope.nonCancellable(() => lifecycle.abandonBatch({ ...this.ref, batchId: this.batchId(seq), failure }));
    this.scheduler.batchAbandoned(seq, view);
  }

  private awaitStore(): void {
    const parked = this.scheduler.parkedBatches();
    this.recovering = true;
    log.warn('the frontier store cannot be reached: the crawl waits for it', { crawlId: this.crawlId, batches: parked.length });
    this.index();
    this.track(
      storeWatch
        .awaitStore({ ...this.ref, release: parked.map((seq) => this.batchId(seq)) })
        .then((view) => {
          this.scheduler.storeRecovered(parked, view);
          log.info('the frontier store answers again: the crawl goes on', { crawlId: this.crawlId });
          this.index();
        })
        .finally(() => {
          this.recovering = false;
        }),
    );
  }

  /** Continue-as-new is near: running batches stop after their current page, then the run hands over. */
  private handOver(): void {
    this.handingOver = true;
    this.scheduler.handOver();
    this.track(lifecycle.handOver({ ...this.ref, run: this.runId }));
  }

  progress(): CrawlProgress {
    const counts = this.scheduler.counts(this.progressRefresh.shown(this.scheduler.view));
    return { crawlId: this.crawlId, ...counts, status: this.ended ?? counts.status, startedAt: this.opened.startedAt, run: this.opened.run };
  }

  frontier(): FrontierStats {
    const { view } = this.scheduler;
    return { queued: view.queued, snapshotVersion: view.version, hosts: view.hosts.slice(0, 50).map(({ host }) => this.hostState(host)) };
  }

  hostState(host: string): HostState {
    return this.scheduler.hostState(host, Date.now());
  }

  pause(): void {
    this.scheduler.pause();
    this.stopRunningBatches();
    this.statusChanged();
  }

  resume(): void {
    this.scheduler.resume();
    this.statusChanged();
  }

  stop(): void {
    this.scheduler.stop();
    this.stopRunningBatches();
    this.statusChanged();
  }

  /**
   * The batches launched so far stop after their current page and give the rest back, through
   * the store's stop order (their tickers read it every second); those launched after a resume
   * are numbered higher and run on. Ordered whether or not batches are running: which have
   * settled by the time a message is handled depends on how an activation's jobs are ordered,
   * which replay need not repeat. An order that cannot be written leaves the batches to end as
   * they would have, which is no reason to fail the crawl.
   */
  private stopRunningBatches(): void {
    if (!patched(PAUSE_STOPS_BATCHES)) return;
    const order = { ...this.ref, run: this.runId, upTo: this.scheduler.batchSeq };
    this.track(lifecycle.stopBatches(order).catch(() => undefined));
  }

  setLimits(change: Partial<CrawlLimits>): CrawlLimits {
    this.changed = true;
    return this.scheduler.setLimits(parseLimitsChange(change));
  }

  /** Seeds join the recorded config (a new version, which batches from now on read) and the frontier. */
  async addSeeds(urls: string[]): Promise<number> {
    const { added, configVersion, view } = await lifecycle.appendSeeds({ crawlId: this.crawlId, urls });
    this.plan.configVersion = Math.max(this.plan.configVersion, configVersion);
    if (patched(ADDED_SEEDS_REOPEN_STORE)) this.scheduler.seedsAdded(view, added);
    else this.scheduler.acceptView(view);
    this.changed = true;
    return added;
  }

  /** Called by the addSeeds validator only: it reads state and commands nothing, so histories need no patch. */
  seedsRefusal(): string | null {
    const never = 'seeds added now would never be fetched';
    if (this.scheduler.status() === 'stopping') return `crawl ${this.crawlId} is stopping: ${never}`;
    // The run has its outcome and is closing: nothing launches again.
    if (this.ended !== undefined) return `crawl ${this.crawlId} is finishing (${this.ended}): ${never}`;
    if (this.scheduler.budgetSpent()) return `crawl ${this.crawlId} has spent its page budget (maxPages ${this.plan.maxPages}) on pages done or being fetched: ${never}`;
    return null;
  }

  /** A change of status: the schedule looks again, and the crawl's search attributes follow. */
  private statusChanged(): void {
    this.changed = true;
    this.index();
  }

  /** Waits for running work (cancelled work included), then closes the run (`close`) and reads its totals. */
  private async finished(status: CrawlEndStatus, failure: EndReport['failure'] = null): Promise<T> {
    this.ended = status;
    return CancellationScope.nonCancellable(async () => {
      await condition(() => this.tasks.size === 0);
      const totals = await this.close({ status, failure });
      await condition(allHandlersFinished);
      setCurrentDetails(describeProgress({ ...this.progress(), ...totals }));
      this.index(status);
      log.info('crawl finished', { ...this.ref, status, ...(totals as BatchTotals) });
      return totals;
    });
  }

  private async finish(status: CrawlSummary['status']): Promise<RunSummary<T>> {
    const totals = await this.finished(status);
    const failures = this.scheduler.counts().failures;
    return {
      crawlId: this.crawlId,
      status,
      totals,
      batches: this.scheduler.batchSeq,
      runs: this.opened.run,
      startedAt: this.opened.startedAt,
      finishedAt: Date.now(),
      ...(failures.length > 0 ? { failures } : {}),
    };
  }

  /** Every batch fails the same way: the crawl fails with that cause, its frontier left as it is. */
  private async fail(): Promise<never> {
    const cause = this.scheduler.fatal()!;
    const failure = { code: cause.code, message: `every batch failed the same way, so the crawl stopped: ${cause.message}` };
    const totals = await this.finished('failed', failure);
    throw ApplicationFailure.create({ type: failure.code, message: failure.message, nonRetryable: true, details: [totals] });
  }
}
