/**
 * Hostile response bodies in real crawls (crawlSession on a dev server; its batches' robots,
 * fetch, outcome and store): endless and decompression-bomb bodies stop at the size cap with memory flat, a
 * body trickling a byte a second hits the total-time cap, resets, truncations, non-HTTP
 * answers and oversized headers each end in their own error code.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FetchError } from '../src/fetch/errors';
import { fetchPage } from '../src/fetch/fetch-page';
import { HostileSite, hostileFixture, LOOPBACK_GUARD } from './helpers/hostile-site';

const MiB = 1024 * 1024;

describe('hostile bodies', () => {
  const { site, transport, crawler } = hostileFixture();

  it("an endless body stops at maxBodyBytes: 'too-large'", async () => {
    const record = await crawler.record(site.url('/body/huge'), { maxBodyBytes: 2 * MiB });
    assert.equal(record.error, 'too-large');
    assert.equal(record.status, null);
  });

  it("a 200 MB gzip bomb stops at a 5 MB cap: 'too-large', with memory flat", async () => {
    assert.ok(site.bombBytes < 300 * 1024, `the bomb is ${site.bombBytes} bytes on the wire`);
    const policy = { userAgent: 'crawlflow-test', timeoutMs: 10_000, maxBodyBytes: 5 * MiB, maxRedirects: 0, allowRedirect: () => true, guard: LOOPBACK_GUARD };
    const rssBefore = process.memoryUsage().rss;
    const started = Date.now();
    await assert.rejects(fetchPage(transport, site.url('/body/bomb'), policy, new AbortController().signal), (err: unknown) => {
      assert.ok(err instanceof FetchError && err.code === 'too-large', String(err));
      return true;
    });
    const growthMiB = (process.memoryUsage().rss - rssBefore) / MiB;
    const ms = Date.now() - started;
    console.log(`gzip bomb: ${HostileSite.BOMB_INFLATED_BYTES / MiB} MiB inflated (${(site.bombBytes / 1024).toFixed(0)} KiB on the wire), 5 MiB cap: rss ${growthMiB >= 0 ? '+' : ''}${growthMiB.toFixed(1)} MiB, ${ms} ms`);
    assert.ok(growthMiB < 100, `rss grew by ${growthMiB.toFixed(1)} MiB`);

    const record = await crawler.record(site.url('/body/bomb'));
    assert.equal(record.error, 'too-large', 'the default cap (5 MiB) stops it in a crawl too');
  });

  it("a body trickling one byte a second ends at the total-time cap: 'timeout'", async () => {
    const started = Date.now();
    const record = await crawler.record(site.url('/body/trickle'), { timeoutMs: 2_500 });
    const elapsed = Date.now() - started;
    assert.equal(record.error, 'timeout');
    assert.ok(elapsed >= 2_400 && elapsed < 6_000, `gave up after ${elapsed} ms`);
  });

  it("a connection reset mid-body is 'reset'", async () => {
    assert.equal((await crawler.record(site.url('/body/reset'))).error, 'reset');
  });

  it("a body shorter than its Content-Length, or chunked and cut off, is 'truncated'", async () => {
    assert.equal((await crawler.record(site.url('/body/truncated'))).error, 'truncated');
    assert.equal((await crawler.record(site.url('/body/truncated-chunked'))).error, 'truncated');
  });

  it("an answer that is not HTTP is 'bad-content', and is not retried", async () => {
    const requests = site.seen('/body/not-http');
    assert.equal((await crawler.record(site.url('/body/not-http'), { maxRetries: 2 })).error, 'bad-content');
    assert.equal(site.seen('/body/not-http'), requests + 1);
  });

  it("a megabyte of response headers is 'too-large'", async () => {
    assert.equal((await crawler.record(site.url('/body/huge-headers'))).error, 'too-large');
  });
});
