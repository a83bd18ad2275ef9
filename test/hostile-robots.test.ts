/**
 * Hostile robots.txt files, through RobotsCache and a SqliteFrontierStore on ':memory:':
 * huge (parsed up to 512 KiB, RFC 9309), malformed, 5xx (disallow all), 4xx (allow all),
 * redirected (followed up to five hops), unreachable. Each host name is its own origin on the
 * one hostile site, through the stub resolver. Then, in real crawls, a host that cannot be
 * reached at all: its pages carry the host's error, not `skipped: robots`.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROBOTS_MAX_WILDCARDS, RobotsCache } from '../src/fetch/robots';
import { SqliteFrontierStore } from '../src/store/sqlite-store';
import { DEFAULT_USER_AGENT } from '../src/shared/names';
import { refusingOrigin, UNSERVED_LOOPBACK } from './helpers/fixtures';
import { hostileFixture, hostileSite, LOOPBACK_GUARD, ROBOTS_CAP } from './helpers/hostile-site';

describe('hostile robots.txt', () => {
  const { site, transport, connects } = hostileSite();
  const store = new SqliteFrontierStore(':memory:');
  const robots = new RobotsCache(transport, 1_000);
  const policy = { userAgent: DEFAULT_USER_AGENT, guard: LOOPBACK_GUARD };

  /** The rules for host `name`, and a check of paths on it. */
  async function rulesOf(name: string) {
    const origin = site.url('', name).replace(/\/$/, '');
    const rules = await robots.rules(store, `test\n${name}`, origin, policy, new AbortController().signal);
    return { rules, allowed: (path: string) => rules.isAllowed(`${origin}${path}`), stored: await store.robots(new URL(origin).host) };
  }

  after(() => store.close());

  it('a file over 512 KiB is parsed up to 512 KiB, without the line the cut goes through', async () => {
    const { allowed, stored } = await rulesOf('robots-huge.test');
    assert.equal(stored?.status, 200);
    assert.ok(stored !== undefined && stored.body.length <= ROBOTS_CAP && stored.body.length > ROBOTS_CAP - 1024, `kept ${stored?.body.length} bytes`);
    assert.equal(allowed('/early/page'), false, 'a rule before the cap applies');
    assert.equal(allowed('/cut-line-x'), true, 'the cut line is dropped, not read as "Disallow: /cut-line-"');
    assert.equal(allowed('/late/page'), true, 'a rule past the cap is not read');
    assert.equal(allowed('/'), true);
  });

  it('a file of thousands of wildcard rules is cut at the wildcard budget, so URL checks stay cheap', async () => {
    const { allowed, stored } = await rulesOf('robots-wildcards.test');
    const kept = (stored?.body.split('\n') ?? []).map((line) => line.split('#', 1)[0]).join('').split('*').length - 1;
    assert.ok(kept <= ROBOTS_MAX_WILDCARDS && kept > ROBOTS_MAX_WILDCARDS - 10, `${kept} wildcards kept`);
    assert.equal(allowed('/early-x-wild'), false, 'a rule before the budget applies');
    assert.equal(allowed('/late-wild'), true, 'a rule past the budget is not read');
    const started = process.hrtime.bigint();
    allowed(`/${'a'.repeat(2_000)}`);
    console.log(`robots wildcards: ${kept} of 50,000 wildcards kept; one check of a 2,000-character path took ${(Number(process.hrtime.bigint() - started) / 1e6).toFixed(0)} ms`);
  });

  it('a malformed file keeps its valid rules and ignores the rest', async () => {
    const { rules, allowed } = await rulesOf('robots-malformed.test');
    assert.equal(allowed('/private/x'), false);
    assert.equal(allowed('/private/open/x'), true, 'Allow wins as the longer match');
    assert.equal(allowed('/typo'), true);
    assert.equal(allowed('/no-colon'), true);
    assert.equal(allowed('/'), true);
    assert.equal(rules.crawlDelayMs, null, 'a non-numeric Crawl-delay is ignored');
  });

  it('a 5xx means disallow everything', async () => {
    const { allowed, stored } = await rulesOf('robots-5xx.test');
    assert.equal(stored?.status, 503);
    assert.equal(allowed('/'), false);
    assert.equal(allowed('/any/page'), false);
  });

  it('a 4xx means no rules: everything allowed', async () => {
    const { allowed, stored } = await rulesOf('robots-4xx.test');
    assert.equal(stored?.status, 403);
    assert.equal(allowed('/any/page'), true);
  });

  it('a redirect chain of up to five hops is followed and its rules apply', async () => {
    const { allowed, stored } = await rulesOf('robots-redirect.test');
    assert.equal(stored?.status, 200);
    assert.equal(allowed('/secret/x'), false);
    assert.equal(allowed('/public'), true);
  });

  it('more than five redirects: the file is unavailable, like a 4xx', async () => {
    const hops = () => site.requests.filter((request) => request.host === 'robots-redirect-far.test' && request.path.startsWith('/robots-hop/')).length;
    const { allowed } = await rulesOf('robots-redirect-far.test');
    assert.equal(allowed('/secret/x'), true);
    assert.equal(hops(), 5, 'robots.txt and five hops were requested, no more');
  });

  it('a redirect to an internal address: unavailable, and never connected to', async () => {
    const connectsBefore = connects.length;
    const { allowed, stored } = await rulesOf('robots-private.test');
    assert.equal(stored?.status, 404);
    assert.equal(allowed('/x'), true);
    assert.ok(site.requests.some((request) => request.host === 'robots-private.test' && request.path === '/robots.txt'), 'the redirect was served');
    // metadata.test resolves to 169.254.169.254: the guard must stop it before any socket.
    assert.deepEqual(connects.slice(connectsBefore), ['127.0.0.1'], 'one socket, to the site itself; none to the redirect target');
  });

  it('an unreachable file (no answer in time) means disallow everything', async () => {
    const { allowed, stored } = await rulesOf('robots-stall.test');
    assert.equal(stored?.status, null);
    assert.equal(allowed('/'), false);
  });

  it('is fetched once per host and crawl, then read from the store', async () => {
    const before = site.requests.length;
    const { allowed } = await rulesOf('robots-5xx.test');
    assert.equal(allowed('/'), false);
    assert.equal(site.requests.length, before);
  });
});

describe('robots.txt of a host that cannot be reached, in a crawl', () => {
  const { connects, crawler } = hostileFixture();

  it("a name that does not resolve: the seed is recorded as 'dns', not skipped for robots.txt, and no socket is opened", async () => {
    const connectsBefore = connects.length;
    const record = await crawler.record('http://no-such-host.invalid/');
    assert.deepEqual({ error: record.error, skipped: record.skipped, status: record.status }, { error: 'dns', skipped: null, status: null });
    assert.deepEqual(connects.slice(connectsBefore), []);
  });

  it("nothing listening: the seed is recorded as 'connect' after robots.txt's three tries, and the page is not tried", async () => {
    const url = `${await refusingOrigin()}/`;
    const connectsBefore = connects.length;
    const record = await crawler.record(url, { maxRetries: 2 });
    assert.deepEqual({ error: record.error, skipped: record.skipped, status: record.status }, { error: 'connect', skipped: null, status: null });
    assert.deepEqual(connects.slice(connectsBefore), [UNSERVED_LOOPBACK, UNSERVED_LOOPBACK, UNSERVED_LOOPBACK], "robots.txt's three tries, then no connection for the page");
  });
});
