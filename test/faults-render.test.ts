/**
 * Fault injection in rendering, through a real crawl: `crawlSession` on a real Temporal dev
 * server, an in-process fetch worker and a `crawlflow render-worker` process (its Chromium is
 * that process's child, so the test can find and kill it). Each crawl's records are compared
 * as the exact page set: every page once, none lost, none extra.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { startCrawl } from '../src/client/crawl-client';
import { startSyntheticSite, type RouteHandler, type SyntheticSite } from '../src/sites/synthetic-site';
import { readRecords, startTestTemporal, uniqueQueue, type TestTemporal } from './helpers/temporal';
import { spawnWorker, type WorkerProcess } from './helpers/processes';
import { sortedPaths, waitFor } from './helpers/fixtures';
import { batchOutcomes } from './helpers/faults';
import { requestsOf } from './helpers/js-site';

function page(title: string, body: string): RouteHandler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`);
  };
}

/** An inline script that marks the page as rendered: only a browser changes the title. */
const RENDERED = `<script>document.title += ' (rendered)'</script>`;
const KILL_PAGES = ['/app/k0', '/app/k1', '/app/k2'];
const PLAIN_PAGES = ['/plain/k0', '/plain/k1'];

/**
 * /kill/ (fetched only) links to three rendered pages, two plain ones and /app/hold. The first
 * request of /app/hold's script is never answered, so its render is held open until the test
 * kills the browser; later requests get the script. Its static link to /app/after is in the
 * DOM only if the page is rendered, and /app/after is rendered by whichever browser is alive.
 */
function killRoutes(held: ServerResponse[]): Record<string, RouteHandler> {
  return {
    '/kill/': page('Kill', [...KILL_PAGES, ...PLAIN_PAGES, '/app/hold'].map((path) => `<a href="${path}">${path}</a>`).join(' ')),
    ...Object.fromEntries(KILL_PAGES.map((path) => [path, page(path, RENDERED)])),
    ...Object.fromEntries(PLAIN_PAGES.map((path) => [path, page(path, 'plain')])),
    '/app/hold': page('Hold', `<a href="/app/after">after</a><script src="/js/hold.js"></script>${RENDERED}`),
    '/js/hold.js': (_req, res) => {
      if (held.length === 0) held.push(res);
      else res.writeHead(200, { 'content-type': 'application/javascript' }).end('document.body.dataset.held = "done";');
    },
    '/app/after': page('After', RENDERED),
  };
}

/** /timeout/ links to a rendered page, a plain one and /app/never, whose script is never answered: its load event never comes. */
const TIMEOUT_ROUTES: Record<string, RouteHandler> = {
  '/timeout/': page('Timeout', ['/app/t0', '/plain/t0', '/app/never'].map((path) => `<a href="${path}">${path}</a>`).join(' ')),
  '/app/t0': page('/app/t0', RENDERED),
  '/plain/t0': page('/plain/t0', 'plain'),
  '/app/never': page('Never', `<a href="/app/never-linked">unreached</a><script src="/js/never.js"></script>${RENDERED}`),
  '/js/never.js': () => undefined,
};

/** PIDs of the browser processes `pid` launched (Debian's wrapper script execs the real binary). */
function browsersOf(pid: number): number[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when there are no children
  }
  return out
    .split('\n')
    .filter((line) => /chromium/.test(line) && !/--type=/.test(line))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

describe('faults in rendering: the browser killed, the render timeout', () => {
  let env: TestTemporal;
  let site: SyntheticSite;
  let renderWorker: WorkerProcess;
  const held: ServerResponse[] = [];
  const fetchQueue = uniqueQueue('faults-render-fetch');
  const renderQueue = uniqueQueue('faults-render-pages');

  before(async () => {
    env = await startTestTemporal();
    site = await startSyntheticSite({ pages: 1, routes: { ...killRoutes(held), ...TIMEOUT_ROUTES } });
    await env.startWorker(fetchQueue);
    renderWorker = spawnWorker({ command: 'render-worker', address: env.address, taskQueue: renderQueue, dataDir: env.dataDir, logFile: join(env.dataDir, 'render-worker.log') });
    await renderWorker.ready;
  });
  after(async () => {
    for (const res of held) res.destroy();
    await renderWorker?.kill('SIGTERM');
    await site?.close();
    await env?.close();
  });

  it('Chromium SIGKILLed mid-render: the batch is retried, the page rendered by a new browser, every page once', async () => {
    const started = Date.now();
    const handle = await startCrawl(
      env.client,
      'render-kill',
      {
        seeds: [`${site.origin}/kill/`],
        batchSize: 1,
        perHostConcurrency: 2,
        maxRetries: 0,
        render: { match: ['/app/**'], taskQueue: renderQueue, maxConcurrentPages: 1 },
      },
      fetchQueue,
    );
    await waitFor(() => held.length === 1, 30_000, '/app/hold to request its script');
    const [browser] = browsersOf(renderWorker.child.pid!);
    assert.ok(browser !== undefined, 'the render worker runs a browser');
    process.kill(browser, 'SIGKILL');
    const killedAt = Date.now();

    const summary = await handle.result();
    assert.equal(summary.status, 'completed');
    const records = await readRecords(env.dataDir, 'render-kill');
    const expected = ['/kill/', ...KILL_PAGES, ...PLAIN_PAGES, '/app/hold', '/app/after'].sort();
    assert.deepEqual(sortedPaths(records.map((record) => record.url)), expected, 'every page once, the killed one and the one it links to included');
    for (const record of records) {
      assert.equal(record.error, null, `${record.url} has no error`);
      assert.equal(record.status, 200);
    }
    const rendered = records.filter((record) => record.url.includes('/app/'));
    for (const record of rendered) assert.match(record.title ?? '', / \(rendered\)$/, `${record.url} was rendered`);
    assert.equal(requestsOf(site, '/app/hold'), 2, 'the held page was fetched by the killed attempt and by the retry');
    assert.equal(requestsOf(site, '/js/hold.js'), 2);
    for (const path of [...KILL_PAGES, ...PLAIN_PAGES, '/app/after']) assert.equal(requestsOf(site, path), 1, `${path} requested once`);

    const now = browsersOf(renderWorker.child.pid!);
    assert.equal(now.length, 1, 'one browser again');
    assert.notEqual(now[0], browser, 'a new one');
    const { outcomes } = await batchOutcomes(handle);
    const retried = outcomes.filter((outcome) => outcome.attempt > 1);
    assert.equal(retried.length, 1, 'exactly one batch (the killed render) ran a second attempt');
    assert.equal(retried[0].closedAs, 'COMPLETED');
    assert.ok(outcomes.every((outcome) => outcome.closedAs === 'COMPLETED'), 'every batch completed');
    console.log(
      `render-kill: browser ${browser} killed ${((killedAt - started) / 1000).toFixed(1)} s into the crawl; the batch came back on attempt ${retried[0].attempt}, ` +
        `closed ${((retried[0].closedAt! - killedAt) / 1000).toFixed(1)} s after the kill; new browser ${now[0]}; ${records.length} pages; crawl ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  });

  it('the render timeout expiring: the page is retried maxRetries times, then recorded as a timeout; the crawl completes', async () => {
    const started = Date.now();
    const handle = await startCrawl(
      env.client,
      'render-timeout',
      {
        seeds: [`${site.origin}/timeout/`],
        batchSize: 1,
        maxRetries: 1,
        render: { match: ['/app/**'], taskQueue: renderQueue, timeoutMs: 1_000 },
      },
      fetchQueue,
    );
    const summary = await handle.result();
    const seconds = (Date.now() - started) / 1000;
    assert.equal(summary.status, 'completed');
    const records = await readRecords(env.dataDir, 'render-timeout');
    assert.deepEqual(sortedPaths(records.map((record) => record.url)), ['/app/never', '/app/t0', '/plain/t0', '/timeout/'], 'every page once; the timed-out page\'s links are not followed');
    const never = records.find((record) => record.url.endsWith('/app/never'));
    assert.equal(never?.error, 'timeout', 'a render that outlasts render.timeoutMs is a timeout (retryable, so maxRetries bounds it)');
    assert.equal(never?.status, null);
    assert.deepEqual(never?.links, []);
    for (const record of records.filter((record) => record !== never)) assert.equal(record.error, null, `${record.url} has no error`);
    assert.match(records.find((record) => record.url.endsWith('/app/t0'))?.title ?? '', / \(rendered\)$/);
    assert.equal(requestsOf(site, '/app/never'), 2, 'fetched and rendered once, retried once (maxRetries: 1), then given up');
    assert.equal(requestsOf(site, '/js/never.js'), 2);
    assert.ok(site.requests.filter((entry) => entry.path === '/js/never.js').every((entry) => entry.aborted), 'each timed-out render dropped its pending request');
    const { outcomes } = await batchOutcomes(handle);
    assert.ok(outcomes.every((outcome) => outcome.closedAs === 'COMPLETED' && outcome.attempt === 1), 'no batch failed or was retried: the page failed, not the batch');
    console.log(`render-timeout: ${records.length} pages, /app/never given up after 2 renders of 1 s; crawl ${seconds.toFixed(1)} s`);
  });
});
