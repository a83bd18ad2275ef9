/**
 * A crawl run as shards (`shards` > 1): crawlSession opens it as any crawl (config recorded,
 * seeds queued, sitemaps read), then starts one crawlShard child per shard, waits for all of
 * them and finishes the crawl in the store. No coordinator is needed while they run: a key's
 * shard never changes, budgets and concurrency are split up front, and the shards agree on
 * the end through the store (crawl-shard.ts).
 *
 * Its messages: progress, frontier and host are answered from a view of the whole crawl read
 * every PROGRESS_REFRESH_MS until Temporal suggests continue-as-new (batch counts are the
 * shards': query `<crawl ID>/shard-<n>`, which `crawlflow status` does for every shard);
 * pause and resume are passed on to every shard; cancelling the crawl cancels its shards
 * (children in its scope). stop, setLimits and addSeeds are refused with SHARDED_UNSUPPORTED.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  setCurrentDetails,
  startChild,
  workflowInfo,
  type SignalDefinition,
} from '@temporalio/workflow';
import type { CrawlLimits } from '../shared/crawl-config';
import { openingProgress, type BatchFailure, type CrawlEndStatus, type CrawlProgress, type CrawlSummary, type CrawlTotals, type CrawlView, type FrontierStats, type HostState, type ShardSummary } from '../shared/crawl-types';
import { pauseSignal, resumeSignal } from '../shared/messages';
import { shardPlan } from '../scheduling/crawl-plan';
import { shardWorkflowId } from '../scheduling/shards';
import { mergedFailures } from '../shared/shard-progress';
import { lifecycle } from './crawl-activities';
import { crawlShard } from './crawl-shard';
import { describeProgress, indexedAttributes } from './crawl-state';
import type { CrawlMessages, EarlyMessages } from './crawl-messages';
import type { Opened } from './open-crawl';
import { readSitemaps } from './read-sitemaps';
import { PROGRESS_REFRESH_MS } from '../scheduling/progress-refresh';

/** Backlog entries the crawl's own view keeps (the frontier query shows 50). */
const VIEW_HOSTS = 50;
/** The failure type of a message a sharded crawl does not take. */
export const SHARDED_UNSUPPORTED = 'NotSupportedOnShardedCrawl';

/** Of the shards' ends, the crawl's: the first that left work undone, else completed. */
const END_ORDER: ReadonlyArray<CrawlSummary['status']> = ['cancelled', 'deadline-exceeded', 'stopped', 'max-pages-reached'];

export class ShardedCrawl implements CrawlMessages {
  private view: CrawlView;
  private paused = false;
  private ended: CrawlEndStatus | undefined;
  /** Signals passed on to the shards, still being delivered. */
  private readonly relayed = new Set<Promise<void>>();

  constructor(
    private readonly crawlId: string,
    private readonly opened: Opened,
  ) {
    this.view = opened.scheduler.view;
  }

  private get shards(): number {
    return this.opened.plan.shards ?? 1;
  }

  async run(messages: EarlyMessages): Promise<CrawlSummary> {
    messages.attach(this);
    this.index('running');
    log.info('crawl started', { crawlId: this.crawlId, shards: this.shards });
    this.view = (await readSitemaps(this.crawlId, this.opened.plan)) ?? this.view;
    const ends = await this.runShards();
    const totals = await CancellationScope.nonCancellable(() => this.finishCrawl(ends));
    const failed = ends.find((end) => end.status === 'rejected');
    if (failed) throw shardFailure(failed.reason, totals);
    return this.summary(ends.map((end) => (end as PromiseFulfilledResult<ShardSummary>).value), totals);
  }

  /** Starts every shard and waits for all of them, reading the crawl's view meanwhile; a cancellation is rethrown once they have ended. */
  private async runShards(): Promise<Array<PromiseSettledResult<ShardSummary>>> {
    const { plan, startedAt } = this.opened;
    const children = await Promise.all(
      Array.from({ length: this.shards }, (_, shard) =>
        startChild(crawlShard, {
          workflowId: shardWorkflowId(this.crawlId, shard),
          args: [{ crawlId: this.crawlId, shard, plan: shardPlan(plan, shard), startedAt }],
          // As the crawl's own (CRAWL_WORKFLOW_TASK_TIMEOUT): a task lost with its worker is retried within seconds.
          workflowTaskTimeout: '4s',
          ...(plan.deadlineMs === null ? {} : { workflowExecutionTimeout: plan.deadlineMs + 3_600_000 }),
        }),
      ),
    );
    let settled: Array<PromiseSettledResult<ShardSummary>> | undefined;
    const ends = Promise.allSettled(children.map((child) => child.result())).then((results) => (settled = results));
    try {
      // The crawl does not continue-as-new (its shards would close with its run): once its
      // history is long, progress keeps the last view it read, and the crawl only waits.
      while (settled === undefined && !workflowInfo().continueAsNewSuggested) {
        if (await condition(() => settled !== undefined, PROGRESS_REFRESH_MS)) break;
        this.view = await lifecycle.crawlView({ crawlId: this.crawlId, hosts: VIEW_HOSTS });
        setCurrentDetails(describeProgress(this.progress()));
        this.index();
      }
      // A condition, unlike the promise, is where the crawl's cancellation reaches it.
      await condition(() => settled !== undefined);
      return settled!;
    } catch (err) {
      if (!isCancellation(err)) throw err;
      this.ended = 'cancelled';
      // The shards were asked to cancel with the crawl; they give their claims back first.
      await CancellationScope.nonCancellable(async () => {
        await ends;
        await this.finishCrawl([]);
      });
      throw err;
    }
  }

  /** Records the crawl's end in the store (the first failed shard's cause, if one failed) and reads its totals. */
  private async finishCrawl(ends: Array<PromiseSettledResult<ShardSummary>>): Promise<CrawlTotals> {
    await Promise.all(this.relayed);
    const failed = ends.find((end) => end.status === 'rejected');
    this.ended ??= failed ? 'failed' : crawlEnd(ends.map((end) => (end as PromiseFulfilledResult<ShardSummary>).value));
    const end = { status: this.ended, failure: failed ? crawlFailureOf(failed.reason) : null };
    const totals = await lifecycle.finishCrawl({ crawlId: this.crawlId, recrawlOf: this.opened.plan.recrawlOf ?? undefined, end });
    this.view = { ...this.view, queued: totals.queued, totals };
    await condition(allHandlersFinished);
    setCurrentDetails(describeProgress(this.progress()));
    this.index(this.ended);
    log.info('crawl finished', { crawlId: this.crawlId, status: this.ended, ...totals });
    return totals;
  }

  private summary(shards: ShardSummary[], totals: CrawlTotals): CrawlSummary {
    const failures = mergedFailures(shards.flatMap((shard) => shard.failures ?? []));
    return {
      crawlId: this.crawlId,
      status: crawlEnd(shards),
      totals,
      batches: shards.reduce((sum, shard) => sum + shard.batches, 0),
      runs: Math.max(...shards.map((shard) => shard.runs)),
      startedAt: this.opened.startedAt,
      finishedAt: Date.now(),
      ...(failures.length > 0 ? { failures } : {}),
    };
  }

  private index(status: string = this.paused ? 'paused' : 'running'): void {
    indexedAttributes(this.crawlId, this.opened.plan.seedHost, status, this.view.totals.processed);
  }

  /** The crawl's view, with none of the batches, holds or failures: its shards have those. */
  progress(): CrawlProgress {
    return {
      ...openingProgress(this.crawlId, this.opened.startedAt),
      status: this.ended ?? (this.paused ? 'paused' : 'running'),
      ...this.view.totals,
      queued: this.view.queued,
      shards: this.shards,
    };
  }

  frontier(): FrontierStats {
    return { queued: this.view.queued, snapshotVersion: this.view.version, hosts: this.view.hosts.map(({ host }) => this.hostState(host)) };
  }

  hostState(host: string): HostState {
    return { host, queued: this.view.hosts.find((entry) => entry.host === host)?.queued ?? 0, batchesInFlight: 0, readyAt: null, holdReason: null };
  }

  pause(): void {
    this.paused = true;
    this.relay(pauseSignal);
  }

  resume(): void {
    this.paused = false;
    this.relay(resumeSignal);
  }

  stop(): void {
    throw unsupported('stop');
  }

  setLimits(): CrawlLimits {
    throw unsupported('setLimits');
  }

  async addSeeds(): Promise<number> {
    throw unsupported('addSeeds');
  }

  /** None: addSeeds itself refuses every call, with why. */
  seedsRefusal(): null {
    return null;
  }

  /** Passes a signal on to every shard; a shard that has ended no longer needs it. */
  private relay(signal: SignalDefinition<[]>): void {
    this.index();
    for (let shard = 0; shard < this.shards; shard += 1) {
      const sent: Promise<void> = getExternalWorkflowHandle(shardWorkflowId(this.crawlId, shard))
        .signal(signal)
        .catch((err: unknown) => log.info('a shard did not take a signal', { crawlId: this.crawlId, shard, signal: signal.name, error: String(err) }))
        .finally(() => this.relayed.delete(sent));
      this.relayed.add(sent);
    }
  }
}

/** What the crawl fails with when a shard failed: the shard's cause (its type, or `shard-failed`). */
function crawlFailureOf(reason: unknown): BatchFailure {
  const cause = reason instanceof ChildWorkflowFailure ? reason.cause : reason;
  const type = cause instanceof ApplicationFailure ? cause.type : undefined;
  return { code: type ?? 'shard-failed', message: `a shard of the crawl failed: ${cause instanceof Error ? cause.message : String(cause)}` };
}

/** A shard that failed fails the crawl with its cause, the crawl's totals as details. */
function shardFailure(reason: unknown, totals: CrawlTotals): ApplicationFailure {
  const { code, message } = crawlFailureOf(reason);
  return ApplicationFailure.create({ type: code, message, nonRetryable: true, details: [totals] });
}

function unsupported(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `${message} is not supported on a sharded crawl (shards > 1): each shard has its own budget and limits; cancel the crawl instead`,
    SHARDED_UNSUPPORTED,
  );
}

/** The crawl's end, from its shards': the first of END_ORDER any of them reached, else completed. */
function crawlEnd(shards: ShardSummary[]): CrawlSummary['status'] {
  return END_ORDER.find((status) => shards.some((shard) => shard.status === status)) ?? 'completed';
}
