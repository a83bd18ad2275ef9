/**
 * Infinite URL spaces in real crawls (crawlSession on a dev server, concurrent batches): a calendar with a next month forever,
 * session IDs that make every link new, and a query string that grows on every page. Each
 * is bounded by one of the crawl's limits: depth, URL length, and the per-host page cap
 * (which holds in the store's claim, so across workers too: see unit-store.test.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hostileFixture } from './helpers/hostile-site';

describe('infinite URL spaces', () => {
  const { site, crawler } = hostileFixture();
  const requestsTo = (prefix: string) => site.requests.filter((request) => request.path.startsWith(prefix)).length;

  it('a calendar with endless previous and next months stops at maxDepth', async () => {
    const records = await crawler.crawl({ seeds: [site.url('/calendar?month=0')], maxDepth: 5 });
    const months = records.map((record) => Number(new URL(record.url).searchParams.get('month'))).sort((a, b) => a - b);
    assert.deepEqual(months, [-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5]);
    assert.ok(records.every((record) => record.status === 200 && record.depth === Math.abs(Number(new URL(record.url).searchParams.get('month')))));
    assert.equal(requestsTo('/calendar'), 11);
  });

  it("session IDs in every link stop at maxPagesPerHost; the rest are recorded as 'host-page-cap'", async () => {
    const cap = 30;
    const records = await crawler.crawl({ seeds: [site.url('/session?sid=start&page=0')], maxDepth: 1_000, maxPagesPerHost: cap, batchSize: 7 });
    const fetched = records.filter((record) => record.skipped === null);
    const capped = records.filter((record) => record.skipped === 'host-page-cap');
    assert.equal(fetched.length, cap);
    assert.ok(fetched.every((record) => record.status === 200));
    assert.equal(requestsTo('/session'), cap, 'the server saw exactly the capped number of pages');
    assert.equal(capped.length, records.length - cap, 'every other URL has a final record');
    assert.ok(capped.length >= cap, `the ${cap} fetched pages linked to ${capped.length} more`);
    assert.ok(capped.every((record) => record.status === null && record.error === null && record.links.length === 0));
  });

  it('an ever-growing query string stops at maxUrlLength', async () => {
    const maxUrlLength = 200;
    const records = await crawler.crawl({ seeds: [site.url('/grow?q=')], maxDepth: 1_000, maxUrlLength });
    assert.ok(records.every((record) => record.url.length <= maxUrlLength && record.status === 200));
    const longest = Math.max(...records.map((record) => record.url.length));
    assert.ok(longest > maxUrlLength - 10, `the chain ran up to the limit (${longest})`);
    assert.equal(records.length, requestsTo('/grow'));
    assert.deepEqual(records.find((record) => record.url.length === longest)?.links, [], 'the next, longer link was dropped');
  });
});
