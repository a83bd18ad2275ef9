/**
 * The sitemap activity routes what it queues by `render.match`, as links and seeds are routed:
 * run without a workflow (MockActivityEnvironment) against a loopback site whose sitemap lists
 * one URL that matches and one that does not, then asked of the store by kind. A render claim
 * gets exactly the matching URL, a fetch claim exactly the seed and the other one.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../src/activities';
import type { SitemapDiscoveryResult } from '../src/activities/sitemap-discovery';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { openCrawlInStore, sqliteActivityDeps } from './helpers/activity-batches';
import { urlset } from './helpers/discovery-site';
import { testTransport } from './helpers/hostile-site';

/** The crawl renders what is under /app/. */
const RENDER_MATCH = '/app/**';

describe('sitemap URLs and render routing (sitemap activity)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'crawlflow-sitemap-render-'));
  const { transport } = testTransport();
  const deps = sqliteActivityDeps(dataDir, transport, 'sitemap-render-test');
  const { stores } = deps;
  const { discoverSitemaps } = createActivities(deps);
  let site: SyntheticSite;

  before(async () => {
    site = await startSyntheticSite({
      pages: 1,
      robotsTxt: 'User-agent: *\nAllow: /\n',
      routes: {
        '/sitemap.xml': (_req, res: ServerResponse) =>
          res.writeHead(200, { 'content-type': 'application/xml' }).end(urlset([`${site.origin}/app/dashboard`, `${site.origin}/docs/intro`])),
      },
    });
  });
  after(async () => {
    await stores.closeAll();
    await transport.close();
    await site?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a sitemap URL matching render.match is queued as render work, one that does not as fetch work', async () => {
    const crawl = await openCrawlInStore(stores, 'sitemap-render', {
      seeds: [`${site.origin}/`],
      sitemaps: { urls: [`${site.origin}/sitemap.xml`] },
      render: { match: [RENDER_MATCH] },
    });
    const { configVersion } = crawl.order(0);
    const report = (await new MockActivityEnvironment().run(discoverSitemaps, { crawlId: crawl.crawlId, configVersion })) as SitemapDiscoveryResult;
    assert.deepEqual({ files: report.files, failed: report.failed, accepted: report.accepted, added: report.added }, { files: 1, failed: 0, accepted: 2, added: 2 });

    const host = new URL(site.origin).host;
    const claimed = (batchId: string, render: boolean) =>
      stores.use(crawl.crawlId, async (store) => (await store.claim(batchId, host, 10, undefined, render)).map((claim) => claim.url).sort());
    assert.deepEqual(await claimed('render-batch', true), [`${site.origin}/app/dashboard`], 'render work: the matching sitemap URL, nothing else');
    assert.deepEqual(await claimed('fetch-batch', false), [`${site.origin}/`, `${site.origin}/docs/intro`].sort(), 'fetch work: the seed and the sitemap URL outside render.match');
  });
});
