/**
 * The batch activities: a batch claims up to its limit of URLs, host by host, fetches and
 * parses them one after another (a batch is one connection's worth of politeness), writes
 * each record and its new links to the store, and returns counts and a view of the crawl —
 * never pages. How an attempt runs is batch-runner.ts; this module is what the workflows call.
 *
 * Outages: store calls wait out a short outage; a longer one ends the batch with a
 * `store-unavailable` report (its claims kept under its ID), so the workflow can show the
 * crawl waiting and have the claims given back once the store answers.
 */
import { Context } from '@temporalio/activity';
import type { BatchReport, BatchResult, LegacyBatchInput } from '../shared/crawl-types';
import type { FrontierStore } from '../store/frontier-store';
import { patientStore } from '../store/patient-store';
import { storeOutage } from '../store/store-errors';
import type { BatchOrder } from '../scheduling/crawl-plan';
import type { CrawlConfig } from '../shared/crawl-config';
import type { ActivityDeps } from './deps';
import { activityFailure } from './activity-failures';
import { BatchGauges } from './batch-gauges';
import { batchPatience, BatchRunner } from './batch-runner';
import { CrawlPolicies } from './crawl-policy';
import { fetchLoader, type PageLoader } from './page-loader';
import { UrlProcessor } from './url-processor';

/** Hosts in a view of the crawl that starts or resumes a run: enough to fill every batch slot. */
export const SNAPSHOT_HOSTS = 200;
/**
 * Hosts in the view a batch reports: enough to refill the slot it frees, few enough that a
 * report stays a few hundred bytes (every report is kept in history).
 */
export const REPORT_HOSTS = 48;

export function createBatchActivities(deps: ActivityDeps, loader: PageLoader = fetchLoader(deps.transport)) {
  const { stores, metrics, configs } = deps;
  const gauges = new BatchGauges(metrics, deps.workerId);
  const runner = new BatchRunner(deps, loader, new CrawlPolicies(deps.transport, stores), gauges, new UrlProcessor(deps, loader));

  /** A batch of the 0.3 workflow: the config comes from the store, the result is a view of the crawl. */
  async function orderedBatch(order: BatchOrder, store: FrontierStore): Promise<BatchReport> {
    // The workflow's delay is the one in force: set-limits changes it without a new config version.
    const read = async (configVersion: number): Promise<CrawlConfig> => {
      const recorded = await configs.get(store, { crawlId: order.crawlId, configVersion });
      return recorded.delayMs === order.delayMs ? recorded : { ...recorded, delayMs: order.delayMs };
    };
    const fill =
      order.perHostConcurrency === undefined ? undefined : { urls: order.fill ?? 0, perHostConcurrency: order.perHostConcurrency, waitsForWork: order.waitsForWork === true };
    const recorded = { version: order.configVersion, read };
    const { claimed, deferred } = await runner.run({ ...order, shares: order.hosts, config: await read(order.configVersion), fill, recorded }, store);
    const claimableAt = fill && claimed === 0 ? await runner.claimableAt(store, order.shard) : undefined;
    const view = await store.view(REPORT_HOSTS, order.shard);
    gauges.recordFrontierSize(order.crawlId, view.queued);
    const hosts = order.hosts.map(({ host }) => host);
    return { kind: 'done', batchId: order.batchId, hosts, claimed, deferred, view, ...(claimableAt === undefined ? {} : { claimableAt }) };
  }

  /** A batch of a crawl started by 0.2.0: the config comes with it, the result has its totals and snapshot. */
  async function legacyBatch(input: LegacyBatchInput, store: FrontierStore): Promise<BatchResult> {
    const { claimed, deferred } = await runner.run({ ...input, shares: [{ host: input.host, limit: input.limit }] }, store);
    const totals = await store.batchTotals(input.batchId);
    const frontier = await store.snapshot(SNAPSHOT_HOSTS);
    return { batchId: input.batchId, host: input.host, claimed, totals, deferUntil: deferred[0]?.until ?? null, frontier };
  }

  /**
   * Runs `work` on the batch's store, patient through short outages; a store outage that
   * outlasted the batch's patience is returned.
   */
  async function onStore<T>(crawlId: string, work: (store: FrontierStore) => Promise<T>, onOutage: (message: string) => T | undefined): Promise<T> {
    const context = Context.current();
    const patience = batchPatience(metrics, context.cancellationSignal);
    try {
      return await stores.use(crawlId, (store) => work(patientStore(store, patience)));
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
