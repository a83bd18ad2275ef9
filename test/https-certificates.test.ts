/**
 * HTTPS, through real crawls on a Temporal dev server: an https site on loopback is reached by
 * host name (the worker's connector maps the names to 127.0.0.1) and verified against a test
 * CA the worker's connector trusts. A certificate that must be refused (another CA, another host's name, expired) ends
 * as the `tls-certificate` error after a single handshake: it is not retried, and a host
 * whose robots.txt is refused that way shows that cause on its pages, not `skipped: robots`.
 * One crawl has no test seam at all: a `crawlflow worker` process, told to trust the test CA
 * only through NODE_EXTRA_CA_CERTS, crawls https://localhost:<port>/, the name resolved by the
 * system resolver (/etc/hosts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { CrawlInput } from '../src/shared/crawl-config';
import { runCrawlToEnd, startTestTemporal, uniqueQueue, type TestTemporal } from './helpers/temporal';
import { loopbackConnector, startTlsSite, TLS_HOSTS, type TlsSite } from './helpers/tls-site';
import { spawnWorker } from './helpers/processes';

/** The refused certificates, by the check that refuses them. */
const REFUSED = [
  ['signed by a CA the crawl does not trust', TLS_HOSTS.untrusted],
  ['issued for another host name', TLS_HOSTS.wrongName],
  ['expired', TLS_HOSTS.expired],
] as const;

describe('https: server certificates verified against the trusted CAs', () => {
  let env: TestTemporal;
  let site: TlsSite;
  const taskQueue = uniqueQueue('https');
  let crawls = 0;

  before(async () => {
    site = await startTlsSite();
    env = await startTestTemporal();
    await env.startWorker(taskQueue, undefined, { connect: loopbackConnector(site.caPem) });
  });
  after(async () => {
    await env?.close();
    await site?.close();
  });

  /** Crawls `host` from its seed; the names resolve to 127.0.0.1, so private addresses are allowed. */
  async function crawl(host: string, options: Partial<CrawlInput> = {}) {
    crawls += 1;
    const handshakesBefore = site.handshakes.length;
    const result = await runCrawlToEnd(env, taskQueue, `https-${crawls}`, { seeds: [site.url(host)], allowPrivateNetwork: true, ...options });
    assert.equal(result.summary.status, 'completed');
    return { ...result, handshakes: site.handshakes.slice(handshakesBefore) };
  }

  it('a certificate from the trusted CA for the host name: the site is crawled, the name sent as SNI', async () => {
    const { records, handshakes } = await crawl(TLS_HOSTS.valid);
    const expected = ['/', '/a', '/b'].map((path) => ({ url: site.url(TLS_HOSTS.valid, path), status: 200, error: null }));
    assert.deepEqual(records.map(({ url, status, error }) => ({ url, status, error })).sort((x, y) => x.url.localeCompare(y.url)), expected);
    const served = site.requests.filter((request) => request.host === TLS_HOSTS.valid).map((request) => request.path);
    assert.deepEqual(served.sort(), ['/', '/a', '/b', '/robots.txt']);
    assert.ok(handshakes.length > 0, 'the crawl opened TLS connections');
    assert.deepEqual([...new Set(handshakes)], [TLS_HOSTS.valid], 'every handshake named the host, though the socket went to 127.0.0.1');
  });

  for (const [refusal, host] of REFUSED) {
    it(`a certificate ${refusal}: robots.txt refused once, the page recorded as tls-certificate`, async () => {
      const { records, handshakes } = await crawl(host);
      assert.deepEqual(
        records.map(({ url, status, error, skipped }) => ({ url, status, error, skipped })),
        [{ url: site.url(host), status: null, error: 'tls-certificate', skipped: null }],
      );
      assert.deepEqual(handshakes, [host], 'one handshake (robots.txt), not retried; the page was not tried against the same certificate');
      assert.deepEqual(site.requests.filter((request) => request.host === host), [], 'no request got through');
    });

    it(`a certificate ${refusal}, robots.txt not read: the page fetch fails as tls-certificate, not retried`, async () => {
      const { records, handshakes } = await crawl(host, { respectRobots: false, maxRetries: 2 });
      assert.deepEqual(
        records.map(({ url, status, error, skipped }) => ({ url, status, error, skipped })),
        [{ url: site.url(host), status: null, error: 'tls-certificate', skipped: null }],
      );
      assert.deepEqual(handshakes, [host], 'one handshake: a refused certificate is not retried');
    });
  }

  describe('a worker process, with no test seam, through the system resolver', () => {
    const systemQueue = uniqueQueue('https-system');
    let worker: ReturnType<typeof spawnWorker>;

    before(async () => {
      // The CLI's worker builds its transport with neither a stub lookup nor a connector, so a
      // name is resolved by Node's dns.lookup (getaddrinfo: /etc/hosts), and the CA is trusted
      // only because NODE_EXTRA_CA_CERTS adds it to Node's default store.
      worker = spawnWorker({
        address: env.address,
        taskQueue: systemQueue,
        dataDir: env.dataDir,
        logFile: join(env.dataDir, 'system-resolver-worker.log'),
        env: { NODE_EXTRA_CA_CERTS: site.caFile },
      });
      await worker.ready;
    });
    after(async () => worker?.kill('SIGTERM'));

    /** Crawls https://localhost:<port>/ on a worker process's queue; the seed is a name, never an address. */
    async function crawlLocalhost(crawlId: string, options: Partial<CrawlInput>, queue = systemQueue) {
      const seed = site.url(TLS_HOSTS.localhost);
      assert.equal(isIP(new URL(seed).hostname), 0, 'the seed names a host, so the crawler must resolve it');
      const handshakesBefore = site.handshakes.length;
      const requestsBefore = site.requests.length;
      const result = await runCrawlToEnd(env, queue, crawlId, { seeds: [seed], ...options });
      assert.equal(result.summary.status, 'completed');
      return { ...result, handshakes: site.handshakes.slice(handshakesBefore), served: site.requests.slice(requestsBefore) };
    }

    it('https://localhost trusted through NODE_EXTRA_CA_CERTS: the exact page set, SNI localhost', async () => {
      // allowPrivateNetwork opens the guard: the unguarded path, where undici's connector hands the name to net/tls.connect.
      const { records, handshakes, served } = await crawlLocalhost('https-system-resolver', { allowPrivateNetwork: true });
      const expected = ['/', '/a', '/b'].map((path) => ({ url: site.url(TLS_HOSTS.localhost, path), status: 200, error: null }));
      assert.deepEqual(records.map(({ url, status, error }) => ({ url, status, error })).sort((x, y) => x.url.localeCompare(y.url)), expected);
      assert.deepEqual(served.map((request) => `${request.host} ${request.path}`).sort(), ['localhost /', 'localhost /a', 'localhost /b', 'localhost /robots.txt']);
      assert.ok(handshakes.length > 0, 'the crawl opened TLS connections');
      // Node sends no SNI for an IP literal: a handshake naming localhost proves the name reached TLS.
      assert.deepEqual([...new Set(handshakes)], [TLS_HOSTS.localhost], 'every handshake named localhost; the socket went to 127.0.0.1');
    });

    it('a worker process without NODE_EXTRA_CA_CERTS refuses the certificate: the variable is what trusts the CA', async () => {
      const untrustingQueue = uniqueQueue('https-system-untrusting');
      const untrusting = spawnWorker({
        address: env.address,
        taskQueue: untrustingQueue,
        dataDir: env.dataDir,
        logFile: join(env.dataDir, 'system-resolver-worker.log'),
        env: { NODE_EXTRA_CA_CERTS: '' },
      });
      try {
        await untrusting.ready;
        const { records, handshakes, served } = await crawlLocalhost('https-system-resolver-untrusted', { allowPrivateNetwork: true }, untrustingQueue);
        assert.deepEqual(
          records.map(({ url, status, error, skipped }) => ({ url, status, error, skipped })),
          [{ url: site.url(TLS_HOSTS.localhost), status: null, error: 'tls-certificate', skipped: null }],
        );
        assert.deepEqual(handshakes, [TLS_HOSTS.localhost], 'one handshake (robots.txt), named localhost, refused');
        assert.deepEqual(served, []);
      } finally {
        await untrusting.kill('SIGTERM');
      }
    });

    it('the guarded path resolves localhost itself, with the system resolver, and refuses its loopback answer', async () => {
      // The guard trusts only non-public seed *addresses*; a name is resolved by the transport's
      // own lookup (dns.lookup), so blocked-address, not ENOTFOUND, means the answer was 127.0.0.1.
      const { records, handshakes, served } = await crawlLocalhost('https-system-resolver-guarded', { allowPrivateNetwork: false });
      assert.deepEqual(
        records.map(({ url, status, error, skipped }) => ({ url, status, error, skipped })),
        [{ url: site.url(TLS_HOSTS.localhost), status: null, error: 'blocked-address', skipped: null }],
      );
      assert.deepEqual(handshakes, [], 'no connection was opened');
      assert.deepEqual(served, []);
    });
  });
});
