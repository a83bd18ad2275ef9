/**
 * Does throughput scale with worker processes? One dev server, N `crawlflow worker`
 * processes on one task queue and one data directory, and the crawl started with
 * `crawlflow start`; run for each N on a fresh server and data directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { startDevServer } from '../src/temporal/dev-server';
import { freeServerPort } from '../src/workers/runtime';
import { runCommand } from './installers';
import { checkPageSet, fetchSiteStats, pagesPerSecondOf, resetSiteStats, type PageSetCheck } from './page-set';
import { ProcessMeter, type TreeUsage } from './process-meter';
import type { SiteProcess } from './site-process';
import { CRAWLFLOW_CLI, CRAWLFLOW_CRAWL_ID, crawlflowCrawlFlags, crawlflowEnv, type CrawlJob } from './tools';
import { countHistoryEvents, type HistoryCount } from './crawlflow-history';

export interface WorkerScalingRun {
  workers: number;
  pagesPerSecond: number;
  pageSet: PageSetCheck;
  history: HistoryCount;
  workerUsage: Array<{ cpuSeconds: number; peakRssBytes: number }>;
  temporalUsage: { cpuSeconds: number; peakRssBytes: number };
}

const TASK_QUEUE = 'bench-scaling';
const READY_TIMEOUT_MS = 60_000;

async function waitForPollers(client: Client, count: number): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const { pollers } = await client.workflowService.describeTaskQueue({
      namespace: 'default',
      taskQueue: { name: TASK_QUEUE },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    });
    if (new Set((pollers ?? []).map((poller) => poller.identity)).size >= count) return;
    if (Date.now() > deadline) throw new Error(`${count} workers did not poll ${TASK_QUEUE} within ${READY_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function usageOf(usage: TreeUsage): { cpuSeconds: number; peakRssBytes: number } {
  return { cpuSeconds: usage.cpuSeconds, peakRssBytes: usage.peakRssBytes };
}

export async function runWithWorkers(site: SiteProcess, job: CrawlJob, workers: number): Promise<WorkerScalingRun> {
  const dataDir = join(job.runDir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const port = await freeServerPort();
  const server = await startDevServer({
    port,
    uiPort: await freeServerPort(),
    dbFile: join(dataDir, 'temporal.sqlite'),
    logFile: join(dataDir, 'temporal-server.log'),
    headless: true,
  });
  const serverMeter = new ProcessMeter(server.process.pid ?? 0);
  const env = { ...process.env, ...(await crawlflowEnv(port)) };
  const children: ChildProcess[] = [];
  const meters: ProcessMeter[] = [];
  const connection = await Connection.connect({ address: server.address });
  try {
    for (let i = 0; i < workers; i += 1) {
      const child = spawn(CRAWLFLOW_CLI, ['worker', '--metrics-address', 'off', '--data-dir', dataDir, '--task-queue', TASK_QUEUE], {
        env,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);
      meters.push(new ProcessMeter(child.pid ?? 0));
    }
    const client = new Client({ connection });
    await waitForPollers(client, workers);
    await resetSiteStats(site.origin);
    // The crawl flags name the same data directory (<runDir>/data) the workers use.
    await runCommand(CRAWLFLOW_CLI, ['start', ...crawlflowCrawlFlags(job), '--task-queue', TASK_QUEUE, '--json'], { env });
    await client.workflow.getHandle(CRAWLFLOW_CRAWL_ID).result();
    const pageSet = checkPageSet(await fetchSiteStats(site.origin), site.reachable);
    const history = await countHistoryEvents(server.address, CRAWLFLOW_CRAWL_ID);
    return {
      workers,
      pagesPerSecond: pagesPerSecondOf(pageSet),
      pageSet,
      history,
      workerUsage: meters.map((meter) => usageOf(meter.stop())),
      temporalUsage: usageOf(serverMeter.stop()),
    };
  } finally {
    for (const child of children) {
      if (child.exitCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
    }
    for (const meter of meters) meter.stop();
    serverMeter.stop();
    await connection.close();
    await server.stop();
  }
}
