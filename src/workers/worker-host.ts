/**
 * Everything one worker process runs besides the worker itself: the SDK runtime, the
 * loopback metrics endpoint and the connection. Used by `crawlflow worker` and by the
 * in-process worker of `crawlflow crawl`.
 */
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Logger } from '../observability/logger';
import { CrawlMetrics } from '../observability/metrics';
import { serveMetrics, type MetricsEndpoint } from '../observability/metrics-server';
import { TaskQueueBacklog } from '../observability/task-queue-backlog';
import type { StoreConfig } from '../store/store-url';
import { connecting, type TemporalTarget } from '../temporal/target';
import { ensureSearchAttributes } from '../temporal/search-attributes-setup';
import { installTracing } from '../observability/tracing';
import { createCrawlWorker, type CrawlWorker } from './crawl-worker';
import type { ChromiumRendererOptions } from '../render/chromium-renderer';
import { configureRuntime } from './runtime';

export interface WorkerHostOptions {
  target: TemporalTarget;
  taskQueue: string;
  store: StoreConfig;
  /** host:port for /metrics (loopback by default), or null for none. */
  metricsAddress: string | null;
  maxConcurrentBatches?: number;
  logger: Logger;
  /** Run a render worker (renderBatch only, one Chromium) instead of a crawl worker. */
  render?: ChromiumRendererOptions;
  /** The only worker on its task queue (see CrawlWorkerOptions.soleWorker). */
  soleWorker?: boolean;
}

export interface WorkerHost {
  workerId: string;
  /** Where the worker's crawl stores live, password redacted. */
  store: string;
  metricsUrl: string | undefined;
  /** Settles when the worker has stopped (after `stop()` or a shutdown signal). */
  done: Promise<void>;
  stop(): Promise<void>;
}

/** Crawls index themselves with search attributes: register them, or say clearly why we could not. */
async function registerSearchAttributes(options: WorkerHostOptions): Promise<void> {
  const connection = await connecting(options.target.connectionOptions, (connectionOptions) => Connection.connect(connectionOptions));
  try {
    const added = await ensureSearchAttributes(connection, options.target.namespace);
    if (added.length > 0) options.logger.info({ added }, 'registered crawl search attributes');
  } catch (err) {
    options.logger.warn(
      { err: (err as Error).message },
      'could not register crawl search attributes; crawls will fail their workflow tasks until an operator registers them (see docs/troubleshooting.md)',
    );
  } finally {
    await connection.close();
  }
}

export async function startWorkerHost(options: WorkerHostOptions): Promise<WorkerHost> {
  await registerSearchAttributes(options);
  const { sdkMetricsUrl } = await configureRuntime(options.logger, { sdkMetrics: options.metricsAddress !== null });
  const metrics = new CrawlMetrics();
  // What start-up has opened, closed again if a later step fails (a store that cannot be
  // reached): a listening endpoint or an open connection would keep the process alive, and
  // with no worker to stop, SIGTERM would not end it either.
  const opened: Array<() => Promise<void>> = [];
  try {
    const endpoint = options.metricsAddress === null ? undefined : await serveMetrics(metrics.registry, options.metricsAddress, sdkMetricsUrl);
    if (endpoint) opened.push(() => endpoint.close());
    const connection = await connecting(options.target.connectionOptions, (connectionOptions) => NativeConnection.connect(connectionOptions));
    opened.push(() => connection.close());
    const crawlWorker = await createCrawlWorker({
      connection,
      namespace: options.target.namespace,
      taskQueue: options.taskQueue,
      store: options.store,
      metrics,
      maxConcurrentBatches: options.maxConcurrentBatches,
      render: options.render,
      soleWorker: options.soleWorker,
      plugins: [installTracing(options.logger, 'crawlflow-worker').plugin],
    });
    return runningHost(options, metrics, crawlWorker, connection, endpoint);
  } catch (err) {
    for (const close of opened.reverse()) await close();
    throw err;
  }
}

/** The started worker, with its backlog gauge; its connection and endpoint close when it stops. */
function runningHost(
  options: WorkerHostOptions,
  metrics: CrawlMetrics,
  crawlWorker: CrawlWorker,
  connection: NativeConnection,
  endpoint: MetricsEndpoint | undefined,
): WorkerHost {
  // The server's view of this queue's backlog (temporal_task_queue_backlog_*), on the same
  // /metrics; only when metrics are served. start() never rejects and its timer is unref'd.
  const backlog =
    endpoint === undefined
      ? undefined
      : new TaskQueueBacklog({ service: connection, namespace: options.target.namespace, taskQueue: options.taskQueue, registry: metrics.registry, logger: options.logger });
  void backlog?.start();
  const done = crawlWorker.run().finally(async () => {
    await backlog?.stop();
    await endpoint?.close();
    await connection.close();
  });
  return {
    workerId: crawlWorker.workerId,
    store: crawlWorker.store,
    metricsUrl: endpoint?.url,
    done,
    stop: async () => {
      if (crawlWorker.worker.getState() === 'RUNNING') crawlWorker.worker.shutdown();
      await done;
    },
  };
}
