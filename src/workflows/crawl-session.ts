/**
 * crawlSession: the durable owner of one crawl, a thin driver over the pure CrawlScheduler
 * (src/scheduling). It opens the crawl (the `openCrawl` activity resolves and records the
 * config once; history holds only the plan), launches the batches the scheduler asks for,
 * feeds their reports back, turns host holds into durable timers, waits out store outages,
 * answers queries, signals and updates, and continues-as-new before its history grows large.
 *
 * Executions started by 0.2.0 carry no scheduler-v2 marker and run the 0.2.0 workflow.
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
import type { CrawlProgress, CrawlStatus, CrawlSummary, CrawlTotals, FrontierStats, HostState } from '../shared/crawl-types';
import { CrawlScheduler, type Launch, type Outcome } from '../scheduling/crawl-scheduler';
import type { BatchOrder, CrawlPlan } from '../scheduling/crawl-plan';
import { batchFailure, discovery, lifecycle, runBatch, storeWatch } from './crawl-activities';
import { crawlSessionV02, type CrawlSessionInput as V02Input } from './crawl-session-v0.2';
import { describeProgress, indexedAttributes } from './crawl-state';
import { EarlyMessages, type CrawlMessages } from './crawl-messages';
import { open, type CarriedCrawl, type CrawlSessionInput, type Opened } from './open-crawl';

/** Patch: executions of this release schedule through CrawlScheduler; 0.2.0 histories have no marker. */
export const SCHEDULER_V2_PATCH = 'crawl-scheduler-v2';
/** Search attributes are upserted on status changes and every this many batches. */
const INDEX_EVERY_BATCHES = 25;

export async function crawlSession(input: CrawlSessionInput): Promise<CrawlSummary> {
  if (!patched(SCHEDULER_V2_PATCH)) return crawlSessionV02(input as V02Input);
  // Queries, signals and updates are answered from the first task on, also while the crawl opens.
  const messages = new EarlyMessages();
  const run = new CrawlRun(await open(input));
  return run.run(messages);
}

class CrawlRun implements CrawlMessages {
  private readonly crawlId = workflowInfo().workflowId;
  private readonly runId = workflowInfo().runId;
  private readonly scheduler: CrawlScheduler;
  private readonly plan: CrawlPlan;
  /** Activities and their follow-ups still running; each settles into `changed`. */
  private readonly tasks = new Set<Promise<void>>();
  private changed = false;
  /** An activity that failed where the crawl cannot go on without it. */
  private broken: unknown;
  private recovering = false;
  private handingOver = false;
  /** How the crawl ended, once it has: what progress then shows. */
  private ended: CrawlStatus | undefined;

  constructor(private readonly opened: Opened) {
    this.plan = opened.plan;
    this.scheduler = new CrawlScheduler(opened.plan, opened.scheduler);
  }

  private get deadlineAt(): number | null {
    return this.plan.deadlineMs === null ? null : this.opened.startedAt + this.plan.deadlineMs;
  }

  async run(messages: EarlyMessages): Promise<CrawlSummary> {
    messages.attach(this);
    this.index();
    log.info(this.opened.fresh ? 'crawl started' : 'crawl continued', { crawlId: this.crawlId, run: this.opened.run });
    if (this.opened.fresh && this.plan.readsSitemaps) await this.readSitemaps();
    const root = CancellationScope.current();
    let outcome: Outcome;
    try {
      const { deadlineAt } = this;
      outcome = deadlineAt === null ? await this.schedule() : await CancellationScope.withTimeout(Math.max(1, deadlineAt - Date.now()), () => this.schedule());
    } catch (err) {
      if (!isCancellation(err)) throw err;
      if (root.consideredCancelled) {
        await this.finish('cancelled');
        throw err;
      }
      return this.finish('deadline-exceeded');
    }
    if (outcome === 'continue-as-new') {
      await condition(allHandlersFinished);
      return continueAsNew<typeof crawlSession>({ continued: this.carried() });
    }
    if (outcome === 'failed') return this.fail();
    return this.finish(outcome);
  }

  private carried(): CarriedCrawl {
    return { plan: this.plan, scheduler: this.scheduler.carried(), startedAt: this.opened.startedAt, run: this.opened.run + 1 };
  }

  /** Launches what the scheduler asks for and waits for the next change, until the run has an outcome. */
  private async schedule(): Promise<Outcome> {
    for (;;) {
      if (this.broken !== undefined) throw this.broken;
      if (workflowInfo().continueAsNewSuggested && !this.handingOver) this.handOver();
      for (const launch of this.scheduler.launches(Date.now())) this.launch(launch);
      if (this.scheduler.parkedBatches().length > 0 && !this.recovering) this.awaitStore();
      setCurrentDetails(describeProgress(this.progress()));
      const outcome = this.scheduler.outcome();
      if (outcome !== null && this.tasks.size === 0) return outcome;
      this.changed = false;
      const wake = this.scheduler.nextWake(Date.now());
      if (wake === undefined) await condition(() => this.changed);
      else await condition(() => this.changed, Math.max(1, wake.at - Date.now()), { summary: `${wake.host} asked us to wait` });
    }
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
    return `${this.crawlId}/${this.runId}/${seq}`;
  }

  private launch({ seq, shares, render }: Launch): void {
    const order: BatchOrder = {
      crawlId: this.crawlId,
      batchId: this.batchId(seq),
      run: this.runId,
      hosts: shares,
      render,
      configVersion: this.plan.configVersion,
      delayMs: this.scheduler.limits.delayMs,
    };
    const limit = shares.reduce((sum, share) => sum + share.limit, 0);
    const more = shares.length > 1 ? ` +${shares.length - 1} hosts` : '';
    const summary = `${shares[0].host}${more} · ${render ? 'render ' : ''}batch ${seq} · up to ${limit} URLs`;
    this.track(
      runBatch(this.plan, order, summary).then(
        (report) => {
          this.scheduler.batchEnded(seq, report, Date.now());
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
    const { view } = await CancellationScope.nonCancellable(() => lifecycle.abandonBatch({ crawlId: this.crawlId, batchId: this.batchId(seq), failure }));
    this.scheduler.batchAbandoned(seq, view);
  }

  private awaitStore(): void {
    const parked = this.scheduler.parkedBatches();
    this.recovering = true;
    log.warn('the frontier store cannot be reached: the crawl waits for it', { crawlId: this.crawlId, batches: parked.length });
    this.index();
    this.track(
      storeWatch
        .awaitStore({ crawlId: this.crawlId, release: parked.map((seq) => this.batchId(seq)) })
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
    this.track(lifecycle.handOver({ crawlId: this.crawlId, run: this.runId }));
  }

  private async readSitemaps(): Promise<void> {
    try {
      const { frontier, failures, ...counts } = await discovery.discoverSitemaps({ crawlId: this.crawlId, configVersion: this.plan.configVersion });
      log.info('sitemaps read', { crawlId: this.crawlId, ...counts, failures: failures.map(({ url, reason }) => `${reason} ${url}`) });
      this.scheduler.acceptView(frontier);
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn('sitemaps could not be read; the crawl goes on from its seeds', { crawlId: this.crawlId, error: String(err) });
    }
  }

  progress(): CrawlProgress {
    const counts = this.scheduler.counts();
    return { crawlId: this.crawlId, ...counts, status: this.ended ?? counts.status, startedAt: this.opened.startedAt, run: this.opened.run };
  }

  private index(status: string = this.scheduler.status()): void {
    indexedAttributes(this.crawlId, this.plan.seedHost, status, this.scheduler.view.totals.processed);
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
    this.statusChanged();
  }

  resume(): void {
    this.scheduler.resume();
    this.statusChanged();
  }

  stop(): void {
    this.scheduler.stop();
    this.statusChanged();
  }

  setLimits(change: Partial<CrawlLimits>): CrawlLimits {
    this.changed = true;
    return this.scheduler.setLimits(parseLimitsChange(change));
  }

  /** Seeds join the recorded config (a new version, which batches from now on read) and the frontier. */
  async addSeeds(urls: string[]): Promise<number> {
    const { added, configVersion, view } = await lifecycle.appendSeeds({ crawlId: this.crawlId, urls });
    this.plan.configVersion = Math.max(this.plan.configVersion, configVersion);
    this.scheduler.acceptView(view);
    this.changed = true;
    return added;
  }

  /** A change of status: the schedule looks again, and the crawl's search attributes follow. */
  private statusChanged(): void {
    this.changed = true;
    this.index();
  }

  /** Waits for running work (cancelled work included), gives claims back and reads the store's totals. */
  private async finished(status: CrawlStatus): Promise<CrawlTotals> {
    this.ended = status;
    return CancellationScope.nonCancellable(async () => {
      await condition(() => this.tasks.size === 0);
      const totals = await lifecycle.finishCrawl({ crawlId: this.crawlId, recrawlOf: this.plan.recrawlOf ?? undefined });
      await condition(allHandlersFinished);
      setCurrentDetails(describeProgress({ ...this.progress(), ...totals }));
      this.index(status);
      log.info('crawl finished', { crawlId: this.crawlId, status, ...totals });
      return totals;
    });
  }

  private async finish(status: CrawlSummary['status']): Promise<CrawlSummary> {
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
    const totals = await this.finished('failed');
    throw ApplicationFailure.create({
      type: cause.code,
      message: `every batch failed the same way, so the crawl stopped: ${cause.message}`,
      nonRetryable: true,
      details: [totals],
    });
  }
}
