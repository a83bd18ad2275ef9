/**
 * The small activities around the batches: opening a crawl (config recorded, seeds queued),
 * adding seeds, giving up a batch, waiting out a store outage, handing a run's batches over,
 * finishing. The 0.2.0 ones (`seedFrontier`, `addSeeds`) still serve crawls that release started.
 */
import { Context } from '@temporalio/activity';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { AbandonInput, BatchTotals, CrawlTotals, CrawlView, EndReport, FrontierSnapshot, SeedFrontierInput } from '../shared/crawl-types';
import { isLegacyHandOver } from '../shared/crawl-types';
import { parseCrawlConfig, parseSeeds, type CrawlConfig } from '../shared/crawl-config';
import { seedEntries } from './seed-entries';
import type { FrontierStore } from '../store/frontier-store';
import { patientStore, storeWaitMetrics } from '../store/patient-store';
import { markGone } from '../recrawl/mark-gone';
import { checkPreviousCrawl } from '../recrawl/previous-crawl';
import { planOf, type CrawlPlan } from '../scheduling/crawl-plan';
import { politenessKeys } from '../policy/politeness-key';
import type { LookupAll } from '../fetch/transport';
import { classified, UNCLASSIFIED } from './activity-failures';
import { appendSeeds, recordConfig } from './recorded-config';
import { SNAPSHOT_HOSTS } from './crawl-batch';
import type { ActivityDeps } from './deps';
import { HEARTBEAT_TICK_MS } from '../shared/activity-timing';
import { checkCrawlId } from '../shared/crawl-id';

/**
 * The input the crawl's run was started with (for the continuation of a 0.2.0 run, its config
 * without the counters it carried).
 */
async function crawlInputOf(crawlId: string, runId: string): Promise<unknown> {
  const { client } = Context.current();
  const { history } = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId: crawlId, runId },
    maximumPageSize: 1,
  });
  const started = history?.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (!started) throw new Error(`crawl ${crawlId}: the start of run ${runId} is not in its history`);
  const input = await decodeFromPayloadsAtIndex<Record<string, unknown>>(client.options.loadedDataConverter, 0, started.input?.payloads);
  const config = { ...input };
  // Only a continued run's input, or a 0.2.0 run's hand-over, carries what the last run handed
  // over (open-crawl.ts): in a crawl's own input `continued` stays, and the schema refuses it as
  // an unknown field.
  if (started.continuedExecutionRunId || isLegacyHandOver(config.continued)) delete config.continued;
  return config;
}

/**
 * What opening a crawl does to its store: an end recorded by an earlier run forgotten, the
 * config recorded (unless it is), the seeds queued. Returns the config version batches are to
 * read. Exported for activity-level tests, which open a crawl without a workflow run to read
 * the input from.
 *
 * The end goes first, before any new seed is queued: a store with an end must hold every
 * record the crawl will write, and a crawl run again under its ID (a new workflow once
 * Temporal has dropped the last one, a run reset to before its opening) will write more. Only
 * a fresh run opens the crawl: a continued run, whose crawl is running, never recorded one.
 */
export async function openInStore(store: FrontierStore, config: CrawlConfig, resolve: LookupAll): Promise<number> {
  await store.clearEnd();
  const configVersion = await recordConfig(store, config);
  await store.enqueue(await politenessKeys(config, resolve)(seedEntries(config, config.seeds)));
  return configVersion;
}

export interface OpenedCrawl {
  plan: CrawlPlan;
  view: CrawlView;
}

/** Runs `work` on a crawl's store, its errors classified for Temporal's retries. */
type OnStore = <T>(crawlId: string, work: (store: FrontierStore) => Promise<T>) => Promise<T>;

/** Opening a crawl, and seeds added to it while it runs. */
function openingActivities(deps: CrawlStores, onStore: OnStore, resolve: LookupAll) {
  const { stores } = deps;
  return {
    /**
     * Resolves the crawl's input (the one schema, with its defaults) once, records it in the
     * store, and queues the seeds. The input is read from the run's start event, so it passes
     * through no activity input. Idempotent: a retry, or a run reset to before it, finds the
     * config recorded and the seeds seen.
     */
    openCrawl({ crawlId, runId }: { crawlId: string; runId: string }): Promise<OpenedCrawl> {
      return classified(Context.current().info.attempt, async () => {
        // Before anything opens a file named by it: `temporal workflow start` takes any workflow ID.
        checkCrawlId(crawlId);
        const config = parseCrawlConfig(await crawlInputOf(crawlId, runId));
        if (config.recrawlOf !== undefined) await checkPreviousCrawl(deps, crawlId, config.recrawlOf);
        return stores.use(crawlId, async (store) => {
          const configVersion = await openInStore(store, config, resolve);
          return { plan: planOf(config, configVersion), view: await store.view(SNAPSHOT_HOSTS) };
        });
      });
    },

    /** Seeds added to a running crawl: they join the recorded config (a new version) and the frontier. */
    appendSeeds({ crawlId, urls }: { crawlId: string; urls: string[] }): Promise<{ added: number; configVersion: number; view: CrawlView }> {
      return onStore(crawlId, async (store) => {
        const seeds = parseSeeds(urls);
        const { version, config } = await appendSeeds(store, seeds);
        const added = await store.enqueue(await politenessKeys(config, resolve)(seedEntries(config, seeds)));
        return { added, configVersion: version, view: await store.view(SNAPSHOT_HOSTS) };
      });
    },
  };
}

/** A run's control of its shards and batches: views, hand-overs, aborts, a shard's end. */
function shardActivities(onStore: OnStore) {
  return {
    /** The current view of the crawl, or of one shard: what a continued run starts from; `hosts` caps its backlog list. */
    crawlView({ crawlId, shard, hosts = SNAPSHOT_HOSTS }: { crawlId: string; shard?: number; hosts?: number }): Promise<CrawlView> {
      return onStore(crawlId, (store) => store.view(hosts, shard));
    },

    /** Asks the batches of `run` to stop after their current page and give the rest back. */
    handOver({ crawlId, run, shard }: { crawlId: string; run: string; shard?: number }): Promise<void> {
      return onStore(crawlId, (store) => store.stopRun({ run, abort: false }, shard));
    },

    /**
     * Asks the batches of `run` numbered up to `upTo`, the ones running when the crawl was paused
     * or stopped, to stop after their current page and give the rest back.
     */
    stopBatches({ crawlId, run, upTo, shard }: { crawlId: string; run: string; upTo: number; shard?: number }): Promise<void> {
      return onStore(crawlId, (store) => store.stopRun({ run, abort: false, upTo }, shard));
    },

    /** Tells the batches of `run`, cancelled by the workflow, to abort their requests and give their URLs back now. */
    abortRun({ crawlId, run, shard }: { crawlId: string; run: string; shard?: number }): Promise<void> {
      return onStore(crawlId, (store) => store.stopRun({ run, abort: true }, shard));
    },

    /**
     * A shard with nothing queued and nothing in flight: its view, and whether the whole crawl
     * is quiet (no live shard has work), in which case the shard is marked ended. A shard cannot
     * end on its own empty queue, since other shards may still find URLs of its keys.
     */
    shardIdle({ crawlId, shard }: { crawlId: string; shard: number }): Promise<{ quiet: boolean; view: CrawlView }> {
      return onStore(crawlId, async (store) => {
        const view = await store.view(SNAPSHOT_HOSTS, shard);
        const quiet = view.queued === 0 && (await store.quiet());
        if (quiet) await store.endShard(shard);
        return { quiet, view };
      });
    },

    /** The shard has ended (its budget spent, stopped, quiet): its totals. */
    endShard({ crawlId, shard }: { crawlId: string; shard: number }): Promise<BatchTotals> {
      return onStore(crawlId, async (store) => {
        await store.endShard(shard);
        return (await store.view(0, shard)).totals;
      });
    },
  };
}

/** Riding out a store outage, giving up a batch, and finishing the crawl. */
function recoveryActivities({ stores, metrics, bodies }: Pick<ActivityDeps, 'stores' | 'metrics' | 'bodies'>, onStore: OnStore) {
  return {
    /**
     * Waits, heartbeating, until the store answers again, then gives back the claims of the
     * batches the outage stopped (`release`), so their URLs are crawled by later batches.
     */
    awaitStore({ crawlId, release, shard }: { crawlId: string; release: string[]; shard?: number }): Promise<CrawlView> {
      const context = Context.current();
      const ticker = setInterval(() => context.heartbeat(), HEARTBEAT_TICK_MS);
      context.heartbeat();
      return onStore(crawlId, async (raw) => {
        const store = patientStore(raw, { patienceMs: Number.POSITIVE_INFINITY, signal: context.cancellationSignal, onWait: storeWaitMetrics(metrics) });
        for (const batchId of release) await store.release(batchId);
        return store.view(SNAPSHOT_HOSTS, shard);
      }).finally(() => clearInterval(ticker));
    },

    /** A batch that failed for good: its unfinished URLs get a final record with the failure's code. */
    abandonBatch({ crawlId, batchId, failure, shard }: AbandonInput): Promise<BatchTotals & { view: CrawlView }> {
      return onStore(crawlId, async (store) => {
        await store.abandon(batchId, failure?.code ?? UNCLASSIFIED, new Date().toISOString());
        return { ...(await store.batchTotals(batchId)), view: await store.view(SNAPSHOT_HOSTS, shard) };
      });
    },

    /**
     * The crawl has stopped: claimed URLs go back to the queue, which leaves the bodies of
     * attempts that died unreferenced for good, so they are discarded; the totals are read. A
     * recrawl that reached everything it could records the previous crawl's unreached URLs as gone.
     * Then how it ended (`end`) is recorded, last, so a store with an end holds every record
     * the crawl will write (what `crawlflow results` relies on). `end` is absent when the run
     * was started by 0.2.0, or scheduled this activity before ends were recorded: no end is
     * recorded then.
     */
    finishCrawl({ crawlId, recrawlOf, end }: { crawlId: string; recrawlOf?: string; end?: EndReport }): Promise<CrawlTotals> {
      return onStore(crawlId, async (store) => {
        await store.releaseAll();
        await bodies.discardUnreferenced?.(crawlId);
        if (recrawlOf !== undefined && (await store.totals()).queued === 0) {
          await stores.use(recrawlOf, (previous) => markGone(previous, store, new Date().toISOString()));
        }
        if (end !== undefined) await store.recordEnd({ ...end, endedAt: new Date().toISOString() });
        return store.totals();
      });
    },
  };
}

/** The seeding of crawls started by 0.2.0, whose config comes in the input. */
function legacySeedActivities(deps: CrawlStores) {
  const { stores } = deps;
  return {
    /** 0.2.0: idempotent seeding with the config in the input. */
    async seedFrontier({ crawlId, config }: SeedFrontierInput): Promise<FrontierSnapshot> {
      if (config.recrawlOf !== undefined) await checkPreviousCrawl(deps, crawlId, config.recrawlOf);
      return stores.use(crawlId, async (store) => {
        await store.enqueue(seedEntries(config, config.seeds));
        return store.snapshot(SNAPSHOT_HOSTS);
      });
    },

    /** 0.2.0: seeds added to a running crawl, with the config in the input. */
    addSeeds({ crawlId, config }: SeedFrontierInput): Promise<{ added: number; frontier: FrontierSnapshot }> {
      return stores.use(crawlId, async (store) => {
        const added = await store.enqueue(seedEntries(config, config.seeds));
        return { added, frontier: await store.snapshot(SNAPSHOT_HOSTS) };
      });
    },
  };
}

/** The crawls' stores, and whether a crawl has one. */
type CrawlStores = Pick<ActivityDeps, 'stores' | 'crawlExists'>;

export function createLifecycleActivities(deps: Pick<ActivityDeps, 'stores' | 'crawlExists' | 'metrics' | 'bodies' | 'transport'>) {
  const { stores, transport } = deps;
  const onStore: OnStore = (crawlId, work) => classified(Context.current().info.attempt, () => stores.use(crawlId, work));
  return {
    ...openingActivities(deps, onStore, (hostname) => transport.resolve(hostname)),
    ...shardActivities(onStore),
    ...recoveryActivities(deps, onStore),
    ...legacySeedActivities(deps),
  };
}
