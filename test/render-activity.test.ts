/**
 * The render batch activity against a loopback site in real headless Chromium (Debian's
 * package): URLs queued for rendering are claimed only by render batches, the rendered DOM's
 * JavaScript-built links are recorded and queued (render or fetch, by `render.match`), and
 * nothing a rendered page asks for outside the crawl's scope is requested: off-site scripts,
 * images, fetch() calls and WebSockets are aborted by the route handler, and the only sockets
 * ever opened (by the crawl's own transport; Chromium opens none) go to loopback.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../src/activities';
import { createRenderActivities } from '../src/activities/render-batch';
import { ChromiumRenderer, type BlockedRequest } from '../src/render/chromium-renderer';
import { DEFAULT_CHROMIUM_PATH } from '../src/render/chromium-binary';
import { parseCrawlConfig } from '../src/shared/crawl-config';
import type { BatchReport } from '../src/shared/crawl-types';
import type { PageRecord } from '../src/store/frontier-store';
import type { SyntheticSite } from '../src/sites/synthetic-site';
import { LOOPBACK_GUARD, testTransport } from './helpers/hostile-site';
import { OFFSITE, RENDER_MATCH, requestsOf, startJsSite } from './helpers/js-site';
import { waitFor } from './helpers/fixtures';
import { openCrawlInStore, sqliteActivityDeps, viewAfter, type OpenedCrawl } from './helpers/activity-batches';

/** PIDs of this process's Chromium children (Playwright runs the browser as our child). */
function chromiumChildren(): Set<string> {
  const lines = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' }).split('\n');
  return new Set(lines.filter((line) => /chromium/.test(line)).map((line) => line.trim().split(/\s+/)[0]));
}

describe('render batch activity (headless Chromium)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'crawlflow-render-'));
  const { transport, connects } = testTransport();
  const blocked: BlockedRequest[] = [];
  const renderer = new ChromiumRenderer(transport, { onBlocked: (request) => blocked.push(request) });
  const deps = sqliteActivityDeps(dataDir, transport, 'render-test');
  const { stores } = deps;
  const activities = createActivities(deps);
  const { browserBatch } = createRenderActivities(deps, renderer);
  let site: SyntheticSite;
  let crawls = 0;

  before(async () => {
    assert.ok(existsSync(DEFAULT_CHROMIUM_PATH), `${DEFAULT_CHROMIUM_PATH} is installed by .ci/run (Debian package chromium)`);
    site = await startJsSite();
  });
  after(async () => {
    await renderer.close();
    await stores.closeAll();
    await transport.close();
    await site?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const seeded = (seed: string, match = RENDER_MATCH): Promise<OpenedCrawl> =>
    openCrawlInStore(stores, `render-${++crawls}`, { seeds: [site.origin + seed], maxRetries: 0, render: { match: [match] } });
  /** Batch `n` of `crawl` as a fetch batch, and as a render batch. */
  const fetchBatch = async (env: MockActivityEnvironment, crawl: OpenedCrawl, n: number) =>
    viewAfter((await env.run(activities.fetchBatch, crawl.order(n))) as BatchReport);
  const renderBatch = async (env: MockActivityEnvironment, crawl: OpenedCrawl, n: number) =>
    viewAfter((await env.run(browserBatch, crawl.order(n, { render: true }))) as BatchReport);
  const batchTotals = (crawl: OpenedCrawl, n: number) => stores.use(crawl.crawlId, (store) => store.batchTotals(crawl.order(n).batchId));

  const records = (crawlId: string): Promise<PageRecord[]> =>
    stores.use(crawlId, async (store) => {
      const all: PageRecord[] = [];
      for await (const record of store.records()) all.push(record);
      return all;
    });

  it('renders a matching page: JavaScript-built links are recorded and queued by kind, off-site requests are aborted', async () => {
    const crawl = await seeded('/app/');
    const env = new MockActivityEnvironment();

    const fetched = await fetchBatch(env, crawl, 1);
    assert.equal(fetched.claimed, 0, 'a fetch batch never claims a URL queued for rendering');

    const result = await renderBatch(env, crawl, 2);
    assert.equal(result.claimed, 1);
    const totals = await batchTotals(crawl, 2);
    assert.deepEqual(totals, { ...totals, processed: 1, fetched: 1, errors: 0 });
    const [record] = await records(crawl.crawlId);
    assert.equal(record.url, `${site.origin}/app/`);
    assert.equal(record.status, 200);
    assert.equal(record.title, 'App (rendered)', 'the title the script set');
    assert.deepEqual(record.links, [`${site.origin}/app/item/1`, `${site.origin}/app/item/2`, `${site.origin}/plain/3`]);
    // The two /app/ links are queued to be rendered, /plain/3 to be fetched.
    assert.deepEqual(result.hosts, [{ host: new URL(site.origin).host, queued: 3, rendering: 2 }]);

    assert.equal(requestsOf(site, '/app/'), 1, 'the page itself was fetched once: the browser got it from the crawl');
    assert.equal(requestsOf(site, '/js/app.js'), 1);
    assert.equal(requestsOf(site, '/beacon/app'), 1, 'in-scope fetch() calls of the page are served');
    assert.equal(requestsOf(site, '/beacon/post'), 0, 'a POST is never sent');

    const reasons = new Map(blocked.map((request) => [request.url, request.reason]));
    assert.equal(reasons.get(OFFSITE.script), 'out-of-scope');
    assert.equal(reasons.get(OFFSITE.image), 'out-of-scope');
    assert.equal(reasons.get(OFFSITE.fetch), 'out-of-scope');
    assert.equal(reasons.get(OFFSITE.webSocket), 'websocket');
    assert.equal(reasons.get(`${site.origin}/beacon/post`), 'method');
    assert.ok(connects.length > 0 && connects.every((address) => address === '127.0.0.1'), `sockets only to loopback: ${connects.join(', ')}`);
  });

  it('a rendered page whose scripts add more links feeds the next render batch', async () => {
    const crawl = await seeded('/app/');
    const env = new MockActivityEnvironment();
    await renderBatch(env, crawl, 1);
    const second = await renderBatch(env, crawl, 2);
    assert.equal(second.claimed, 2, 'both /app/item pages');
    const byUrl = new Map((await records(crawl.crawlId)).map((record) => [record.url, record]));
    assert.deepEqual(byUrl.get(`${site.origin}/app/item/1`)?.links, [`${site.origin}/plain/item-1`]);
    assert.deepEqual(byUrl.get(`${site.origin}/app/item/2`)?.links, [`${site.origin}/plain/item-2`]);
    assert.deepEqual(second.hosts, [{ host: new URL(site.origin).host, queued: 3 }], 'only fetch work is left');
  });

  it('a page the crawl does not render is only fetched: its scripts never run', async () => {
    const crawl = await seeded('/static/');
    const before = requestsOf(site, '/js/static.js');
    const result = await fetchBatch(new MockActivityEnvironment(), crawl, 1);
    assert.equal(result.claimed, 1);
    const [record] = await records(crawl.crawlId);
    assert.deepEqual(record.links, [`${site.origin}/plain/1`], 'no link the script would add');
    assert.equal(requestsOf(site, '/js/static.js') - before, 0);
    assert.equal(requestsOf(site, '/beacon/static'), 0);
  });

  it('cancellation closes the page: the render stops at once and its pending request is dropped', async () => {
    const crawl = await seeded('/hang/', '/hang/**');
    const env = new MockActivityEnvironment();
    const running = env.run(browserBatch, crawl.order(1, { render: true }));
    await waitFor(() => requestsOf(site, '/js/hang.js') === 1, 20_000, 'the page to request its script');
    const cancelledAt = Date.now();
    env.cancel();
    await assert.rejects(running, (err: unknown) => err instanceof CancelledFailure);
    assert.ok(Date.now() - cancelledAt < 5_000, 'well before render.timeoutMs (30 s)');
    await waitFor(() => site.requests.some((entry) => entry.path === '/js/hang.js' && entry.aborted), 5_000, 'the script request to be dropped');
    assert.deepEqual(await records(crawl.crawlId), [], 'nothing recorded: the URL goes back to the queue');
    const { hosts } = await stores.use(crawl.crawlId, (store) => store.snapshot(10));
    assert.deepEqual(hosts, [{ host: new URL(site.origin).host, queued: 1, rendering: 1 }]);
  });

  it('one browser per renderer, launched once for concurrent pages, reused, ended by close()', async () => {
    const before = chromiumChildren();
    const own = new ChromiumRenderer(transport);
    const config = parseCrawlConfig({ seeds: [site.origin], render: { match: ['/**'] } });
    const policy = { ...config, allowRedirect: () => false, guard: LOOPBACK_GUARD, proxy: undefined };
    const page = (title: string) => ({
      finalUrl: `${site.origin}/plain/1`,
      status: 200,
      contentType: 'text/html',
      bytes: 0,
      retryAfterMs: null,
      redirectBlocked: null,
      robotsHeader: null,
      body: null,
      headers: {},
      requestHeaders: {},
      redirects: [],
      latencyMs: 1,
      html: `<title>${title}</title><script>document.title += ' (ran)'</script>`,
    });
    const signal = new AbortController().signal;
    // Two pages at once before any browser runs: still one launch.
    const [one, two] = await Promise.all(['one', 'two'].map((title) => own.render({ page: page(title), policy, render: config.render!, signal })));
    assert.match(one, /<title>one \(ran\)<\/title>/);
    assert.match(two, /<title>two \(ran\)<\/title>/);
    const launched = [...chromiumChildren()].filter((pid) => !before.has(pid));
    assert.equal(launched.length, 1, 'one browser launched');
    assert.match(await own.render({ page: page('three'), policy, render: config.render!, signal }), /<title>three \(ran\)<\/title>/);
    assert.deepEqual([...chromiumChildren()].filter((pid) => !before.has(pid)), launched, 'the same browser renders the next page');
    await own.close();
    await waitFor(() => !chromiumChildren().has(launched[0]), 10_000, 'the browser to exit');
    await assert.rejects(own.render({ page: page('four'), policy, render: config.render!, signal }), /the renderer is closed/);
  });
});
