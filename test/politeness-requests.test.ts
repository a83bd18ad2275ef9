/**
 * Politeness and requests in real crawls (crawlSession on a dev server, its batches run
 * concurrently: robots, pacing, fetch, store), against loopback fixture sites that record every request: per-host backoff, AutoThrottle,
 * headers / cookies / user agent per host (and not past a redirect to another host), the
 * proxy (and the address guard through it), and secrets kept out of records and errors.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { testNetwork } from './helpers/hostile-site';
import { realCrawler } from './helpers/real-crawl';
import { page, startConnectProxy, startGaps, startRecordingSite, type Handler, type RecordingSite } from './helpers/recording-site';

const { network, connects } = testNetwork();
const crawler = realCrawler(network);

const paths = (n: number, prefix = '/p') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const pagesAt = (list: readonly string[]): Record<string, Handler> => Object.fromEntries(list.map((path) => [path, (_req, res) => page(res)]));

async function withSites<T>(sites: Array<Promise<RecordingSite>>, run: (sites: RecordingSite[]) => Promise<T>): Promise<T> {
  const started = await Promise.all(sites);
  try {
    return await run(started);
  } finally {
    await Promise.all(started.map((site) => site.close()));
  }
}

describe('per-host backoff', () => {
  it('gaps grow while a host fails (503) and start over after a success', async () => {
    const failing = (failures: number): Handler => (_req, res, nth) => {
      if (nth <= failures) res.writeHead(503, { 'content-type': 'text/plain' }).end('busy');
      else page(res, ['/a']);
    };
    await withSites([startRecordingSite({ '/': failing(3), '/a': failing(1) })], async ([site]) => {
      const records = await crawler.crawl({ seeds: [`${site.origin}/`], maxRetries: 3, respectRobots: false, backoff: { baseMs: 150, maxMs: 5_000 } });
      assert.deepEqual(records.map((record) => [new URL(record.url).pathname, record.status]), [['/', 200], ['/a', 200]]);
      assert.deepEqual(site.pages().map((request) => request.path), ['/', '/', '/', '/', '/a', '/a']);
      const gaps = startGaps(site.pages());
      assert.ok(gaps[0] >= 150 && gaps[1] >= 300 && gaps[2] >= 600, `backoff 150, 300, 600 ms (gaps ${gaps})`);
      // After the success the streak is 0 again: /a's failure waits 150 ms, not the 1,200 ms a fourth failure in a row would.
      assert.ok(gaps[4] >= 150 && gaps[4] < 1_200, `reset after a success (gap ${gaps[4]} ms)`);
    });
  });

  it("a host's retry waits out its backoff while the batch crawls its other host", async () => {
    // One batch at a time holds both hosts' pages, each host paced 100 ms. The failing host's
    // retry waits 1 s of backoff; the other host's six pages are asked meanwhile, not after it.
    const failOnce: Handler = (_req, res, nth) => {
      if (nth === 1) res.writeHead(503, { 'content-type': 'text/plain' }).end('busy');
      else page(res);
    };
    const list = paths(6);
    const sites = [startRecordingSite({ '/': (_req, res) => page(res, ['/a']), '/a': failOnce }), startRecordingSite({ '/': (_req, res) => page(res, list), ...pagesAt(list) })];
    await withSites(sites, async ([failing, other]) => {
      const seeds = [`${failing.origin}/`, `${other.origin}/`];
      const records = await crawler.crawl({ seeds, concurrency: 1, delayMs: 100, maxRetries: 2, respectRobots: false, backoff: { baseMs: 1_000, maxMs: 5_000 } });
      assert.deepEqual(records.map((record) => record.status), Array(9).fill(200), 'every page recorded once, the failed one after its retry');
      assert.deepEqual(failing.pages().map((request) => request.path), ['/', '/a', '/a']);
      const [failedAt, retriedAt] = failing.pages().slice(1).map((request) => request.startedAt);
      assert.ok(retriedAt - failedAt >= 1_000, `the retry waited out the backoff (${retriedAt - failedAt} ms)`);
      const otherAt = other.pages().filter((request) => request.path !== '/').map((request) => request.startedAt - failedAt);
      assert.ok(otherAt.every((at) => at < retriedAt - failedAt), `the other host's pages asked during the backoff (at ${otherAt} ms after the 503)`);
    });
  });
});

describe('AutoThrottle', () => {
  it('gives a slow host a larger delay than a fast one in the same crawl', async () => {
    const list = paths(6);
    const routes = (): Record<string, Handler> => ({ '/': (_req, res) => page(res, list), ...pagesAt(list) });
    await withSites([startRecordingSite(routes(), 250), startRecordingSite(routes())], async ([slow, fast]) => {
      const records = await crawler.crawl({
        seeds: [`${slow.origin}/`, `${fast.origin}/`],
        respectRobots: false,
        // Half a request in flight: the delay aims at twice the latency, so it shows over the latency itself.
        autoThrottle: { enabled: true, targetConcurrency: 0.5, startDelayMs: 0 },
      });
      assert.equal(records.length, 14);
      assert.ok(records.every((record) => record.status === 200));
      // The first request of each host is paced by the start delay (0); from the third on, by measured latency.
      const slowGaps = startGaps(slow.pages()).slice(1);
      const fastGaps = startGaps(fast.pages()).slice(1);
      const slowest = Math.min(...slowGaps);
      const fastest = Math.max(...fastGaps);
      assert.ok(slowest >= 480, `slow host (250 ms latency): requests ~500 ms apart (closest ${slowest} ms)`);
      assert.ok(fastest < slowest / 2, `fast host: far closer (widest gap ${fastest} ms)`);
      console.log(`autothrottle: slow host gaps ${slowGaps.join(', ')} ms; fast host gaps ${fastGaps.join(', ')} ms`);
    });
  });
});

describe('request headers, cookies and user agent', () => {
  it('are sent as configured, per-host overrides to their host only, and never follow a redirect to another host', async () => {
    process.env.TEST_A_SID = 'sid-secret-123';
    process.env.TEST_A_AUTH = 'Bearer tok-secret-456';
    let bOrigin = '';
    const a = startRecordingSite({
      '/robots.txt': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n'),
      '/': (_req, res) => page(res, ['/go']),
      '/go': (_req, res) => res.writeHead(302, { location: `${bOrigin}/landing` }).end(),
    });
    const b = startRecordingSite({ '/': (_req, res) => page(res), '/landing': (_req, res) => page(res) });
    await withSites([a, b], async ([siteA, siteB]) => {
      bOrigin = siteB.origin;
      const records = await crawler.crawl({
        seeds: [`${siteA.origin}/`, `${siteB.origin}/`],
        userAgent: 'crawler-default/1',
        headers: { 'X-Crawl': 'all' },
        hosts: {
          [siteA.host]: {
            userAgent: 'a-bot/1',
            headers: { 'X-Only-A': '1', 'X-Crawl': 'a' },
            cookies: { pref: 'x' },
            cookiesFromEnv: { sid: 'TEST_A_SID' },
            headersFromEnv: { Authorization: 'TEST_A_AUTH' },
          },
        },
      });
      assert.equal(records.find((record) => record.url.endsWith('/go'))?.finalUrl, `${siteB.origin}/landing`);
      assert.ok(siteA.requests.some((request) => request.path === '/robots.txt'));
      for (const request of siteA.requests) {
        assert.equal(request.headers['user-agent'], 'a-bot/1', request.path);
        assert.equal(request.headers['x-only-a'], '1');
        assert.equal(request.headers['x-crawl'], 'a', 'the host\'s header replaces the crawl\'s');
        assert.equal(request.headers.cookie, 'pref=x; sid=sid-secret-123');
        assert.equal(request.headers.authorization, 'Bearer tok-secret-456');
      }
      assert.deepEqual(siteB.pages().map((request) => request.path).sort(), ['/', '/landing']);
      for (const request of siteB.requests) {
        assert.equal(request.headers['user-agent'], 'crawler-default/1', request.path);
        assert.equal(request.headers['x-crawl'], 'all');
        assert.equal(request.headers['x-only-a'], undefined);
        assert.equal(request.headers.cookie, undefined, `no cookie on ${request.path}, not even after the redirect from A`);
        assert.equal(request.headers.authorization, undefined);
      }
      const text = JSON.stringify(records);
      assert.ok(!text.includes('secret'), 'no secret in any record');
    });
  });

  it('a variable missing on the worker fails the batch without retries, naming field and variable (and the crawl, its only batch failed)', async () => {
    await withSites([startRecordingSite({ '/': (_req, res) => page(res) })], async ([site]) => {
      await assert.rejects(crawler.crawl({ seeds: [`${site.origin}/`], headersFromEnv: { 'X-Key': 'TEST_NOT_SET_ANYWHERE' } }), (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure, String(err));
        assert.equal(err.cause.nonRetryable, true);
        assert.match(err.cause.message, /headersFromEnv\.X-Key: environment variable TEST_NOT_SET_ANYWHERE is not set on this worker/);
        return true;
      });
      assert.equal(site.pages().length, 0, 'nothing was fetched without the header');
    });
  });
});

describe('HTTP proxy', () => {
  it('carries every request (with credentials from the environment), and the address guard still refuses private targets', async () => {
    process.env.TEST_PROXY_AUTH = 'crawler:pw-secret-789';
    const expected = `Basic ${Buffer.from('crawler:pw-secret-789').toString('base64')}`;
    const proxy = await startConnectProxy(expected);
    try {
      await withSites([startRecordingSite({ '/': (_req, res) => page(res, ['/a']), ...pagesAt(['/a']) })], async ([site]) => {
        connects.length = 0;
        const port = new URL(site.origin).port;
        const records = await crawler.crawl({
          seeds: [`${site.origin}/`, `http://evil.test:${port}/x`],
          respectRobots: false,
          proxy: proxy.url,
          proxyAuthFromEnv: 'TEST_PROXY_AUTH',
        });
        const byPath = Object.fromEntries(records.map((record) => [new URL(record.url).host + new URL(record.url).pathname, record]));
        assert.equal(byPath[`${site.host}/`]?.status, 200);
        assert.equal(byPath[`${site.host}/a`]?.status, 200);
        assert.equal(byPath[`evil.test:${port}/x`]?.error, 'blocked-address', 'evil.test resolves to 10.0.0.1: refused before the proxy');
        assert.deepEqual([...new Set(proxy.tunnels.map((tunnel) => tunnel.target))], [site.host], 'the proxy was asked for the site only');
        assert.ok(proxy.tunnels.every((tunnel) => tunnel.authorization === expected));
        assert.deepEqual(connects, [], 'no direct connection: everything went through the proxy');
        assert.equal(site.pages().length, 2);
      });

      process.env.TEST_PROXY_AUTH_WRONG = 'crawler:wrong-secret-000';
      await withSites([startRecordingSite({ '/': (_req, res) => page(res) })], async ([site]) => {
        const records = await crawler.crawl({ seeds: [`${site.origin}/`], respectRobots: false, proxy: proxy.url, proxyAuthFromEnv: 'TEST_PROXY_AUTH_WRONG' });
        assert.equal(records.length, 1);
        assert.notEqual(records[0].error, null, 'the proxy refused (407)');
        assert.equal(site.pages().length, 0);
        const text = JSON.stringify(records);
        assert.ok(!text.includes('wrong-secret') && !text.includes(Buffer.from('crawler:wrong-secret-000').toString('base64')));
      });
    } finally {
      await proxy.close();
    }
  });
});
