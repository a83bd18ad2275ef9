/**
 * A crawl worker: registers the crawlSession workflow and the crawl activities on one task
 * queue, with the options that liveness and shutdown depend on. A render worker (`render`
 * set) is the same process shape on the render task queue: it registers `renderBatch` only,
 * no workflows, and owns one Chromium, closed when the worker stops.
 */
import { hostname } from 'node:os';
import { NativeConnection, Worker, type WorkerOptions, type WorkerPlugin } from '@temporalio/worker';
import { createActivities } from '../activities';
import { createRenderActivities } from '../activities/render-batch';
import type { ChromiumRendererOptions } from '../render/chromium-renderer';
import { RobotsCache } from '../fetch/robots';
import { UndiciTransport, type UndiciTransportOptions } from '../fetch/transport';
import type { CrawlMetrics } from '../observability/metrics';
import { StoreRegistry } from '../store/store-registry';
import { prebuiltWorkflowBundle } from './workflow-bundle';
import { openStoreBackend } from '../store/open-store-backend';
import type { StoreBackend } from '../store/store-backend';
import type { StoreConfig } from '../store/store-url';
import { RecordedConfigs } from '../activities/recorded-config';
import { HEARTBEAT_THROTTLE_MS } from '../shared/activity-timing';

export interface CrawlWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** Where crawl stores live: SQLite files under the data dir, or a PostgreSQL URL. */
  store: StoreConfig;
  metrics: CrawlMetrics;
  /** Batch activities run at once by this worker (each is one sequential stream of requests). */
  maxConcurrentBatches?: number;
  identity?: string;
  /** E.g. the OpenTelemetry plugin, for trace propagation. */
  plugins?: WorkerPlugin[];
  /** Makes this a render worker: `maxConcurrentBatches` is then the pages it renders at once. */
  render?: ChromiumRendererOptions;
  /** The fetch transport's resolver and connector; a test seam (see UndiciTransportOptions). */
  network?: WorkerNetwork;
  /**
   * This is the only worker on its task queue (the in-process worker of `crawlflow crawl` on
   * the embedded server): batches start on it straight from the workflow task that ordered them.
   */
  soleWorker?: boolean;
}

/** How a worker's requests resolve names and open sockets: the system's unless a test stubs them. */
export type WorkerNetwork = Pick<UndiciTransportOptions, 'connect' | 'lookup'>;

export interface CrawlWorker {
  worker: Worker;
  workerId: string;
  /** Where this worker's crawl stores live, password redacted. */
  store: string;
  /** Runs until shutdown (SIGINT/SIGTERM or `worker.shutdown()`), then releases resources. */
  run(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 10_000;
/** A render worker's default: each page is a Chromium renderer process of ~100 MB or more. */
const RENDER_PAGES_AT_ONCE = 4;
/** Silence allowed while waiting for headers or body bytes; a crawl's timeoutMs caps the total. */
const IDLE_TIMEOUT_MS = 120_000;

/** The bundle `npm run build` wrote, else bundle the workflows at start-up. */
function workflowCode(): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  const bundle = prebuiltWorkflowBundle();
  return bundle ? { workflowBundle: bundle } : { workflowsPath: require.resolve('../workflows') };
}

export async function createCrawlWorker(options: CrawlWorkerOptions): Promise<CrawlWorker> {
  const workerId = options.identity ?? `${process.pid}@${hostname()}`;
  const backend = await openStoreBackend(options.store);
  try {
    // A server database that cannot be reached (or migrated) stops the worker at startup.
    await backend.check();
    return await createWorkerWith(options, workerId, backend);
  } catch (err) {
    await backend.close();
    throw err;
  }
}

async function createWorkerWith(options: CrawlWorkerOptions, workerId: string, backend: StoreBackend): Promise<CrawlWorker> {
  const stores = new StoreRegistry(backend.open);
  const transport = new UndiciTransport({ connectTimeoutMs: CONNECT_TIMEOUT_MS, idleTimeoutMs: IDLE_TIMEOUT_MS, connectionsPerOrigin: 64, ...options.network });
  const deps = {
    stores,
    crawlExists: (crawlId: string) => backend.has(crawlId),
    transport,
    robots: new RobotsCache(transport, CONNECT_TIMEOUT_MS * 2),
    metrics: options.metrics,
    workerId,
    bodies: backend.bodies,
    configs: new RecordedConfigs(backend.description),
  };
  // Loaded only by a worker that renders: playwright-core is about 50 MB of a worker's memory.
  const renderer =
    options.render &&
    new (await import('../render/chromium-renderer.js')).ChromiumRenderer(transport, {
      ...options.render,
      onBlocked: (blocked) => {
        options.metrics.renderBlocked.inc({ reason: blocked.reason });
        options.render?.onBlocked?.(blocked);
      },
    });
  const activities = renderer ? createRenderActivities(deps, renderer) : createActivities(deps);
  const maxConcurrentBatches = options.maxConcurrentBatches ?? (renderer ? RENDER_PAGES_AT_ONCE : 64);
  const worker = await Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    identity: workerId,
    plugins: options.plugins,
    // A render worker runs no workflows.
    ...(renderer ? {} : workflowCode()),
    activities,
    maxConcurrentActivityTaskExecutions: maxConcurrentBatches,
    // The batches' tickers heartbeat every second; the SDK sends one every 5 s at most. Each
    // heartbeat is a write of the workflow's state on the server, and at one a second per
    // batch they were most of its work (bench/PROFILE.md). A cancelled crawl still aborts its
    // requests within about a second: batches read the workflow's abort order in the store
    // (see activities/batch-ticker.ts).
    maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE_MS,
    defaultHeartbeatThrottleInterval: HEARTBEAT_THROTTLE_MS,
    // On SIGTERM, running batches get this long to finish before they are cancelled.
    shutdownGraceTime: '20s',
    // A crawl's workflow tasks go to the worker that has it cached; if that worker dies, its
    // tasks move to the shared queue after this long. The default (10 s) stalled every crawl
    // the dead worker cached for that long (measured in test/faults-worker-kill.test.ts).
    stickyQueueScheduleToStartTimeout: '2s',
    // Eager dispatch hands batches to the worker running the workflow task. Where other workers
    // share the queue, spreading batches over all pollers keeps one worker's death from taking
    // most of a crawl's batches. A sole worker gets them all anyway: eager dispatch skips the
    // server's matching, which started the 32 batches of one workflow task over 50-250 ms
    // (bench/PROFILE.md), and the server's work to record each start.
    maxEagerActivityReservationsPerWorkflowTask: options.soleWorker ? maxConcurrentBatches : 0,
  });
  return {
    worker,
    workerId,
    store: backend.description,
    run: async () => {
      try {
        await worker.run();
      } finally {
        await renderer?.close();
        await stores.closeAll();
        await backend.close();
        await transport.close();
      }
    },
  };
}
