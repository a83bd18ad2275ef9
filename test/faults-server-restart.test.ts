/**
 * Fault injection: the Temporal server (dev server, persistent SQLite file) is stopped in the
 * middle of a crawl for a minute, then started again on the same port and database: six
 * heartbeat timeouts, what the product promises to ride out. The worker process reconnects by
 * itself and the crawl completes with every page exactly once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { PortInUseError, startDevServer, type DevServer } from '../src/temporal/dev-server';
import { freeServerPort } from '../src/workers/runtime';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { startCrawl } from '../src/client/crawl-client';
import { readRecords } from './helpers/temporal';
import { spawnWorker, type WorkerProcess } from './helpers/processes';
import { sleep, sortedPaths, waitFor } from './helpers/fixtures';
import { batchOutcomes, fetchCounts, reachablePaths, recordStats, retrying, seconds } from './helpers/faults';

/** Batches in flight, each fetching one page at a time: what a fault can catch mid-page. */
const CONCURRENCY = 4;
/** How long the server stays down. */
const DOWNTIME_MS = 60_000;

describe('faults: Temporal server restart mid-crawl', () => {
  let dir: string;
  let site: SyntheticSite;
  let server: DevServer | undefined;
  let worker: WorkerProcess | undefined;
  let connection: Connection | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'crawlflow-faults-restart-'));
    site = await startSyntheticSite({ pages: 2_000, latencyMs: 20 });
  });
  after(async () => {
    await worker?.kill('SIGKILL');
    await connection?.close().catch(() => undefined);
    await server?.stop();
    await site?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the crawl survives the server stopped for a minute and started again on the same port and db file', async () => {
    const port = await freeServerPort();
    const uiPort = await freeServerPort();
    const serverOptions = { port, uiPort, dbFile: join(dir, 'temporal.sqlite'), logFile: join(dir, 'temporal.log'), headless: true };
    server = await startDevServer(serverOptions);
    const logFile = join(dir, 'worker.log');
    const taskQueue = 'faults-restart';
    worker = spawnWorker({ address: server.address, taskQueue, dataDir: dir, logFile });
    await worker.ready;
    let workerExit: string | undefined;
    worker.child.once('exit', (code, signal) => (workerExit = `code ${code} signal ${signal}`));

    connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection });
    const started = Date.now();
    const handle = await startCrawl(client, 'faults-restart', { seeds: [site.urlOf(0)], concurrency: CONCURRENCY, perHostConcurrency: CONCURRENCY, batchSize: 20, maxDepth: 1_000 }, taskQueue);
    const { runId } = await handle.describe();

    await waitFor(() => site.requests.length >= 400, 60_000, '400 requests');
    const stopAt = Date.now();
    const requestsAtStop = site.requests.length;
    await server.stop();
    const stoppedIn = Date.now() - stopAt;
    await sleep(DOWNTIME_MS);
    const requestsWhileDown = site.requests.length - requestsAtStop;
    server = await startDevServer(serverOptions);
    const upAt = Date.now();
    const downtime = upAt - stopAt;

    // The worker must not die: it reconnects by itself.
    await waitFor(() => site.requests.length > requestsAtStop + requestsWhileDown || workerExit !== undefined, 60_000, 'a request after the restart');
    if (workerExit !== undefined) {
      assert.fail(`PRODUCT BUG: the worker process exited (${workerExit}) when the server went away; log:\n${readFileSync(logFile, 'utf8').slice(-4_000)}`);
    }
    const firstRequestAfterRestart = site.requests.find((request) => request.startedAt >= upAt)?.startedAt ?? NaN;

    const handleAfter = client.workflow.getHandle(handle.workflowId);
    const summary = (await retrying(() => handleAfter.result(), 120_000, 'crawl result')) as { status: string };
    const total = Date.now() - started;
    assert.equal(summary.status, 'completed');
    assert.equal(workerExit, undefined, 'the worker process stayed up');
    assert.equal((await handleAfter.describe()).runId, runId, 'the same workflow run finished the crawl (no restart from scratch)');

    const expected = reachablePaths(site);
    const records = await readRecords(dir, 'faults-restart');
    const stats = recordStats(records, expected);
    assert.deepEqual(sortedPaths(records.map((record) => record.url)), [...expected].sort(), 'the records are exactly the reachable pages, each once');
    const counts = fetchCounts(site);
    const refetched = [...counts.values()].filter((n) => n > 1).length;
    const { outcomes, eventTypes } = await batchOutcomes(handle);
    const retried = outcomes.filter((outcome) => outcome.attempt > 1).length;
    assert.ok(!eventTypes.some((type) => /ACTIVITY_TASK_(FAILED|TIMED_OUT)/.test(type)), 'no batch failed for good');
    // Only work in flight when the server went away may be redone: at most one batch per
    // slot retried, and at most the one page each of them was fetching fetched again.
    assert.ok(retried <= CONCURRENCY, `at most ${CONCURRENCY} batches retried (${retried})`);
    assert.ok(refetched <= CONCURRENCY, `at most ${CONCURRENCY} pages fetched twice (${refetched})`);
    assert.ok(Math.max(...counts.values()) <= 2, 'no page fetched more than twice');
    console.log(
      `server-restart: pages expected ${expected.size}, recorded ${stats.recorded}, lost ${stats.lost}, duplicated ${stats.duplicated}; ${refetched} pages fetched twice, ${retried} batches retried; ` +
        `server stop took ${seconds(stoppedIn)} s, downtime ${seconds(downtime)} s, ${requestsWhileDown} site requests while down, first request ${seconds(firstRequestAfterRestart - upAt)} s after the server was back; total ${seconds(total)} s`,
    );
  });
});

describe('dev server start on a port another process holds', () => {
  it('fails with PortInUseError (which the test helpers answer by trying other ports)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlflow-port-taken-'));
    // It hangs up on whoever connects: an open connection would keep this process alive.
    const holder = createServer((socket) => socket.destroy());
    holder.listen(0, '127.0.0.1');
    await once(holder, 'listening');
    try {
      const port = (holder.address() as AddressInfo).port;
      const options = { port, uiPort: await freeServerPort(), dbFile: join(dir, 'temporal.sqlite'), logFile: join(dir, 'temporal.log'), headless: true };
      await assert.rejects(startDevServer(options), (err: Error) => err instanceof PortInUseError && err.message.includes(options.logFile));
    } finally {
      holder.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
