/**
 * Rendering end to end, through a real Temporal dev server: a crawl with `render` set, a fetch
 * worker on the crawl's task queue and a separate render worker (one Chromium) on the render
 * task queue. JavaScript-built links are discovered and their pages crawled; pages that do
 * not match `render.match` are never rendered (their scripts are never requested); every
 * render batch was scheduled on the render queue and run by the render worker; off-site
 * subrequests were refused; with the SQLite store and with PostgreSQL (the render worker on
 * a data dir of its own, as on another machine). Then the same with `crawlflow worker` and `crawlflow
 * render-worker` processes and a crawl started by `temporal workflow start --input`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import type { temporal } from '@temporalio/proto';
import { crawlHandle } from '../src/client/crawl-client';
import { CrawlMetrics } from '../src/observability/metrics';
import type { BlockedRequest } from '../src/render/chromium-renderer';
import type { SyntheticSite } from '../src/sites/synthetic-site';
import { createCrawlWorker } from '../src/workers/crawl-worker';
import { itRejectsEach, type UsageCase } from './helpers/usage-errors';
import { embeddedServerEnv, runCli, spawnWorker, type WorkerProcess } from './helpers/processes';
import { readRecords, runCrawlToEnd, startTestTemporal, startWithTemporalCli, STORE_KINDS, type TestTemporal, uniqueQueue } from './helpers/temporal';
import { OFFSITE, RENDER_MATCH, requestsOf, startJsSite } from './helpers/js-site';

/** Every page of the fixture a correct crawl reaches from `/`, JavaScript-built links included. */
const REACHABLE = ['/', '/app/', '/static/', '/plain/1', '/app/item/1', '/app/item/2', '/plain/3', '/plain/item-1', '/plain/item-2'];

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Activity type and task queue of every scheduled activity, and who ran it (the started event's identity). */
function scheduledActivities(events: HistoryEvent[]): Array<{ type: string; taskQueue: string; identity: string | undefined }> {
  const identities = new Map<string, string>();
  for (const event of events) {
    const started = event.activityTaskStartedEventAttributes;
    if (started) identities.set(String(started.scheduledEventId), started.identity ?? '');
  }
  return events.flatMap((event) => {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (!scheduled) return [];
    return [{ type: scheduled.activityType?.name ?? '', taskQueue: scheduled.taskQueue?.name ?? '', identity: identities.get(String(event.eventId)) }];
  });
}

/** The most activities of these types ever scheduled and not yet closed at once, from the history's event order. */
function maxInFlight(events: HistoryEvent[], ...types: string[]): number {
  const open = new Set<string>();
  let most = 0;
  for (const event of events) {
    if (types.includes(event.activityTaskScheduledEventAttributes?.activityType?.name ?? '')) open.add(String(event.eventId));
    const closed =
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes ??
      event.activityTaskTimedOutEventAttributes ??
      event.activityTaskCanceledEventAttributes;
    if (closed) open.delete(String(closed.scheduledEventId));
    most = Math.max(most, open.size);
  }
  return most;
}

function assertCrawledOnce(site: SyntheticSite, urls: string[]): void {
  assert.deepEqual([...urls].sort(), REACHABLE.map((path) => site.origin + path).sort(), 'every reachable page, JavaScript-built links included');
  for (const path of REACHABLE) assert.equal(requestsOf(site, path), 1, `${path} requested once`);
  assert.equal(requestsOf(site, '/js/app.js'), 1, '/app/ was rendered once');
  assert.equal(requestsOf(site, '/js/static.js'), 0, 'a page outside render.match is never rendered');
  assert.equal(requestsOf(site, '/beacon/static'), 0);
  assert.equal(requestsOf(site, '/static/js-only'), 0);
}

for (const storeKind of STORE_KINDS) {
describe(`rendering through Temporal: a fetch worker and a render worker (${storeKind} store)`, () => {
  let env: TestTemporal;
  let site: SyntheticSite;
  const fetchQueue = uniqueQueue('render-fetch');
  const renderQueue = uniqueQueue('render-pages');
  const blocked: BlockedRequest[] = [];
  const renderMetrics = new CrawlMetrics();
  let stopRenderWorker: () => Promise<void>;

  before(async () => {
    env = await startTestTemporal({ store: storeKind });
    await env.startWorker(fetchQueue);
    const connection = await NativeConnection.connect({ address: env.address });
    const renderWorker = await createCrawlWorker({
      connection,
      namespace: 'default',
      taskQueue: renderQueue,
      // With PostgreSQL, a data dir of its own: the render worker shares only the database, as on another machine.
      store: { dataDir: env.workerDataDir(), storeUrl: env.store.storeUrl },
      metrics: renderMetrics,
      identity: 'render-worker-under-test',
      render: { onBlocked: (request) => blocked.push(request) },
    });
    const done = renderWorker.run().finally(() => connection.close());
    stopRenderWorker = async () => {
      if (renderWorker.worker.getState() === 'RUNNING') renderWorker.worker.shutdown();
      await done;
    };
    site = await startJsSite();
  });
  after(async () => {
    await stopRenderWorker?.();
    await site?.close();
    await env?.close();
  });

  it('discovers JavaScript-built links, renders only matching pages, on the render queue, and blocks off-site requests', async () => {
    const { summary, records, handle } = await runCrawlToEnd(env, fetchQueue, 'render-e2e', {
      seeds: [`${site.origin}/`],
      // One URL per batch, so the two /app/item pages could render at once but for the cap.
      batchSize: 1,
      perHostConcurrency: 4,
      render: { match: [RENDER_MATCH], taskQueue: renderQueue, maxConcurrentPages: 1 },
    });
    assert.equal(summary.status, 'completed');
    assert.equal(summary.totals.errors, 0);
    assertCrawledOnce(site, records.map((record) => record.url));
    const app = records.find((record) => record.url === `${site.origin}/app/`);
    assert.equal(app?.title, 'App (rendered)');

    const events = (await handle.fetchHistory()).events ?? [];
    const activities = scheduledActivities(events);
    const renders = activities.filter((activity) => activity.type === 'browserBatch');
    const fetches = activities.filter((activity) => activity.type === 'fetchBatch');
    assert.ok(renders.length >= 3, 'a render batch per rendered page (/app/ and its two items) at least');
    assert.ok(fetches.length >= REACHABLE.length - 3);
    assert.equal(maxInFlight(events, 'browserBatch'), 1, 'render.maxConcurrentPages caps render batches in flight');
    assert.ok(maxInFlight(events, 'browserBatch', 'fetchBatch') <= 4, 'perHostConcurrency counts both kinds of batch');
    for (const activity of renders) {
      assert.equal(activity.taskQueue, renderQueue, 'render batches are scheduled on the render task queue');
      assert.equal(activity.identity, 'render-worker-under-test', 'and run by the render worker');
    }
    for (const activity of fetches) assert.equal(activity.taskQueue, fetchQueue);

    const offsite = new Set(blocked.filter((request) => request.reason === 'out-of-scope').map((request) => request.url));
    for (const url of [OFFSITE.script, OFFSITE.image, OFFSITE.fetch]) assert.ok(offsite.has(url), `${url} was refused`);
    assert.ok(blocked.some((request) => request.url === OFFSITE.webSocket && request.reason === 'websocket'));
    const counted = await renderMetrics.renderBlocked.get();
    assert.equal(counted.values.find((value) => value.labels.reason === 'out-of-scope')?.value, offsite.size, 'the render worker counts refusals');
  });
});
}

/** A `crawlflow render-worker` process; resolves once it polls. */
describe('rendering with worker processes and `temporal workflow start --input`', () => {
  let env: TestTemporal;
  let site: SyntheticSite;
  let fetchWorker: WorkerProcess;
  let renderWorker: WorkerProcess;
  const fetchQueue = uniqueQueue('render-cli-fetch');
  const renderQueue = uniqueQueue('render-cli-pages');

  before(async () => {
    env = await startTestTemporal();
    fetchWorker = spawnWorker({ address: env.address, taskQueue: fetchQueue, dataDir: env.dataDir, logFile: `${env.dataDir}/worker.log` });
    renderWorker = spawnWorker({ command: 'render-worker', address: env.address, taskQueue: renderQueue, dataDir: env.dataDir, logFile: `${env.dataDir}/render-worker.log` });
    await Promise.all([fetchWorker.ready, renderWorker.ready]);
    site = await startJsSite();
  });
  after(async () => {
    await fetchWorker?.kill('SIGTERM');
    await renderWorker?.kill('SIGTERM');
    await site?.close();
    await env?.close();
  });

  it('crawls a rendering config given as workflow input', async () => {
    const input = { seeds: [`${site.origin}/`], render: { match: [RENDER_MATCH], taskQueue: renderQueue, waitUntil: 'networkidle' } };
    await startWithTemporalCli(env, fetchQueue, 'render-cli', input);
    const summary = await crawlHandle(env.client, 'render-cli').result();
    assert.equal(summary.status, 'completed');
    assertCrawledOnce(site, (await readRecords(env.dataDir, 'render-cli')).map((record) => record.url));
  });
});

describe('rendering in the quick start (`crawlflow crawl` with the embedded dev server)', () => {
  let site: SyntheticSite;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    site = await startJsSite();
    dataDir = mkdtempSync(join(tmpdir(), 'crawlflow-render-cli-'));
    env = await embeddedServerEnv(dataDir);
  });
  after(async () => {
    await site?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs a render worker in-process when the crawl renders', async () => {
    const out = join(dataDir, 'render.jsonl');
    const run = await runCli(['crawl', `${site.origin}/`, '--render', RENDER_MATCH, '--render-wait-until', 'domcontentloaded', '--out', out, '--id', 'render-quick', '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    const urls = readFileSync(out, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { url: string }).url);
    assertCrawledOnce(site, urls);
  });

});

describe('invalid render settings', { concurrency: 4 }, () => {
  const crawl = (...flags: string[]) => ['crawl', 'http://127.0.0.1:9/', ...flags];
  const cases: UsageCase[] = [
    ['a pattern that is not a regular expression', crawl('--render', 're:['), /^crawlflow: --render: "re:\[": invalid regular expression/],
    ['a glob that is not anchored', crawl('--render', 'app/**'), /^crawlflow: --render: "app\/\*\*": a glob must start with \//],
    ['an unknown wait event', crawl('--render', RENDER_MATCH, '--render-wait-until', 'idle'), /^crawlflow: --render-wait-until: /],
    ['render settings without a pattern', crawl('--render-timeout-ms', '5000'), /^crawlflow: --render: needs at least one URL pattern/],
    ['a render timeout under a second', crawl('--render', RENDER_MATCH, '--render-timeout-ms', '10'), /^crawlflow: --render-timeout-ms: /],
  ];
  // Nothing listens on port 1: a command that tried to start a workflow would fail differently.
  itRejectsEach(cases, { TEMPORAL_ADDRESS: '127.0.0.1:1' });
});
