/**
 * How a run of the crawl workflow starts: a fresh crawl is opened (its input resolved and
 * recorded by `openCrawl`), a continued run picks up what the last one carried, and the
 * continuation of a 0.2.0 run is opened afresh with its counters kept.
 */
import { ApplicationFailure, log, workflowInfo } from '@temporalio/workflow';
import type { CrawlInput } from '../shared/crawl-config';
import { INVALID_CONFIG, nonObjectInput } from '../shared/crawl-config';
import { INVALID_CRAWL_ID } from '../shared/crawl-id';
import { INVALID_SEED_LINE, SEEDS_FILE_EMPTY, SEEDS_FILE_UNREADABLE } from '../seeds/seed-errors';
import { initialSchedulerState, type SchedulerState } from '../scheduling/crawl-scheduler';
import type { CrawlPlan } from '../scheduling/crawl-plan';
import { isLegacyHandOver, type CrawlView } from '../shared/crawl-types';
import { batchFailure, lifecycle, seedImport } from './crawl-activities';
import { invalidConfig } from './crawl-state';
import type { CrawlSessionInput as V02Input } from './crawl-session-v0.2';

/** What a run hands to the next across continue-as-new. */
export interface CarriedCrawl {
  plan: CrawlPlan;
  scheduler: SchedulerState;
  startedAt: number;
  run: number;
}

export type CrawlSessionInput = CrawlInput | V02Input | { continued: CarriedCrawl };

export interface Opened {
  plan: CrawlPlan;
  scheduler: SchedulerState;
  startedAt: number;
  run: number;
  fresh: boolean;
}

/** A fresh crawl, a continued one, or the continuation of a 0.2.0 run (opened afresh, its counters kept). */
export async function open(input: CrawlSessionInput): Promise<Opened> {
  const crawlId = workflowInfo().workflowId;
  // Not an object (no --input, null, a list): thrown before `in` below would throw a TypeError, which fails the workflow task for ever.
  const notObject = nonObjectInput(input);
  if (notObject) throw invalidConfig(notObject.message);
  // Only a run started by continue-as-new carries what the last run handed over: in a crawl's
  // own input, `continued` is a field like any other, which openCrawl refuses as unknown. A
  // 0.2.0 run's hand-over is known by its shape (isLegacyHandOver), wherever it comes from.
  const { continued } = input as { continued?: unknown };
  const legacy = isLegacyHandOver(continued) ? (input as V02Input).continued : undefined;
  if (workflowInfo().continuedFromExecutionRunId !== undefined && continued !== undefined && !legacy) {
    const carried = continued as CarriedCrawl;
    // Batches of the last run gave their claims back: read the queue as it is now.
    const view = await lifecycle.crawlView({ crawlId });
    return { ...carried, scheduler: { ...carried.scheduler, view }, fresh: false };
  }
  let opened;
  try {
    opened = await lifecycle.openCrawl({ crawlId, runId: workflowInfo().runId });
  } catch (err) {
    // As it did when the workflow parsed the input itself.
    const failure = batchFailure(err);
    if (failure.code === INVALID_CONFIG) throw invalidConfig(failure.message);
    if (failure.code === INVALID_CRAWL_ID) throw ApplicationFailure.nonRetryable(failure.message, INVALID_CRAWL_ID);
    throw err;
  }
  // The crawl's clock (its deadline too) starts before a seed file is queued: queuing is part of the crawl.
  const openedAt = Date.now();
  if (opened.plan.importsSeedFile) opened = await importSeedFile(crawlId, opened.plan);
  const scheduler = initialSchedulerState(opened.plan, opened.view);
  if (legacy) {
    Object.assign(scheduler, { paused: legacy.paused, stopping: legacy.stopping ?? false, batchesCompleted: legacy.batchesCompleted });
    if (legacy.limits) scheduler.limits = legacy.limits;
  }
  return { plan: opened.plan, scheduler, startedAt: legacy?.startedAt ?? openedAt, run: legacy ? legacy.run : 1, fresh: !legacy };
}

/** Failures of a seed file that fail the crawl before its first fetch, with the file's own message (`seeds.txt:123: ...`). */
const SEED_FILE_FAILURES = new Set([INVALID_SEED_LINE, SEEDS_FILE_UNREADABLE, SEEDS_FILE_EMPTY]);

/**
 * Queues the crawl's seed file, before any batch: only counts and a view come back, so
 * history holds no seed. Crawls without a seed file never take this step, and no earlier
 * release accepted one, so histories recorded before it replay unchanged.
 */
async function importSeedFile(crawlId: string, plan: CrawlPlan): Promise<{ plan: CrawlPlan; view: CrawlView }> {
  let imported;
  try {
    imported = await seedImport.importSeeds({ crawlId, configVersion: plan.configVersion });
  } catch (err) {
    const failure = batchFailure(err);
    if (SEED_FILE_FAILURES.has(failure.code)) throw ApplicationFailure.nonRetryable(failure.message, failure.code);
    throw err;
  }
  log.info('seed file queued', { crawlId, seeds: imported.seeds, added: imported.added });
  return { plan: plan.seedHost === '' ? { ...plan, seedHost: imported.firstHost ?? '' } : plan, view: imported.view };
}
