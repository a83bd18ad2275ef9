/**
 * Fault injection: the `crawlflow crawl` client process is SIGKILLed right after it started a
 * crawl. Running the same command again reattaches to the same workflow run, exits 0 with the
 * full result, and no page is fetched twice.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { crawlHandle } from '../src/client/crawl-client';
import { startTestTemporal, uniqueQueue, type TestTemporal } from './helpers/temporal';
import { CLI, runCli, spawnWorker, type WorkerProcess } from './helpers/processes';
import { waitFor } from './helpers/fixtures';
import { fetchCounts, reachablePaths, seconds } from './helpers/faults';

describe('faults: client crash after start, CLI reattach', () => {
  let env: TestTemporal;
  let site: SyntheticSite;
  let worker: WorkerProcess | undefined;

  before(async () => {
    env = await startTestTemporal();
    site = await startSyntheticSite({ pages: 1_000, latencyMs: 20 });
  });
  after(async () => {
    await worker?.kill('SIGKILL');
    await site?.close();
    await env?.close();
  });

  it('SIGKILL of `crawlflow crawl`, then the same command: one run, full result, exit 0', async () => {
    const taskQueue = uniqueQueue('faults-client');
    worker = spawnWorker({ address: env.address, taskQueue, dataDir: env.dataDir, logFile: join(env.dataDir, 'worker.log') });
    await worker.ready;
    const cliEnv = { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_TASK_QUEUE: taskQueue, CRAWLFLOW_DATA_DIR: env.dataDir };
    const out = join(env.dataDir, 'client-crash.jsonl');
    const args = ['crawl', site.urlOf(0), '--id', 'faults-client', '--out', out, '--max-depth', '1000', '--per-host-concurrency', '4', '--batch-size', '20'];

    const started = Date.now();
    const client = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...cliEnv }, stdio: ['ignore', 'ignore', 'ignore'] });
    const exited = once(client, 'exit');
    try {
      await waitFor(() => site.requests.length >= 10 || client.exitCode !== null, 60_000, 'the crawl to start fetching');
    } finally {
      client.kill('SIGKILL');
      await exited;
    }
    assert.equal(client.signalCode, 'SIGKILL', 'the client was killed mid-crawl, not finished');
    const killedAt = Date.now();
    const requestsAtKill = site.requests.length;
    const handle = crawlHandle(env.client, 'faults-client');
    const { runId } = await handle.describe();

    const again = await runCli(args, cliEnv, 80_000);
    const total = Date.now() - started;
    assert.equal(again.code, 0, `the second run exits 0 (stderr: ${again.stderr.slice(-2_000)})`);
    const description = await handle.describe();
    assert.equal(description.runId, runId, 'the second command reattached to the same run');
    assert.equal(description.status.name, 'COMPLETED');
    const executions: string[] = [];
    for await (const execution of env.client.workflow.list({ query: `WorkflowId = 'faults-client'` })) executions.push(execution.runId);
    assert.deepEqual(executions, [runId], 'exactly one workflow execution');

    const expected = reachablePaths(site);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((line) => new URL((JSON.parse(line) as { url: string }).url).pathname);
    assert.deepEqual([...lines].sort(), [...expected].sort(), 'the output is every reachable page, each once');
    const counts = fetchCounts(site);
    const twice = [...counts.values()].filter((n) => n > 1).length;
    assert.equal(twice, 0, 'no page fetched twice');
    console.log(
      `client-crash: client SIGKILLed after ${requestsAtKill} requests; reattach exited ${again.code} ${seconds(Date.now() - killedAt)} s later; 1 execution (runId unchanged); pages expected ${expected.size}, in output ${lines.length}, fetched twice ${twice}, lost ${expected.size - new Set(lines).size}; total ${seconds(total)} s`,
    );
  });
});
