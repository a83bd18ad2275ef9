/**
 * Stored bodies and resume-on-retry, at the activity level (the real fetchBatch activity,
 * store and body store; no Temporal server). A batch's first attempt dies mid-way: it had
 * claimed its URLs and appended bodies (one whole, one cut off mid-record) without
 * committing their records. The retry, same batch ID, attempt 2, resumes the claimed URLs.
 * The WARC export must then hold each page exactly once, and Python's warcio must read every
 * record of it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../src/activities';
import { crawlBodyDir } from '../src/bodies/body-store';
import { exportWarc } from '../src/results/export-warc';
import { exchangeRecords } from '../src/warc/warc-record';
import { ChangingSite } from './helpers/changing-site';
import { testTransport } from './helpers/hostile-site';
import { openCrawlInStore, sqliteActivityDeps, viewAfter } from './helpers/activity-batches';
import type { BatchReport } from '../src/shared/crawl-types';
import { warcioCheck, warcioRecords } from './helpers/warcio';

describe('stored bodies when a batch is retried', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'crawlflow-content-resume-'));
  const { transport } = testTransport();
  const deps = sqliteActivityDeps(dataDir, transport, 'resume-test');
  const { stores } = deps;
  const activities = createActivities(deps);
  const site = new ChangingSite();
  const pages = ['/p0', '/p1', '/p2', '/p3'];

  before(async () => {
    await site.start();
    site.pages = {
      '/': { html: `<title>home</title>${pages.map((path) => `<a href="${path}">${path}</a>`).join('')}` },
      ...Object.fromEntries(pages.map((path) => [path, { html: `<title>${path}</title><p>${path}</p>` }])),
    };
  });
  after(async () => {
    await stores.closeAll();
    await transport.close();
    await site.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('exports each page once, and nothing the dead attempt wrote', async () => {
    const crawlId = 'resume';
    const crawl = await openCrawlInStore(stores, crawlId, { seeds: [site.url('/')], storeBodies: true, maxRetries: 0 });
    const host = new URL(site.url('/')).host;
    const first = viewAfter((await new MockActivityEnvironment().run(activities.fetchBatch, crawl.order(1, { limit: 1 }))) as BatchReport);
    assert.equal(first.queued, pages.length);

    // Attempt 1 of batch 2 claims the pages, appends one whole page and half of another, and dies.
    const order = crawl.order(2);
    const { batchId } = order;
    const claimed = await stores.use(crawlId, (store) => store.claim(batchId, host, 10));
    assert.equal(claimed.length, pages.length);
    const dead = join(crawlBodyDir(dataDir, crawlId), `${encodeURIComponent(batchId)}.attempt-1.warc.gz`);
    mkdirSync(crawlBodyDir(dataDir, crawlId), { recursive: true });
    const exchange = (path: string) => ({ url: site.url(path), status: 200, headers: {}, requestHeaders: {}, body: Buffer.from(`stale ${path}`) });
    appendFileSync(dead, exchangeRecords(exchange('/p0'), new Date()));
    const half = exchangeRecords(exchange('/p1'), new Date());
    appendFileSync(dead, half.subarray(0, half.length >> 1));

    // The retry: same batch ID, attempt 2, resumes the claimed pages.
    const retry = viewAfter((await new MockActivityEnvironment({ attempt: 2 }).run(activities.fetchBatch, order)) as BatchReport);
    assert.equal(retry.claimed, pages.length, 'the retry got back the claimed pages');
    assert.equal((await stores.use(crawlId, (store) => store.batchTotals(batchId))).fetched, pages.length);
    assert.ok(readdirSync(crawlBodyDir(dataDir, crawlId)).includes(`${encodeURIComponent(batchId)}.attempt-2.warc.gz`), 'the retry wrote its own file');

    const file = join(dataDir, 'resume.warc.gz');
    assert.equal(await exportWarc({ dataDir }, crawlId, file), 1 + pages.length);
    await warcioCheck(file);
    const responses = (await warcioRecords(file)).filter((record) => record.type === 'response');
    assert.deepEqual(responses.map((record) => new URL(record.uri ?? '').pathname), ['/', ...pages], 'each page once, in discovery order');
    for (const response of responses) {
      const path = new URL(response.uri ?? '').pathname;
      assert.equal(response.payloadSha256, createHash('sha256').update(site.served.get(path) ?? '').digest('hex'), `${path}: what the site served, not the stale copy`);
    }
  });
});
