/**
 * Redirect traps in real crawls (crawlSession on a dev server): loops, long and endless chains, redirects out
 * of scope and to internal addresses (names resolved by the stub resolver). Each ends in a
 * clear record, after a bounded number of requests.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hostileFixture } from './helpers/hostile-site';

describe('hostile redirects', () => {
  const { site, connects, crawler } = hostileFixture();
  const requestsTo = (prefix: string) => site.requests.filter((request) => request.path.startsWith(prefix)).length;

  it("a redirect loop is 'redirect-loop', detected before the repeat request", async () => {
    const record = await crawler.record(site.url('/redirect/loop/a'), { maxRedirects: 20 });
    assert.equal(record.error, 'redirect-loop');
    assert.equal(site.seen('/redirect/loop/a'), 1);
    assert.equal(site.seen('/redirect/loop/b'), 1);
  });

  it("a chain longer than maxRedirects is 'too-many-redirects'; one within it is followed", async () => {
    const long = await crawler.record(site.url('/redirect/chain?n=0'), { maxRedirects: 5 });
    assert.equal(long.error, 'too-many-redirects');
    assert.equal(requestsTo('/redirect/chain'), 6, 'the seed and 5 hops, no more');

    const within = await crawler.record(site.url('/redirect/chain?n=15'), { maxRedirects: 5 });
    assert.equal(within.error, null);
    assert.equal(within.status, 200);
    assert.equal(within.finalUrl, site.url('/redirect/chain?n=20'));
    assert.equal(within.title, 'end of chain');
  });

  it("an endless chain of distinct URLs is 'too-many-redirects' after maxRedirects hops", async () => {
    const record = await crawler.record(site.url('/redirect/forever'), { maxRedirects: 10 });
    assert.equal(record.error, 'too-many-redirects');
    assert.equal(requestsTo('/redirect/forever'), 11);
  });

  it("a redirect to another host is recorded as 'redirect-out-of-scope' and not followed", async () => {
    const record = await crawler.record(site.url('/redirect/out-of-scope'));
    assert.equal(record.skipped, 'redirect-out-of-scope');
    assert.equal(record.status, 302);
    assert.deepEqual(record.links, [site.url('/landing', 'elsewhere.test')]);
    assert.ok(!site.requests.some((request) => request.host === 'elsewhere.test'), 'the other host was never asked');
  });

  it('a redirect to an internal address is out of scope for a host-scoped crawl, and never connected to', async () => {
    const before = connects.length;
    for (const path of ['/redirect/private', '/redirect/link-local', '/redirect/metadata']) {
      assert.equal((await crawler.record(site.url(path))).skipped, 'redirect-out-of-scope', path);
    }
    assert.ok(connects.slice(before).every((host) => host === '127.0.0.1'));
  });

  it("an in-scope redirect to a link-local address (via DNS) is 'blocked-address'", async () => {
    const before = connects.length;
    const seed = site.url('/redirect/link-local');
    // metadata.test is a seed host, so scope lets the redirect through and only the guard stops it.
    const records = await crawler.crawl({ seeds: [seed, site.url('/', 'metadata.test')], maxDepth: 0 });
    assert.deepEqual(
      records.map((record) => [record.url, record.error]),
      [
        [seed, 'blocked-address'],
        [site.url('/', 'metadata.test'), 'blocked-address'],
      ],
    );
    assert.ok(connects.slice(before).every((host) => host === '127.0.0.1'), 'nothing but loopback reached the connector');
  });
});
