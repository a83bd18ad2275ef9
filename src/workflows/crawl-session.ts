/**
 * crawlSession: the single durable owner of one crawl. It schedules batch activities over a
 * sliding window, enforcing the crawl's global and per-host concurrency and its page budget;
 * it turns long host waits (Retry-After, Crawl-delay) into durable timers; it pauses,
 * resumes, honours its deadline and cancellation, and continues-as-new before its history
 * grows large. The frontier itself lives in the store: the workflow holds only counters and
 * the latest frontier snapshot (hosts with backlog), so its state stays small.
 */
import {
  ActivityCancellationType,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { CrawlActivities } from '../activities';
import { InvalidCrawlConfigError, parseCrawlConfig, type CrawlConfig, type CrawlInput } from '../shared/crawl-config';
import type { BatchResult, BatchTotals, CrawlProgress, CrawlStatus, CrawlSummary, FrontierSnapshot } from '../shared/crawl-types';
import { pauseSignal, progressQuery, resumeSignal } from '../shared/messages';

/** What one run hands to the next across continue-as-new: counters and cursors only. */
export interface CarriedState {
  run: number;
  startedAt: number;
  deadlineAt: number | null;
  paused: boolean;
  totals: BatchTotals;
  batchSeq: number;
  batchesCompleted: number;
  frontier: FrontierSnapshot;
  hostReadyAt: Record<string, number>;
}

export type CrawlSessionInput = CrawlInput & { continued?: CarriedState };

type RunOutcome = 'completed' | 'max-pages-reached' | 'continue-as-new';

const HEARTBEAT_TIMEOUT = '10s';
/** Room per URL in a batch's start-to-close timeout, on top of its fetch attempts. */
const PER_URL_OVERHEAD_MS = 15_000;

function validated(input: CrawlSessionInput): { config: CrawlConfig; continued?: CarriedState } {
  const { continued, ...rest } = input;
  try {
    return { config: parseCrawlConfig(rest), continued };
  } catch (err) {
    if (err instanceof InvalidCrawlConfigError) throw ApplicationFailure.nonRetryable(err.message, 'InvalidCrawlConfig');
    throw err;
  }
}

function batchActivities(config: CrawlConfig) {
  const perUrlMs = config.timeoutMs * (config.maxRetries + 1) + PER_URL_OVERHEAD_MS;
  return proxyActivities<CrawlActivities>({
    startToCloseTimeout: config.batchSize * perUrlMs + 60_000,
    // Heartbeats come from a ticker, not from page progress, so this only has to cover the
    // worker-to-server network: a dead worker's batch is retried within ~10 s.
    heartbeatTimeout: HEARTBEAT_TIMEOUT,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
  });
}

const lifecycle = proxyActivities<CrawlActivities>({
  startToCloseTimeout: '2m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 10 },
});

function emptyTotals(): BatchTotals {
  return { processed: 0, fetched: 0, errors: 0, skipped: 0, bytes: 0 };
}

function addTotals(into: BatchTotals, from: BatchTotals): void {
  into.processed += from.processed;
  into.fetched += from.fetched;
  into.errors += from.errors;
  into.skipped += from.skipped;
  into.bytes += from.bytes;
}

export async function crawlSession(input: CrawlSessionInput): Promise<CrawlSummary> {
  const { config, continued } = validated(input);
  const crawlId = workflowInfo().workflowId;
  const root = CancellationScope.current();
  const { crawlBatch } = batchActivities(config);
  const startedAt = continued?.startedAt ?? Date.now();
  const state: CarriedState = continued ?? {
    run: 1,
    startedAt,
    deadlineAt: config.deadline === undefined ? null : startedAt + config.deadline,
    paused: false,
    totals: emptyTotals(),
    batchSeq: 0,
    batchesCompleted: 0,
    frontier: { version: -1, queued: 0, hosts: [] },
    hostReadyAt: {},
  };

  const inFlight = new Map<string, { host: string; limit: number }>();
  /** URLs handed to batches since the current snapshot arrived, per host. */
  let launchedSinceSnapshot = new Map<string, number>();
  let changed = false;
  let draining = false;
  let status: CrawlStatus = state.paused ? 'paused' : 'running';

  setHandler(progressQuery, (): CrawlProgress => ({
    crawlId,
    status,
    ...state.totals,
    queued: state.frontier.queued,
    batchesInFlight: inFlight.size,
    batchesCompleted: state.batchesCompleted,
    hostsInFlight: [...new Set([...inFlight.values()].map((batch) => batch.host))],
    startedAt: state.startedAt,
    run: state.run,
  }));
  setHandler(pauseSignal, () => {
    state.paused = true;
    status = 'paused';
    changed = true;
  });
  setHandler(resumeSignal, () => {
    state.paused = false;
    status = 'running';
    changed = true;
  });

  const acceptSnapshot = (snapshot: FrontierSnapshot): void => {
    if (snapshot.version <= state.frontier.version) return;
    state.frontier = snapshot;
    launchedSinceSnapshot = new Map();
  };

  const budgetLeft = (): number => {
    let reserved = 0;
    for (const batch of inFlight.values()) reserved += batch.limit;
    return config.maxPages - state.totals.processed - reserved;
  };

  const hostBatches = (host: string): number => {
    let n = 0;
    for (const batch of inFlight.values()) if (batch.host === host) n += 1;
    return n;
  };

  const onBatchDone = (result: BatchResult): void => {
    addTotals(state.totals, result.totals);
    state.batchesCompleted += 1;
    const now = Date.now();
    for (const [host, at] of Object.entries(state.hostReadyAt)) if (at <= now) delete state.hostReadyAt[host];
    if (result.deferUntil !== null) state.hostReadyAt[result.host] = result.deferUntil;
    acceptSnapshot(result.frontier);
  };

  const onBatchFailed = async (batchId: string, err: unknown): Promise<void> => {
    if (isCancellation(err)) return;
    log.warn('batch failed after retries; its unfinished URLs are recorded as failed', { batchId, error: String(err) });
    addTotals(state.totals, await lifecycle.abandonBatch({ crawlId, batchId }));
  };

  const launch = (host: string, limit: number): void => {
    state.batchSeq += 1;
    const batchId = `${crawlId}/batch-${state.batchSeq}`;
    inFlight.set(batchId, { host, limit });
    launchedSinceSnapshot.set(host, (launchedSinceSnapshot.get(host) ?? 0) + limit);
    crawlBatch({ crawlId, batchId, host, limit, config })
      .then(onBatchDone, (err: unknown) => onBatchFailed(batchId, err))
      .finally(() => {
        inFlight.delete(batchId);
        changed = true;
      });
  };

  /** Round-robin over hosts with backlog, one batch per host per pass, within every limit. */
  const launchReady = (): void => {
    const now = Date.now();
    const candidates = state.frontier.hosts.filter(({ host }) => (state.hostReadyAt[host] ?? 0) <= now);
    for (let launched = true; launched; ) {
      launched = false;
      for (const { host, queued } of candidates) {
        const budget = budgetLeft();
        if (inFlight.size >= config.concurrency || budget <= 0) return;
        const estimate = queued - (launchedSinceSnapshot.get(host) ?? 0);
        const hostSlots = config.perHostConcurrency - hostBatches(host);
        if (estimate <= 0 || hostSlots <= 0) continue;
        const share = Math.ceil(estimate / Math.min(hostSlots, config.concurrency - inFlight.size));
        launch(host, Math.min(config.batchSize, share, budget));
        launched = true;
      }
    }
  };

  const nextHostReadyAt = (): number | undefined => {
    const now = Date.now();
    const waiting = state.frontier.hosts.map(({ host }) => state.hostReadyAt[host] ?? 0).filter((at) => at > now);
    return waiting.length > 0 ? Math.min(...waiting) : undefined;
  };

  const runBatches = async (): Promise<RunOutcome> => {
    for (;;) {
      if (!state.paused && !draining) launchReady();
      if (inFlight.size === 0) {
        if (state.frontier.queued === 0) return 'completed';
        if (budgetLeft() <= 0) return 'max-pages-reached';
        if (draining) return 'continue-as-new';
      }
      changed = false;
      const wakeAt = state.paused ? undefined : nextHostReadyAt();
      if (wakeAt === undefined) await condition(() => changed);
      else await condition(() => changed, Math.max(1, wakeAt - Date.now()));
      if (workflowInfo().continueAsNewSuggested) draining = true;
    }
  };

  const finish = async (final: CrawlSummary['status']): Promise<CrawlSummary> => {
    status = final;
    // Whatever stopped the crawl, batches still cancelling are waited for, then totals read.
    return CancellationScope.nonCancellable(async () => {
      await condition(() => inFlight.size === 0);
      const totals = await lifecycle.finishCrawl({ crawlId });
      return { crawlId, status: final, totals, batches: state.batchSeq, runs: state.run, startedAt: state.startedAt, finishedAt: Date.now() };
    });
  };

  if (!continued) acceptSnapshot(await lifecycle.seedFrontier({ crawlId, config }));

  let outcome: RunOutcome;
  try {
    outcome =
      state.deadlineAt === null
        ? await runBatches()
        : await CancellationScope.withTimeout(Math.max(1, state.deadlineAt - Date.now()), runBatches);
  } catch (err) {
    if (!isCancellation(err)) throw err;
    if (root.consideredCancelled) {
      await finish('cancelled');
      throw err;
    }
    return finish('deadline-exceeded');
  }

  if (outcome === 'continue-as-new') {
    await condition(allHandlersFinished);
    return continueAsNew<typeof crawlSession>({ ...config, continued: { ...state, run: state.run + 1 } });
  }
  return finish(outcome);
}
