/**
 * `crawlflow crawl`: start a crawl (or attach to it), follow it to the end, write its
 * results. With the embedded default it also runs the Temporal dev server and a worker in
 * this process (and a render worker on the crawl's render task queue when it renders); with
 * TEMPORAL_ADDRESS it relies on the cluster's workers.
 */
import { WorkflowFailedError, type ClientPlugin } from '@temporalio/client';
import type { Logger } from '../observability/logger';
import { crawlHandle, startCrawl } from '../client/crawl-client';
import { crawlResult } from '../client/crawl-result';
import { connectClient, resolveTemporalTarget, workflowUiUrl } from '../temporal/target';
import { startWorkerHost, type WorkerHost } from '../workers/worker-host';
import { exportResults, type ExportFormat } from '../results/export-results';
import { ExportInterruptedError, ExportWriteError } from '../results/atomic-file';
import type { CrawlConfig, CrawlInput } from '../shared/crawl-config';
import type { CrawlSummary } from '../shared/crawl-types';
import type { StoreConfig } from '../store/store-url';
import { followProgress } from './progress';
import { assertChromium } from '../render/chromium-binary';
import { workflowEnd } from './crawl-report';

export interface RunCrawlOptions {
  crawlId: string;
  input: CrawlInput;
  config: CrawlConfig;
  out: string;
  format: ExportFormat;
  progress: boolean;
  taskQueue: string;
  dataDir: string;
  store: StoreConfig;
  metricsAddress: string | null;
  logger: Logger;
  clientPlugins: ClientPlugin[];
  /**
   * Shows the crawl's results once they are written, before the worker and an embedded
   * server stop: the server takes about a second to shut down, and nothing it does then
   * changes what the crawl did.
   */
  report(run: CrawlRun): void;
}

export interface CrawlRun {
  summary: CrawlSummary;
  lines: number;
  uiUrl: string | undefined;
  /** The dev server behind `uiUrl` was started for this crawl and stops with it. */
  uiStopsWithCommand: boolean;
}

/** The command that writes a crawl's records to a file in `format`, as the lines of a crawl cut short give it. */
const resultsCommand = (crawlId: string, format: ExportFormat): string => `crawlflow results ${crawlId} --format ${format} --out <file>`;

/**
 * The crawl's workflow ended without a summary (failed, terminated, ...); the message says why,
 * in one line. One cancelled, terminated or timed out was cut short from outside: what it
 * fetched until then is in its store, and the line says how to write it, lest the user take
 * the crawl for lost. (A failed one may have failed before it made a store.)
 */
export class CrawlFailedError extends Error {
  readonly code = 'crawl-failed';
  constructor(crawlId: string, err: WorkflowFailedError, format: ExportFormat) {
    const { outcome, reason } = workflowEnd(err);
    const kept = outcome === 'failed' ? '' : `; what it fetched until then is kept: write it with \`${resultsCommand(crawlId, format)}\``;
    super(`crawl ${crawlId} ${outcome}: ${reason}${kept}`);
  }
}

export class WorkerStoppedError extends Error {
  readonly code = 'worker-stopped';
}

/**
 * The crawl ended but its results file could not be written. Its records are in the store,
 * and `results` writes them: the message says so, lest the user take the crawl for lost.
 */
export class ResultsNotWrittenError extends Error {
  readonly code = 'results-not-written';
  /** A signal stopped the writing (exit 130), rather than a file that could not be written (exit 1). */
  readonly interrupted: boolean;
  constructor({ crawlId, status }: CrawlSummary, format: ExportFormat, cause: ExportWriteError | ExportInterruptedError) {
    super(`crawl ${crawlId} ${status}, but ${cause.failure}; its results are kept: write them with \`${resultsCommand(crawlId, format)}\``, { cause });
    this.interrupted = cause instanceof ExportInterruptedError;
  }
}

/** Writes the ended crawl's results file. */
async function exportRun(options: RunCrawlOptions, summary: CrawlSummary): Promise<number> {
  try {
    return await exportResults(options.format, options.store, options.crawlId, options.out);
  } catch (err) {
    if (err instanceof ExportWriteError || err instanceof ExportInterruptedError) throw new ResultsNotWrittenError(summary, options.format, err);
    throw err;
  }
}

export async function runCrawl(options: RunCrawlOptions): Promise<CrawlRun> {
  const target = await resolveTemporalTarget({ dataDir: options.dataDir, startEmbedded: true });
  let host: WorkerHost | undefined;
  let renderHost: WorkerHost | undefined;
  try {
    if (target.embedded) {
      if (options.config.render) assertChromium();
      host = await startWorkerHost({
        target,
        taskQueue: options.taskQueue,
        store: options.store,
        metricsAddress: options.metricsAddress,
        logger: options.logger,
        // A server this command started for the crawl has no other crawl worker to spread over
        // (a `crawlflow worker` that joins later still works; it just gets fewer batches).
        soleWorker: target.startedHere,
      });
      if (options.config.render) {
        renderHost = await startWorkerHost({
          target,
          taskQueue: options.config.render.taskQueue,
          store: options.store,
          metricsAddress: null,
          logger: options.logger,
          render: {},
        });
      }
    }
    const client = await connectClient(target, options.clientPlugins);
    try {
      await startCrawl(client, options.crawlId, options.input, options.taskQueue);
      const uiUrl = workflowUiUrl(target, options.crawlId);
      options.logger.info({ crawlId: options.crawlId, uiUrl }, 'crawl started');
      const progress = options.progress ? followProgress(crawlHandle(client, options.crawlId), options.config.maxPages) : undefined;
      let run: CrawlRun;
      // Ends the wait for the result when the worker stops first: a wait left running would
      // retry on the connection closed below, and its retry would throw there, uncaught.
      const waiting = new AbortController();
      try {
        const workerStopped = host?.done.then(() => {
          throw new WorkerStoppedError(
            `the worker stopped before crawl ${options.crawlId} finished; it is durable: run \`crawlflow worker\` to continue it`,
          );
        });
        const result = crawlResult(client, options.crawlId, waiting.signal).catch((err: unknown) => {
          // The crawl's own failure (its cause) is what the user needs, not the client's wrapper.
          if (err instanceof WorkflowFailedError) throw new CrawlFailedError(options.crawlId, err, options.format);
          throw err;
        });
        const summary = await Promise.race([result, ...(workerStopped ? [workerStopped] : [])]);
        const lines = await exportRun(options, summary);
        run = { summary, lines, uiUrl, uiStopsWithCommand: target.startedHere };
      } finally {
        progress?.stop();
        waiting.abort();
      }
      // After the progress bar has finished its line, before the shutdown below.
      options.report(run);
      return run;
    } finally {
      await client.connection.close();
    }
  } finally {
    await renderHost?.stop();
    await host?.stop();
    await target.close();
  }
}
