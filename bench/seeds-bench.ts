/**
 * `npm run bench:seeds`: the start of a crawl from a 1,000,000-line seed file (`seedsFile`),
 * on the bench site's loopback hosts (1,000 by default, each on a port of its own). The crawl
 * stops after a few pages: the point is the start. It prints and writes to
 * bench/results/seeds.json:
 * - import time: the `importSeeds` activity, from its start to its completion (history times);
 * - time to the first fetch: from the workflow's start to the site's first page request;
 * - the workflow history's size, in events and bytes (JSON), and the start input's bytes;
 * - the worker's RSS: peak, and sampled while the seeds are imported (the worker runs in this
 *   process; the Temporal server and the site are processes of their own).
 *
 *   npm run bench:seeds                           # 1,000,000 seeds on 1,000 hosts
 *   npm run bench:seeds -- --seeds 200000 --hosts 100
 */
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { temporal } from '@temporalio/proto';
import { startCrawl } from '../src/client/crawl-client';
import { CrawlMetrics } from '../src/observability/metrics';
import { startDevServer } from '../src/temporal/dev-server';
import { projectRoot } from '../src/temporal/project-paths';
import { freeServerPort } from '../src/workers/runtime';
import { createCrawlWorker } from '../src/workers/crawl-worker';
import { configureRuntime } from '../src/workers/runtime';
import { createLogger } from '../src/observability/logger';
import { installTracing } from '../src/observability/tracing';
import { fetchSiteStats } from './page-set';
import { startSiteProcess } from './site-process';
import { parseFlags, runBenchCommand, wholeNumber } from './bench-args';

const TASK_QUEUE = 'bench-seeds';
const CRAWL_ID = 'bench-seeds';
const RSS_SAMPLE_MS = 250;
const MB = 1024 * 1024;

export interface SeedStartRun {
  seeds: number;
  hosts: number;
  seedFileBytes: number;
  importSeconds: number;
  firstFetchSeconds: number;
  historyEvents: number;
  historyBytes: number;
  startInputBytes: number;
  pagesFetched: number;
  workerPeakRssMb: number;
  workerRssBeforeMb: number;
}

/** Writes `seeds` URLs, spread round-robin over `origins`, one a line. */
async function writeSeedFile(file: string, origins: readonly string[], seeds: number): Promise<void> {
  const out = createWriteStream(file);
  const perHost = Math.ceil(seeds / origins.length);
  for (let n = 0; n < seeds; n += 1) {
    if (!out.write(`${origins[n % origins.length]}/page/${Math.floor(n / origins.length) % perHost}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

function eventMs(event: temporal.api.history.v1.IHistoryEvent): number {
  return Number(event.eventTime?.seconds ?? 0) * 1000 + Math.floor((event.eventTime?.nanos ?? 0) / 1e6);
}

/** Seconds from the scheduling of the activity of `type` to its completion, read from history. */
function activitySeconds(events: temporal.api.history.v1.IHistoryEvent[], type: string): number {
  const scheduled = events.find((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === type);
  if (!scheduled) throw new Error(`no ${type} activity in history`);
  const completed = events.find((event) => Number(event.activityTaskCompletedEventAttributes?.scheduledEventId ?? -1) === Number(scheduled.eventId));
  if (!completed) throw new Error(`${type} did not complete`);
  return (eventMs(completed) - eventMs(scheduled)) / 1000;
}

async function measure(seeds: number, hosts: number, maxPages: number, workDir: string): Promise<SeedStartRun> {
  const logger = createLogger('bench-seeds', 'warn');
  await configureRuntime(logger, { sdkMetrics: false });
  const site = await startSiteProcess(hosts * Math.ceil(seeds / hosts), hosts);
  const server = await startDevServer({ port: await freeServerPort(), uiPort: await freeServerPort(), dbFile: join(workDir, 'temporal.sqlite'), logFile: join(workDir, 'temporal.log'), headless: true });
  const connection = await NativeConnection.connect({ address: server.address });
  const client = new Client({ connection: await Connection.connect({ address: server.address }) });
  const worker = await createCrawlWorker({ connection, namespace: 'default', taskQueue: TASK_QUEUE, store: { dataDir: join(workDir, 'data') }, metrics: new CrawlMetrics(),
    // The prebuilt workflow bundle carries the tracing interceptors: their sink must be registered.
    plugins: [installTracing(logger, 'crawlflow-bench').plugin],
  });
  const running = worker.run();
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), RSS_SAMPLE_MS);
  try {
    const seedsFile = join(workDir, 'seeds.txt');
    await writeSeedFile(seedsFile, site.origins, seeds);
    const rssBefore = process.memoryUsage.rss();
    const input = { seedsFile, maxPages, maxDepth: 0, allowPrivateNetwork: true, respectRobots: false, concurrency: 8, batchSize: 50 };
    const startedAt = Date.now();
    const handle = await startCrawl(client, CRAWL_ID, input, TASK_QUEUE);
    const summary = await handle.result();
    const stats = await fetchSiteStats(site.origin);
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    return {
      seeds,
      hosts,
      seedFileBytes: statSync(seedsFile).size,
      importSeconds: activitySeconds(events, 'importSeeds'),
      firstFetchSeconds: stats.firstRequestAt === null ? Number.NaN : (stats.firstRequestAt - startedAt) / 1000,
      historyEvents: events.length,
      historyBytes: Buffer.byteLength(JSON.stringify(history)),
      startInputBytes: Buffer.byteLength(JSON.stringify(events[0]?.workflowExecutionStartedEventAttributes?.input ?? null)),
      pagesFetched: summary.totals.fetched,
      workerPeakRssMb: Math.max(peakRss, process.memoryUsage.rss()) / MB,
      workerRssBeforeMb: rssBefore / MB,
    };
  } finally {
    clearInterval(sampler);
    worker.worker.shutdown();
    await running;
    await connection.close();
    await client.connection.close();
    await server.stop();
    await site.stop();
  }
}

export function describeSeedStart(run: SeedStartRun): string {
  return [
    `${run.seeds.toLocaleString('en')}-seed start (${run.hosts} hosts, seed file ${(run.seedFileBytes / MB).toFixed(1)} MB):`,
    `  import ${run.importSeconds.toFixed(1)} s (${Math.round(run.seeds / run.importSeconds).toLocaleString('en')} seeds/s) | first fetch after ${run.firstFetchSeconds.toFixed(1)} s`,
    `  history ${run.historyEvents} events, ${(run.historyBytes / 1024).toFixed(1)} KiB (start input ${run.startInputBytes} bytes) | ${run.pagesFetched} pages fetched`,
    `  worker RSS ${run.workerRssBeforeMb.toFixed(0)} MB before, ${run.workerPeakRssMb.toFixed(0)} MB peak`,
  ].join('\n');
}

const USAGE = `usage: node dist/bench/seeds-bench.js [--seeds N] [--hosts N] [--max-pages N]   (npm run bench:seeds -- [options])
  --seeds N       lines of the seed file (default 1000000)
  --hosts N       hosts the seeds are spread over (default 1000)
  --max-pages N   the crawl's page limit: it measures the start, not the crawl (default 200)
`;

async function main(): Promise<void> {
  const { values } = parseFlags({
    options: { seeds: { type: 'string', default: '1000000' }, hosts: { type: 'string', default: '1000' }, 'max-pages': { type: 'string', default: '200' } },
  });
  const [seeds, hosts, maxPages] = [wholeNumber('--seeds', values.seeds), wholeNumber('--hosts', values.hosts), wholeNumber('--max-pages', values['max-pages'])];
  const workDir = mkdtempSync(join(tmpdir(), 'crawlflow-bench-seeds-'));
  try {
    const run = await measure(seeds, hosts, maxPages, workDir);
    console.log(describeSeedStart(run));
    const resultsDir = join(projectRoot, 'bench', 'results');
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(join(resultsDir, 'seeds.json'), `${JSON.stringify({ recordedAt: new Date().toISOString(), ...run }, null, 2)}\n`);
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

if (require.main === module) runBenchCommand(main, USAGE);
