/**
 * The private-address guard: which addresses a crawl may reach, checked on resolved DNS
 * answers and on every redirect hop, before any socket is opened. Names are resolved by a
 * stub (test/helpers/hostile-site.ts) and the connector refuses every non-loopback address,
 * so no test here can reach one even if the guard were broken; the connector's log proves
 * that blocked addresses never got as far as a connect.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AddressGuard, addressRange } from '../src/fetch/address-guard';
import { FetchError, isRetryable, type FetchErrorCode } from '../src/fetch/errors';
import { fetchPage, type FetchPolicy } from '../src/fetch/fetch-page';
import { hostileFixture, LOOPBACK_GUARD } from './helpers/hostile-site';

async function expectFetchError(promise: Promise<unknown>, code: FetchErrorCode): Promise<FetchError> {
  let caught: FetchError | undefined;
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof FetchError, `expected a FetchError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    caught = err;
    return true;
  });
  return caught as FetchError;
}

describe('AddressGuard', () => {
  it('classifies addresses with ipaddr.js; only public unicast is "unicast"', () => {
    const ranges: Array<[string, string]> = [
      ['8.8.8.8', 'unicast'],
      ['2606:4700::1111', 'unicast'],
      ['10.0.0.1', 'private'],
      ['172.16.5.4', 'private'],
      ['192.168.1.1', 'private'],
      ['127.0.0.1', 'loopback'],
      ['::1', 'loopback'],
      ['169.254.169.254', 'linkLocal'],
      ['fe80::1', 'linkLocal'],
      ['fd00::1', 'uniqueLocal'],
      ['100.64.0.1', 'carrierGradeNat'],
      ['224.0.0.1', 'multicast'],
      ['ff02::1', 'multicast'],
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['::ffff:10.0.0.1', 'private'], // IPv4-mapped: judged as the IPv4 address
      ['64:ff9b::a00:1', 'private'], // NAT64 of 10.0.0.1
      ['64:ff9b::808:808', 'unicast'], // NAT64 of 8.8.8.8
    ];
    for (const [address, range] of ranges) assert.equal(addressRange(address), range, address);
  });

  it('by default allows public addresses only', () => {
    const guard = AddressGuard.forCrawl({ seeds: ['https://example.com/'], allowPrivateNetwork: false });
    assert.doesNotThrow(() => guard.check('example.com', '93.184.215.14'));
    for (const address of ['10.0.0.1', '127.0.0.1', '::1', '169.254.169.254', 'fd00::1', '100.64.0.1', '224.0.0.1', '0.0.0.0', '::ffff:127.0.0.1']) {
      assert.throws(
        () => guard.check('example.com', address),
        (err: unknown) => err instanceof FetchError && err.code === 'blocked-address',
        address,
      );
    }
  });

  it('allows exactly the non-public addresses that seeds name, in any spelling', () => {
    const guard = AddressGuard.forCrawl({ seeds: ['http://127.0.0.1:8080/', 'http://[fd00::5]/x', 'http://localhost:9000/'], allowPrivateNetwork: false });
    assert.doesNotThrow(() => guard.check('127.0.0.1', '127.0.0.1'));
    assert.doesNotThrow(() => guard.check('alias.test', '::ffff:127.0.0.1'), 'the same address, IPv4-mapped');
    assert.doesNotThrow(() => guard.check('fd00::5', 'fd00:0:0::5'));
    for (const address of ['127.0.0.2', '::1', '10.0.0.1', 'fd00::6']) {
      assert.throws(() => guard.check('x.test', address), /blocked|may not fetch/, `${address}: not a seed address`);
    }
    assert.notEqual(guard.key, AddressGuard.forCrawl({ seeds: ['https://example.com/'], allowPrivateNetwork: false }).key);
    assert.equal(guard.key, AddressGuard.forCrawl({ seeds: ['http://127.0.0.1/other', 'http://[fd00::5]/'], allowPrivateNetwork: false }).key);
  });

  it('allowPrivateNetwork opens everything and skips the lookup', () => {
    const guard = AddressGuard.forCrawl({ seeds: ['https://example.com/'], allowPrivateNetwork: true });
    assert.equal(guard, AddressGuard.open);
    assert.equal(guard.checksAddresses, false);
    assert.doesNotThrow(() => guard.check('evil.test', '10.0.0.1'));
  });

  it("'blocked-address' is final, never retried", () => {
    assert.equal(isRetryable({ error: 'blocked-address', status: null }), false);
  });
});

describe('the guard in the transport', () => {
  const { site, transport, connects, crawler } = hostileFixture();
  const policy = (guard: AddressGuard = LOOPBACK_GUARD): FetchPolicy => ({
    userAgent: 'crawlflow-security-test',
    timeoutMs: 5_000,
    maxBodyBytes: 1024 * 1024,
    maxRedirects: 5,
    allowRedirect: () => true,
    guard,
  });
  const fetch = (url: string, guard?: AddressGuard) => fetchPage(transport, url, policy(guard), new AbortController().signal);
  const nonLoopbackConnects = () => connects.filter((host) => !host.startsWith('127.'));

  after(() => {
    // Only the allowPrivateNetwork requests reached the connector with a non-loopback host,
    // and it refused them: no guarded request ever got that far.
    assert.deepEqual(nonLoopbackConnects(), ['evil.test', 'metadata.test']);
  });

  it('refuses a name whose DNS answer is internal, before any connect', async () => {
    for (const [name, address] of [
      ['evil.test', '10.0.0.1'],
      ['metadata.test', '169.254.169.254'],
      ['cgnat.test', '100.64.0.1'],
      ['ula.test', 'fd00::1'],
      ['mapped.test', '::ffff:192.168.1.1'],
    ]) {
      const before = connects.length;
      const err = await expectFetchError(fetch(site.url('/', name)), 'blocked-address');
      assert.match(err.message, new RegExp(`${name}.*${address.replace(/[.:]/g, '\\$&')}`));
      assert.equal(connects.length, before, `${name}: the connector was never called`);
    }
  });

  it('refuses internal address literals, and loopback addresses other than the seed', async () => {
    const before = connects.length;
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://[::ffff:169.254.169.254]/',
      'http://[fd00::1]/',
      'http://0.0.0.0/',
      `http://127.0.0.2:${site.port}/`,
      `http://[::1]:${site.port}/`,
    ]) {
      await expectFetchError(fetch(url), 'blocked-address');
    }
    assert.equal(connects.length, before, 'the connector was never called');
  });

  it('refuses a name with one internal answer among loopback ones (rebinding)', async () => {
    await expectFetchError(fetch(site.url('/', 'rebind.test')), 'blocked-address');
  });

  it('checks every redirect hop: a redirect to an internal address is refused after the first hop', async () => {
    const before = connects.length;
    const requests = site.requests.length;
    await expectFetchError(fetch(site.url('/redirect/private')), 'blocked-address');
    await expectFetchError(fetch(site.url('/redirect/metadata')), 'blocked-address');
    assert.deepEqual(
      site.requests.slice(requests).map((request) => request.path),
      ['/redirect/private', '/redirect/metadata'],
      'only the redirecting pages were requested',
    );
    assert.ok(connects.slice(before).every((host) => host === '127.0.0.1'));
  });

  it('lets a name that resolves to the seed address through, connecting to the checked address', async () => {
    const page = await fetch(site.url('/', 'alias.test'));
    assert.equal(page.status, 200);
    assert.equal(connects.at(-1), '127.0.0.1', 'the connector got the checked address, not the name');
    assert.equal(site.requests.at(-1)?.host, 'alias.test', 'the Host header still names the site');
  });

  it('a crawl seeded on a public host may not fetch loopback at all', async () => {
    const publicGuard = AddressGuard.forCrawl({ seeds: ['https://example.com/'], allowPrivateNetwork: false });
    await expectFetchError(fetch(site.url('/'), publicGuard), 'blocked-address');
  });

  it('allowPrivateNetwork lets the request reach the connector (which refuses it here)', async () => {
    const before = connects.length;
    await expectFetchError(fetch(site.url('/', 'evil.test'), AddressGuard.open), 'connect');
    assert.deepEqual(connects.slice(before), ['evil.test'], 'the open guard hands the name to the connector');
  });

  it('keeps a connection pool per policy, so a loose policy never lends a connection to a strict one', async () => {
    assert.equal((await fetch(site.url('/'), AddressGuard.open)).status, 200);
    const publicGuard = AddressGuard.forCrawl({ seeds: ['https://example.org/'], allowPrivateNetwork: false });
    await expectFetchError(fetch(site.url('/'), publicGuard), 'blocked-address');
  });

  describe('in a crawl', () => {
    it("records 'blocked-address' once, without retries, for an in-scope redirect to an internal name", async () => {
      const requests = site.seen('/redirect/private');
      // evil.test is a seed host too, so the redirect is in scope and only the guard stops it.
      const record = await crawler.record(site.url('/redirect/private'), { seeds: [site.url('/redirect/private'), site.url('/', 'evil.test')], maxRetries: 2 });
      assert.equal(record.error, 'blocked-address');
      assert.equal(record.status, null);
      assert.equal(site.seen('/redirect/private'), requests + 1, 'not retried');
    });

    it("a seed on an internal name is 'blocked-address' (its robots.txt is unavailable, not a disallow)", async () => {
      const record = await crawler.record(site.url('/', 'evil.test'));
      assert.equal(record.error, 'blocked-address');
      assert.equal(record.skipped, null);
    });

    it('allowPrivateNetwork: the guard steps aside (and the test connector refuses)', async () => {
      const record = await crawler.record(site.url('/', 'metadata.test'), { allowPrivateNetwork: true, respectRobots: false });
      assert.equal(record.error, 'connect');
    });
  });
});
