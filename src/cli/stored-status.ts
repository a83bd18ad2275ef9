/**
 * `status` of a crawl whatever the Temporal server still keeps: its report from Temporal, or,
 * once the namespace's retention has dropped the crawl's workflow, from the crawl's store,
 * which keeps its records and the end it recorded for as long as the store is kept.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { readStoredOutcome } from '../results/stored-progress';
import { UnknownCrawlError } from '../store/store-backend';
import type { StoreConfig } from '../store/store-url';
import { crawlStatusReport, type CrawlStatusReport } from './crawl-report';

/** Neither the Temporal server nor the store knows the crawl. */
export class CrawlNotFoundError extends Error {
  readonly code = 'crawl-not-found';
}

/** What the store tells of a crawl Temporal has no workflow for; null for what only Temporal knew. */
async function storedStatusReport(store: StoreConfig, crawlId: string): Promise<CrawlStatusReport> {
  let stored;
  try {
    stored = await readStoredOutcome(store, crawlId);
  } catch (err) {
    if (err instanceof UnknownCrawlError) throw new CrawlNotFoundError(`no crawl "${crawlId}" on the Temporal server or in the store`);
    throw err;
  }
  const { end, totals } = stored;
  return {
    crawlId,
    workflowStatus: null,
    outcome: end?.status ?? null,
    startedAt: null,
    finishedAt: end === undefined ? null : Date.parse(end.endedAt),
    totals,
    failure: end?.failure?.message ?? null,
    failedBatches: null,
    progress: null,
    frontier: null,
    gaps: null,
    // The Web UI shows only what the server keeps: the link would find nothing.
    uiUrl: null,
  };
}

/**
 * A crawl that ended with no summary (cancelled, failed, terminated, timed out) has its totals
 * in its store all the same: what it fetched before it ended. One that failed before it made a
 * store has none.
 */
async function withStoredTotals(report: CrawlStatusReport, store: StoreConfig): Promise<CrawlStatusReport> {
  try {
    return { ...report, totals: (await readStoredOutcome(store, report.crawlId)).totals };
  } catch (err) {
    if (err instanceof UnknownCrawlError) return report;
    throw err;
  }
}

/** The crawl's report from Temporal, or from its store when Temporal has no workflow of that ID. */
export async function statusReport(client: Client, store: StoreConfig, crawlId: string, uiUrl: string | undefined): Promise<CrawlStatusReport> {
  let report: CrawlStatusReport;
  try {
    report = await crawlStatusReport(client, crawlId, uiUrl);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return storedStatusReport(store, crawlId);
    throw err;
  }
  return report.progress === null && report.totals === null ? withStoredTotals(report, store) : report;
}
