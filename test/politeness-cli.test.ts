/**
 * Politeness and request settings from the command line: `temporal workflow start --input`
 * with per-host overrides, AutoThrottle, backoff and secrets named by environment variable,
 * run by a `crawlflow worker` process; the secret reaches the site, but neither the workflow
 * history nor the worker's log. (Bad flags: cli.test.ts.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnWorker, type WorkerProcess } from './helpers/processes';
import { startTestTemporal, startWithTemporalCli, type TestTemporal, uniqueQueue } from './helpers/temporal';
import { page, startGaps, startRecordingSite, type RecordingSite } from './helpers/recording-site';
import type { CrawlSummary } from '../src/shared/crawl-types';

/** A history as JSON, its payloads (base64 `data` fields) decoded, so a search sees what the workflow got. */
function decodedJson(value: unknown): string {
  return JSON.stringify(value, (key, field: unknown) => (key === 'data' && typeof field === 'string' ? Buffer.from(field, 'base64').toString('utf8') : field));
}

const SECRET = 'tok-7f3a9c-secret';

describe('`temporal workflow start --input` with politeness and request settings', () => {
  let env: TestTemporal;
  let worker: WorkerProcess;
  let site: RecordingSite;
  let logFile: string;
  const taskQueue = uniqueQueue('politeness-cli');
  before(async () => {
    env = await startTestTemporal();
    logFile = join(env.dataDir, 'worker.log');
    // The worker process inherits the variable; the crawl input only names it.
    process.env.CRAWL_TEST_TOKEN = SECRET;
    worker = spawnWorker({ address: env.address, taskQueue, dataDir: env.dataDir, logFile });
    await worker.ready;
    const list = ['/a', '/b', '/c', '/d'];
    site = await startRecordingSite({ '/': (_req, res) => page(res, list), ...Object.fromEntries(list.map((path) => [path, (_req, res) => page(res)])) });
  });
  after(async () => {
    await worker?.kill('SIGTERM');
    await site?.close();
    await env?.close();
  });

  it('applies the host override (delay, headers from the environment) and keeps the secret out of history and logs', async () => {
    const input = {
      seeds: [`${site.origin}/`],
      autoThrottle: { enabled: true, startDelayMs: 0 },
      backoff: { baseMs: 200, maxMs: 2_000 },
      cookies: { lang: 'en' },
      hosts: { [site.host]: { delayMs: 250, userAgent: 'cli-bot/1', headersFromEnv: { 'X-Api-Token': 'CRAWL_TEST_TOKEN' } } },
    };
    await startWithTemporalCli(env, taskQueue, 'politeness-from-cli', input);
    const handle = env.client.workflow.getHandle('politeness-from-cli');
    const summary = (await handle.result()) as CrawlSummary;
    assert.equal(summary.status, 'completed');
    assert.equal(summary.totals.fetched, 5);
    const pages = site.pages();
    assert.equal(pages.length, 5);
    for (const request of site.requests) {
      assert.equal(request.headers['x-api-token'], SECRET, request.path);
      assert.equal(request.headers['user-agent'], 'cli-bot/1');
      assert.equal(request.headers.cookie, 'lang=en');
    }
    const gaps = startGaps(pages).sort((x, y) => x - y);
    // Slots are reserved 250 ms apart when requests are sent; a request that first opens a new
    // connection on a busy machine arrives late, which shortens the gap the server sees after it.
    assert.ok(gaps[0] >= 180 && gaps[Math.floor(gaps.length / 2)] >= 245, `the host's delay of 250 ms holds (gaps ${gaps} ms)`);

    const history = decodedJson(await handle.fetchHistory());
    assert.ok(history.includes('CRAWL_TEST_TOKEN'), 'history names the variable');
    assert.ok(!history.includes(SECRET), 'but never holds its value');
    assert.ok(!readFileSync(logFile, 'utf8').includes(SECRET), 'nor does the worker log');
  });
});
