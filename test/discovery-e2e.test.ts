/**
 * Discovery and scope end to end, through a real Temporal dev server and crawl worker: a crawl
 * started with `temporal workflow start --input` JSON reads the sitemaps robots.txt lists and
 * fetches the orphan pages only they name, never requests excluded URLs (the fixture server's
 * request log), and records canonical duplicates as such.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { SyntheticSite } from '../src/sites/synthetic-site';
import type { CrawlSummary } from '../src/shared/crawl-types';
import { readRecords, runCrawlToEnd, startTestTemporal, startWithTemporalCli, type TestTemporal, uniqueQueue } from './helpers/temporal';
import { DISCOVERY_SETTINGS, expectedPages, requestedPages, SITEMAP_ORPHANS, startDiscoverySite } from './helpers/discovery-site';

/** Activity types scheduled by a crawl, in order. */
async function scheduledActivities(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
}

describe('discovery and scope through Temporal', () => {
  let env: TestTemporal;
  let site: SyntheticSite;
  const queue = uniqueQueue('discovery');

  before(async () => {
    env = await startTestTemporal();
    await env.startWorker(queue);
    site = await startDiscoverySite();
  });
  after(async () => {
    await site?.close();
    await env?.close();
  });

  it('`temporal workflow start --input` with sitemaps, excludes and canonicals', async () => {
    const input = { seeds: [site.urlOf(0)], ...DISCOVERY_SETTINGS, respectCanonical: true, allowedContentTypes: ['text/html'], normalize: { sortQuery: true } };
    await startWithTemporalCli(env, queue, 'discovery-cli', input);
    const handle = env.client.workflow.getHandle('discovery-cli');
    const summary = (await handle.result()) as CrawlSummary;
    assert.equal(summary.status, 'completed');
    const records = await readRecords(env.dataDir, 'discovery-cli');
    const byUrl = new Map(records.map((record) => [record.url, record]));

    assert.deepEqual(requestedPages(site), expectedPages(site.graph), 'exactly the reachable pages and sitemap orphans, each once');
    for (const orphan of SITEMAP_ORPHANS.filter((page) => page !== 19)) assert.equal(byUrl.get(site.urlOf(orphan))?.status, 200, `orphan ${orphan} fetched`);
    assert.deepEqual(site.requests.filter((request) => request.path.startsWith('/private/')), [], 'excluded paths never requested');
    assert.ok(!requestedPages(site).some((page) => page >= 10 && page <= 19), 'excluded pages never requested');

    const target = `${site.origin}/canonical-target`;
    for (const path of ['/dup/a', '/dup/b']) {
      assert.equal(byUrl.get(`${site.origin}${path}`)?.skipped, 'canonical', path);
      assert.equal(byUrl.get(`${site.origin}${path}`)?.canonical, target);
    }
    assert.equal(byUrl.get(target)?.skipped, null);
    assert.equal(site.requests.filter((request) => request.path === '/canonical-target').length, 1);
    assert.equal(byUrl.get(`${site.origin}/files/report.pdf`)?.skipped, 'content-type');

    assert.equal((await scheduledActivities(handle)).filter((name) => name === 'discoverSitemaps').length, 1, 'sitemaps are read once');
    // The new step is deterministic: its history replays against the workflow code.
    await Worker.runReplayHistory({ workflowsPath: require.resolve('../src/workflows') }, await handle.fetchHistory(), 'discovery-cli');
  });

  it('a crawl without sitemap settings reads none and never finds the orphans', async () => {
    const before = site.requests.length;
    const { summary, records, handle } = await runCrawlToEnd(env, queue, 'discovery-none', { seeds: [site.urlOf(0)] });
    assert.equal(summary.status, 'completed');
    const paths = site.requests.slice(before).map((request) => request.path);
    assert.ok(!paths.some((path) => path.includes('sitemap')), 'no sitemap requested');
    assert.ok(!records.some((record) => SITEMAP_ORPHANS.includes(Number(new URL(record.url).pathname.split('/').pop()))), 'orphans unreachable');
    const scheduled = await scheduledActivities(handle);
    assert.ok(!scheduled.includes('discoverSitemaps'));
    assert.ok(scheduled.includes('fetchBatch'));
  });
});
