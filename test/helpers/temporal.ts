/**
 * A real Temporal dev server for a test file (the same `temporal` binary and start-up code
 * the product uses), in-process crawl workers on a fresh task queue, and helpers to run a
 * crawl and read what it recorded.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import { PortInUseError, startDevServer, type DevServer, type DevServerOptions } from '../../src/temporal/dev-server';
import { temporalBinaryPath } from '../../src/temporal/project-paths';
import { CRAWL_WORKFLOW_TYPE } from '../../src/shared/names';
import { createCrawlWorker, type CrawlWorker, type CrawlWorkerOptions } from '../../src/workers/crawl-worker';
import { startWorkerHost, type WorkerHost } from '../../src/workers/worker-host';
import { configureRuntime, freeServerPort } from '../../src/workers/runtime';
import { createLogger } from '../../src/observability/logger';
import { installTracing } from '../../src/observability/tracing';
import { CrawlMetrics } from '../../src/observability/metrics';
import { startCrawl, type CrawlHandle } from '../../src/client/crawl-client';
import { withCrawlStore } from '../../src/results/export-jsonl';
import type { StoreConfig } from '../../src/store/store-url';
import { startTestPostgres, type TestPostgres } from './postgres';
import type { CrawlInput } from '../../src/shared/crawl-config';
import type { CrawlEnd, PageRecord } from '../../src/store/frontier-store';
import type { CrawlSummary } from '../../src/shared/crawl-types';

export interface TestTemporal {
  server: DevServer;
  client: Client;
  dataDir: string;
  /** Where this environment's workers keep crawl stores: `dataDir`, or a PostgreSQL URL. */
  store: StoreConfig;
  /** The PostgreSQL server of a `store: 'postgres'` environment. */
  postgres: TestPostgres | undefined;
  /**
   * The data dir of one more worker process: with SQLite the shared one (workers on one
   * machine share the file); with PostgreSQL a fresh one, so workers share nothing but the
   * database, as on separate machines.
   */
  workerDataDir(): string;
  address: string;
  /** Starts an in-process worker on `taskQueue`; it is stopped by `close()` if not before. */
  startWorker(taskQueue: string, metrics?: CrawlMetrics, network?: CrawlWorkerOptions['network']): Promise<RunningWorker>;
  close(): Promise<void>;
}

export interface RunningWorker {
  worker: CrawlWorker;
  metrics: CrawlMetrics;
  stop(): Promise<void>;
}

/** Routes the SDK's logs through a warn-level logger, so test output stays readable. */
export function quietRuntime(): Promise<unknown> {
  return configureRuntime(createLogger('test-sdk', 'warn'), { sdkMetrics: false });
}

/** The frontier stores integration tests run against: each multi-worker scenario runs on both. */
export const STORE_KINDS = ['sqlite', 'postgres'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

/**
 * A port found free can be taken before the server binds it (an outgoing connection's
 * ephemeral port, another suite on the machine), so a start that lost its port is tried again
 * on others.
 */
async function startDevServerOnFreePorts(options: Omit<DevServerOptions, 'port' | 'uiPort'>): Promise<DevServer> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startDevServer({ ...options, port: await freeServerPort(), uiPort: await freeServerPort() });
    } catch (err) {
      if (!(err instanceof PortInUseError) || attempt === 3) throw err;
    }
  }
}

export async function startTestTemporal(
  options: { dynamicConfig?: Record<string, string | number | boolean>; webUi?: boolean; store?: StoreKind; postgresSettings?: string[] } = {},
): Promise<TestTemporal> {
  await quietRuntime();
  const dataDir = mkdtempSync(join(tmpdir(), 'crawlflow-test-'));
  const postgres = options.store === 'postgres' ? await startTestPostgres({ settings: options.postgresSettings }) : undefined;
  const machineDirs: string[] = [];
  const server = await startDevServerOnFreePorts({
    dbFile: join(dataDir, 'temporal.sqlite'),
    logFile: join(dataDir, 'temporal.log'),
    headless: !options.webUi,
    dynamicConfig: options.dynamicConfig,
  });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const workers: RunningWorker[] = [];
  const store = { dataDir, storeUrl: postgres?.url };
  return {
    server,
    client,
    dataDir,
    store,
    postgres,
    workerDataDir() {
      if (!postgres) return dataDir;
      const dir = mkdtempSync(join(tmpdir(), 'crawlflow-machine-'));
      machineDirs.push(dir);
      return dir;
    },
    address: server.address,
    async startWorker(taskQueue, metrics = new CrawlMetrics(), network) {
      const nativeConnection = await NativeConnection.connect({ address: server.address });
      const worker = await createCrawlWorker({
        connection: nativeConnection,
        namespace: 'default',
        taskQueue,
        store,
        metrics,
        network,
        // The prebuilt workflow bundle carries the tracing interceptors: their sink must be registered.
        plugins: [installTracing(createLogger('test-tracing', 'warn'), 'crawlflow-test').plugin],
      });
      const done = worker.run().finally(() => nativeConnection.close());
      const running: RunningWorker = {
        worker,
        metrics,
        stop: async () => {
          if (worker.worker.getState() === 'RUNNING') worker.worker.shutdown();
          await done;
        },
      };
      workers.push(running);
      return running;
    },
    async close() {
      await Promise.all(workers.map((worker) => worker.stop()));
      await connection.close();
      await server.stop();
      await postgres?.close();
      for (const dir of [dataDir, ...machineDirs]) rmSync(dir, { recursive: true, force: true });
    },
  };
}

let queueCounter = 0;
export function uniqueQueue(prefix: string): string {
  queueCounter += 1;
  return `${prefix}-${process.pid}-${queueCounter}`;
}

/** A crawl's records, from SQLite files under a data dir or from wherever `store` says. */
export async function readRecords(where: string | StoreConfig, crawlId: string): Promise<PageRecord[]> {
  return withCrawlStore(typeof where === 'string' ? { dataDir: where } : where, crawlId, async (store) => {
    const records: PageRecord[] = [];
    for await (const record of store.records()) records.push(record);
    return records;
  });
}

/** How a crawl ended, as its store recorded it, without the time: undefined while no end is recorded. */
export async function readCrawlEnd(where: StoreConfig, crawlId: string): Promise<Omit<CrawlEnd, 'endedAt'> | undefined> {
  const end = await withCrawlStore(where, crawlId, (store) => store.crawlEnd());
  return end && { status: end.status, failure: end.failure };
}

/**
 * Starts a crawl the way an operator does: `temporal workflow start --type crawlSession --input <JSON>`
 * (no `--input` at all for an undefined input).
 */
export async function startWithTemporalCli(env: TestTemporal, taskQueue: string, workflowId: string, input: unknown): Promise<void> {
  await promisify(execFile)(temporalBinaryPath(), [
    'workflow', 'start', '--address', env.address, '--type', CRAWL_WORKFLOW_TYPE, '--task-queue', taskQueue,
    '--workflow-id', workflowId, ...(input === undefined ? [] : ['--input', JSON.stringify(input)]),
  ]);
}

export async function runCrawlToEnd(
  env: TestTemporal,
  taskQueue: string,
  crawlId: string,
  input: CrawlInput,
): Promise<{ summary: CrawlSummary; records: PageRecord[]; handle: CrawlHandle }> {
  const handle = await startCrawl(env.client, crawlId, input, taskQueue);
  const summary = await handle.result();
  return { summary, records: await readRecords(env.store, crawlId), handle };
}

/** The message of the cause the crawl's workflow failed with; the test fails if the workflow did not fail. */
export async function failureCause(handle: { result(): Promise<unknown> }): Promise<string> {
  const failure = await handle.result().then(
    () => assert.fail('the crawl should fail'),
    (err: unknown) => err,
  );
  assert.ok(failure instanceof WorkflowFailedError, String(failure));
  return failure.cause?.message ?? '';
}

/**
 * Deletes the crawl's workflow executions from the server, as its namespace's retention does
 * once they have been closed that long, and waits until the server no longer knows the ID.
 */
export async function forgetWorkflow(env: TestTemporal, crawlId: string): Promise<void> {
  const handle = env.client.workflow.getHandle(crawlId);
  const known = () =>
    handle.describe().then(
      () => true,
      (err: unknown) => {
        if (err instanceof WorkflowNotFoundError) return false;
        throw err;
      },
    );
  // The server deletes in a task of its own, which took 20-35 s on the dev server; each delete
  // takes the latest run, so one is sent again now and then for a crawl that continued as new.
  const deadline = Date.now() + 120_000;
  let deletedAt = 0;
  while (await known()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for the server to delete ${crawlId}`);
    if (Date.now() - deletedAt > 15_000) {
      deletedAt = Date.now();
      await env.client.workflowService.deleteWorkflowExecution({ namespace: 'default', workflowExecution: { workflowId: crawlId } }).catch((err: unknown) => {
        if ((err as { code?: number }).code !== GRPC_NOT_FOUND) throw err;
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** gRPC's NOT_FOUND: the run a delete named was deleted since the describe before it. */
const GRPC_NOT_FOUND = 5;

/** Event type names (EVENT_TYPE_TIMER_STARTED, ...) of this run's history. */
export async function historyEventTypes(handle: CrawlHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).map((event) => temporal.api.enums.v1.EventType[event.eventType ?? 0]);
}

/**
 * A worker host (as `crawlflow worker` runs it) with its /metrics on a free loopback port,
 * SDK metrics included. Call before anything else touches the SDK in the test process.
 */
export async function startMeteredWorkerHost(name: string, taskQueue: string): Promise<{ env: TestTemporal; host: WorkerHost }> {
  await configureRuntime(createLogger(`${name}-sdk`, 'warn'), { sdkMetrics: true });
  const env = await startTestTemporal();
  const host = await startWorkerHost({
    target: { connectionOptions: { address: env.address }, namespace: 'default', embedded: false, uiUrl: undefined, startedHere: false, serverExited: undefined, close: async () => undefined },
    taskQueue,
    store: env.store,
    metricsAddress: `127.0.0.1:${await freeServerPort()}`,
    logger: createLogger(name, 'warn'),
  });
  return { env, host };
}
