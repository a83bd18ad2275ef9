/**
 * The crawl workflow as released in 0.2.0, kept so that runs started by that release replay
 * and finish: `crawlSession` hands every execution without the scheduler-v2 marker to it.
 * Crawls started since never run it. It can go once no 0.2.0 crawl is left running
 * (`temporal workflow list --query "ExecutionStatus='Running'"` shows none started before the
 * upgrade), by deprecating the marker.
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
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { CrawlActivities } from '../activities';
import type { RenderActivities } from '../activities/render-batch';
import {
  InvalidCrawlConfigError,
  parseCrawlConfig,
  parseLimitsChange,
  parseSeeds,
  type CrawlConfig,
  type CrawlInput,
  type CrawlLimits,
} from '../shared/crawl-config';
import type { BatchResult, BatchTotals, LegacyBatchInput, CrawlProgress, CrawlStatus, CrawlSummary, FrontierSnapshot, HostState } from '../shared/crawl-types';
import {
  addSeedsUpdate,
  frontierQuery,
  hostQuery,
  pauseSignal,
  progressQuery,
  resumeSignal,
  setLimitsUpdate,
  stopUpdate,
} from '../shared/messages';
import { addTotals, describeProgress, emptyTotals, indexedAttributes, validateWith } from './crawl-state';
import { backlogLanes, RENDER_QUEUE_PATCH, renderBatchOptions, type Lane } from '../scheduling/lanes';
import { hostOverride } from '../policy/host-overrides';

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
  /** Absent in runs continued from 0.1.0, which had no limits updates, added seeds or stop. */
  limits?: CrawlLimits;
  addedSeeds?: string[];
  stopping?: boolean;
}

export type CrawlSessionInput = CrawlInput & { continued?: CarriedState };

type RunOutcome = 'completed' | 'max-pages-reached' | 'stopped' | 'continue-as-new';

const HEARTBEAT_TIMEOUT = '10s';
/** Room per URL in a batch's start-to-close timeout, on top of its fetch attempts. */
const PER_URL_OVERHEAD_MS = 15_000;
/** Search attributes are upserted on status changes and every this many batches. */
const INDEX_EVERY_BATCHES = 25;
/** Patch: executions started by 0.2.0+ keep search attributes up to date; 0.1.0 histories had none. */
export const SEARCH_ATTRIBUTES_PATCH = 'crawl-search-attributes';
/** Patch: executions started by 0.3.0+ read sitemaps after seeding; earlier histories had no such step. */
export const SITEMAPS_PATCH = 'crawl-sitemaps';

function validated(input: CrawlSessionInput): { config: CrawlConfig; continued?: CarriedState } {
  const { continued, ...rest } = input;
  try {
    return { config: parseCrawlConfig(rest), continued };
  } catch (err) {
    if (err instanceof InvalidCrawlConfigError) throw ApplicationFailure.nonRetryable(err.message, 'InvalidCrawlConfig');
    throw err;
  }
}

function batchOptions(config: CrawlConfig) {
  const perUrlMs = config.timeoutMs * (config.maxRetries + 1) + PER_URL_OVERHEAD_MS;
  return {
    startToCloseTimeout: config.batchSize * perUrlMs + 60_000,
    // Heartbeats come from a ticker, not from page progress, so this only has to cover the
    // worker-to-server network: a dead worker's batch is retried within ~10 s.
    heartbeatTimeout: HEARTBEAT_TIMEOUT,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
  };
}

const lifecycle = proxyActivities<CrawlActivities>({
  startToCloseTimeout: '2m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 10 },
});

/** Reading sitemaps is many fetches: heartbeated, and a failure leaves the crawl to its seeds. */
const discovery = proxyActivities<CrawlActivities>({
  startToCloseTimeout: '1h',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 3 },
  summary: 'reading sitemaps',
});

export async function crawlSessionV02(input: CrawlSessionInput): Promise<CrawlSummary> {
  const { config, continued } = validated(input);
  const crawlId = workflowInfo().workflowId;
  const root = CancellationScope.current();
  const indexed = patched(SEARCH_ATTRIBUTES_PATCH);
  const seedHost = new URL(config.seeds[0]).host;
  const startedAt = continued?.startedAt ?? Date.now();
  const state: Required<CarriedState> = {
    run: 1,
    startedAt,
    deadlineAt: config.deadline === undefined ? null : startedAt + config.deadline,
    paused: false,
    totals: emptyTotals(),
    batchSeq: 0,
    batchesCompleted: 0,
    frontier: { version: -1, queued: 0, hosts: [] },
    hostReadyAt: {},
    limits: { concurrency: config.concurrency, perHostConcurrency: config.perHostConcurrency, delayMs: config.delayMs },
    addedSeeds: [],
    stopping: false,
    ...continued,
  };

  // Only crawls that render schedule render batches; the marker is recorded only for them.
  const renders = config.render !== undefined && patched(RENDER_QUEUE_PATCH);
  const inFlight = new Map<string, { host: string; limit: number; render?: boolean }>();
  /** URLs handed to batches since the current snapshot arrived, per host. */
  let launchedSinceSnapshot = new Map<string, number>();
  let changed = false;
  let draining = false;
  let status: CrawlStatus = state.stopping ? 'stopping' : state.paused ? 'paused' : 'running';

  /** The config batches run with: seeds added and limits changed while the crawl runs. */
  const batchConfig = (): CrawlConfig => ({ ...config, ...state.limits, seeds: [...config.seeds, ...state.addedSeeds] });

  const setStatus = (next: CrawlStatus): void => {
    status = next;
    changed = true;
    if (indexed) indexedAttributes(crawlId, seedHost, status, state.totals.processed);
  };

  const hostBatches = (host: string): number => {
    let n = 0;
    for (const batch of inFlight.values()) if (batch.host === host) n += 1;
    return n;
  };

  const hostState = (host: string): HostState => ({
    host,
    queued: state.frontier.hosts.find((entry) => entry.host === host)?.queued ?? 0,
    batchesInFlight: hostBatches(host),
    readyAt: (state.hostReadyAt[host] ?? 0) > Date.now() ? state.hostReadyAt[host] : null,
    holdReason: null,
  });

  const progress = (): CrawlProgress => ({
    crawlId,
    status,
    ...state.totals,
    queued: state.frontier.queued,
    batchesInFlight: inFlight.size,
    batchesCompleted: state.batchesCompleted,
    hostsInFlight: [...new Set([...inFlight.values()].map((batch) => batch.host))],
    startedAt: state.startedAt,
    run: state.run,
    storeWait: null,
    failures: [],
  });

  setHandler(progressQuery, progress);
  setHandler(frontierQuery, () => ({
    queued: state.frontier.queued,
    snapshotVersion: state.frontier.version,
    hosts: state.frontier.hosts.slice(0, 50).map(({ host }) => hostState(host)),
  }));
  setHandler(hostQuery, hostState);
  setHandler(pauseSignal, () => {
    state.paused = true;
    if (!state.stopping) setStatus('paused');
  });
  setHandler(resumeSignal, () => {
    state.paused = false;
    if (!state.stopping) setStatus('running');
  });
  setHandler(
    setLimitsUpdate,
    (change) => {
      state.limits = { ...state.limits, ...parseLimitsChange(change) };
      changed = true;
      return state.limits;
    },
    { validator: validateWith(parseLimitsChange) },
  );
  setHandler(
    addSeedsUpdate,
    async (urls) => {
      const seeds = parseSeeds(urls);
      state.addedSeeds = [...new Set([...state.addedSeeds, ...seeds])];
      const { added, frontier } = await lifecycle.addSeeds({ crawlId, config: { ...batchConfig(), seeds } });
      acceptSnapshot(frontier);
      changed = true;
      return added;
    },
    { validator: validateWith(parseSeeds) },
  );
  setHandler(stopUpdate, () => {
    state.stopping = true;
    setStatus('stopping');
  });

  function acceptSnapshot(snapshot: FrontierSnapshot): void {
    if (snapshot.version <= state.frontier.version) return;
    state.frontier = snapshot;
    launchedSinceSnapshot = new Map();
  }

  const budgetLeft = (): number => {
    let reserved = 0;
    for (const batch of inFlight.values()) reserved += batch.limit;
    return config.maxPages - state.totals.processed - reserved;
  };

  const onBatchDone = (result: BatchResult): void => {
    addTotals(state.totals, result.totals);
    state.batchesCompleted += 1;
    const now = Date.now();
    for (const [host, at] of Object.entries(state.hostReadyAt)) if (at <= now) delete state.hostReadyAt[host];
    if (result.deferUntil !== null) state.hostReadyAt[result.host] = result.deferUntil;
    acceptSnapshot(result.frontier);
    if (indexed && state.batchesCompleted % INDEX_EVERY_BATCHES === 0) {
      indexedAttributes(crawlId, seedHost, status, state.totals.processed);
    }
  };

  const onBatchFailed = async (batchId: string, err: unknown): Promise<void> => {
    if (isCancellation(err)) return;
    log.warn('batch failed after retries; its unfinished URLs are recorded as failed', { batchId, error: String(err) });
    addTotals(state.totals, await lifecycle.abandonBatch({ crawlId, batchId }));
  };

  const renderBatches = (): number => {
    let n = 0;
    for (const batch of inFlight.values()) if (batch.render) n += 1;
    return n;
  };

  /** A render batch runs on the render task queue; a fetch batch on the workflow's own. */
  const startBatch = (lane: Lane, input: LegacyBatchInput, summary: string): Promise<BatchResult> => {
    if (lane.render && input.config.render) {
      const { renderBatch } = proxyActivities<RenderActivities>({ ...renderBatchOptions(input.config, input.config.render, batchOptions(input.config)), summary });
      return renderBatch(input);
    }
    const { crawlBatch } = proxyActivities<CrawlActivities>({ ...batchOptions(input.config), summary });
    return crawlBatch(input);
  };

  const launch = (lane: Lane, limit: number): void => {
    const { host } = lane;
    state.batchSeq += 1;
    const batchId = `${crawlId}/batch-${state.batchSeq}`;
    inFlight.set(batchId, lane.render ? { host, limit, render: true } : { host, limit });
    launchedSinceSnapshot.set(lane.key, (launchedSinceSnapshot.get(lane.key) ?? 0) + limit);
    const config = batchConfig();
    const summary = `${host} · ${lane.render ? 'render ' : ''}batch ${state.batchSeq} · up to ${limit} URLs`;
    startBatch(lane, { crawlId, batchId, host, limit, config }, summary)
      .then(onBatchDone, (err: unknown) => onBatchFailed(batchId, err))
      .finally(() => {
        inFlight.delete(batchId);
        changed = true;
      });
  };

  /** Round-robin over hosts with backlog, one batch per host per pass, within every limit. */
  const launchReady = (): void => {
    const { concurrency, perHostConcurrency } = state.limits;
    const now = Date.now();
    const candidates = backlogLanes(
      state.frontier.hosts.filter(({ host }) => (state.hostReadyAt[host] ?? 0) <= now),
      renders,
    );
    for (let launched = true; launched; ) {
      launched = false;
      for (const lane of candidates) {
        const budget = budgetLeft();
        if (inFlight.size >= concurrency || budget <= 0) return;
        const estimate = lane.queued - (launchedSinceSnapshot.get(lane.key) ?? 0);
        // A host's override (config `hosts`) sets its concurrency; other hosts take the crawl's.
        const hostSlots = (hostOverride(config.hosts, lane.host)?.perHostConcurrency ?? perHostConcurrency) - hostBatches(lane.host);
        if (estimate <= 0 || hostSlots <= 0) continue;
        if (lane.render && renderBatches() >= (config.render?.maxConcurrentPages ?? 0)) continue;
        const share = Math.ceil(estimate / Math.min(hostSlots, concurrency - inFlight.size));
        launch(lane, Math.min(config.batchSize, share, budget));
        launched = true;
      }
    }
  };

  const nextHostReady = (): { at: number; host: string } | undefined => {
    const now = Date.now();
    let next: { at: number; host: string } | undefined;
    for (const { host } of state.frontier.hosts) {
      const at = state.hostReadyAt[host] ?? 0;
      if (at > now && (next === undefined || at < next.at)) next = { at, host };
    }
    return next;
  };

  const runBatches = async (): Promise<RunOutcome> => {
    for (;;) {
      if (!state.paused && !state.stopping && !draining) launchReady();
      setCurrentDetails(describeProgress(progress()));
      if (inFlight.size === 0) {
        if (state.stopping) return 'stopped';
        if (state.frontier.queued === 0) return 'completed';
        if (budgetLeft() <= 0) return 'max-pages-reached';
        if (draining) return 'continue-as-new';
      }
      changed = false;
      const wake = state.paused || state.stopping ? undefined : nextHostReady();
      if (wake === undefined) await condition(() => changed);
      else await condition(() => changed, Math.max(1, wake.at - Date.now()), { summary: `${wake.host} asked us to wait` });
      if (workflowInfo().continueAsNewSuggested) draining = true;
    }
  };

  const finish = async (final: CrawlSummary['status']): Promise<CrawlSummary> => {
    status = final;
    // Whatever stopped the crawl, batches still cancelling are waited for, then totals read.
    return CancellationScope.nonCancellable(async () => {
      await condition(() => inFlight.size === 0);
      // recrawlOf is undefined (left out of the payload) for every crawl that is not a recrawl.
      const totals = await lifecycle.finishCrawl({ crawlId, recrawlOf: config.recrawlOf });
      setCurrentDetails(describeProgress({ ...progress(), ...totals }));
      if (indexed) indexedAttributes(crawlId, seedHost, final, totals.processed);
      log.info('crawl finished', { crawlId, status: final, ...totals });
      return { crawlId, status: final, totals, batches: state.batchSeq, runs: state.run, startedAt: state.startedAt, finishedAt: Date.now() };
    });
  };

  if (indexed) indexedAttributes(crawlId, seedHost, status, state.totals.processed);
  log.info(continued ? 'crawl continued as new' : 'crawl started', { crawlId, run: state.run, seeds: config.seeds.length });
  const readSitemaps = async (): Promise<void> => {
    try {
      const { frontier, failures, ...counts } = await discovery.discoverSitemaps({ crawlId, config });
      acceptSnapshot(frontier);
      log.info('sitemaps read', { crawlId, ...counts, failures: failures.map(({ url, reason }) => `${reason} ${url}`) });
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn('sitemaps could not be read; the crawl goes on from its seeds', { crawlId, error: String(err) });
    }
  };

  if (!continued) {
    acceptSnapshot(await lifecycle.seedFrontier({ crawlId, config }));
    const { sitemaps } = config;
    if ((sitemaps.urls.length > 0 || sitemaps.fromRobots) && patched(SITEMAPS_PATCH)) await readSitemaps();
  }

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
    return continueAsNew<typeof crawlSessionV02>({ ...config, continued: { ...state, run: state.run + 1 } });
  }
  return finish(outcome);
}
