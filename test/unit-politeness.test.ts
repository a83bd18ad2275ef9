/**
 * The per-host politeness policy (backoff, AutoThrottle, minimum delay), the per-host
 * override lookup, request profiles (headers, cookies, secrets from the environment) and the
 * crawl flags and config fields that set them.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCrawlConfig, type CrawlInput } from '../src/shared/crawl-config';
import { backoffDelayMs, gapReason, holdReason, hostPacingPolicy, pacingAfter, requestGapMs, throttledDelayMs, type RequestOutcome } from '../src/policy/host-politeness';
import { hostOverride, hostOverrideKey } from '../src/policy/host-overrides';
import { proxyRoute, requestProfile, RequestSecretError } from '../src/fetch/request-profile';
import { INITIAL_PACING } from '../src/store/frontier-store';
import { crawlRequestFrom, UsageError, type CrawlFlags } from '../src/cli/crawl-options';

const SEED = 'http://example.com/';
const config = (input: Partial<CrawlInput> = {}) => parseCrawlConfig({ seeds: [SEED], ...input });
const ok: RequestOutcome = { status: 200, error: null, latencyMs: 100, retryAfterMs: null };
const unavailable: RequestOutcome = { status: 503, error: null, latencyMs: 5, retryAfterMs: null };
const timedOut: RequestOutcome = { status: null, error: 'timeout', latencyMs: null, retryAfterMs: null };

describe('per-host backoff', () => {
  const policy = hostPacingPolicy(config({ backoff: { baseMs: 100, maxMs: 1_000 } }), undefined, null);

  it('doubles per failure in a row up to the cap, and a success resets it', () => {
    let pacing = INITIAL_PACING;
    const waits: Array<number | null> = [];
    for (const outcome of [unavailable, timedOut, unavailable, unavailable, unavailable, unavailable, ok, unavailable]) {
      const update = pacingAfter(policy, pacing, outcome, 10_000);
      pacing = update.pacing;
      waits.push(update.notBefore === null ? null : update.notBefore - 10_000);
    }
    assert.deepEqual(waits, [100, 200, 400, 800, 1_000, 1_000, null, 100]);
    assert.equal(pacing.errorStreak, 1);
  });

  it('counts only failures the host caused; a 404 is a healthy answer', () => {
    const blocked: RequestOutcome = { status: null, error: 'blocked-address', latencyMs: null, retryAfterMs: null };
    const notFound: RequestOutcome = { ...ok, status: 404 };
    const streak = (pacing: typeof INITIAL_PACING, outcome: RequestOutcome) => pacingAfter(policy, pacing, outcome, 0).pacing;
    assert.equal(streak({ errorStreak: 2, throttleDelayMs: null }, blocked).errorStreak, 2, 'unchanged');
    assert.equal(streak({ errorStreak: 2, throttleDelayMs: null }, notFound).errorStreak, 0, 'reset');
    assert.equal(streak(INITIAL_PACING, { ...ok, status: 429 }).errorStreak, 1);
  });

  it('a Retry-After longer than the backoff wins, capped by maxRetryAfterMs; baseMs 0 turns backoff off', () => {
    const capped = hostPacingPolicy(config({ maxRetryAfterMs: 5_000 }), undefined, null);
    assert.equal(pacingAfter(capped, INITIAL_PACING, { ...unavailable, retryAfterMs: 3_000 }, 0).notBefore, 3_000);
    assert.equal(pacingAfter(capped, INITIAL_PACING, { ...unavailable, retryAfterMs: 60_000 }, 0).notBefore, 5_000);
    const off = hostPacingPolicy(config({ backoff: { baseMs: 0 } }), undefined, null);
    assert.equal(pacingAfter(off, INITIAL_PACING, unavailable, 0).notBefore, null);
    assert.equal(backoffDelayMs({ baseMs: 1, maxMs: 86_400_000 }, 10_000), 86_400_000, 'a long streak stays finite');
  });
});

describe('why a host is held past what a batch waits', () => {
  const LONG_WAIT_MS = 10_000;
  const policy = hostPacingPolicy(config({ backoff: { baseMs: 1_000, maxMs: 60_000 }, maxRetryAfterMs: 300_000 }), undefined, null);

  it("names the batch's last failed request: its Retry-After (and the cap, when it was cut), or the backoff with the streak", () => {
    assert.equal(holdReason(policy, 0, LONG_WAIT_MS, 1, { ...unavailable, retryAfterMs: 120_000 }), 'HTTP 503 with Retry-After 120 s');
    assert.equal(holdReason(policy, 0, LONG_WAIT_MS, 1, { ...unavailable, status: 429, retryAfterMs: 3_600_000 }), "HTTP 429 with Retry-After 3600 s (held 300 s, the crawl's maxRetryAfterMs)");
    assert.equal(holdReason(policy, 0, LONG_WAIT_MS, 5, timedOut), 'backoff after 5 failed requests in a row, the last timeout');
    assert.equal(holdReason(policy, 0, LONG_WAIT_MS, 1, unavailable), 'backoff after HTTP 503');
  });

  it("names the host's own gap when that is longer: robots.txt Crawl-delay, the delay, or AutoThrottle's", () => {
    const crawlDelayed = hostPacingPolicy(config({ maxCrawlDelayMs: 60_000 }), undefined, 30_000);
    assert.equal(holdReason(crawlDelayed, 30_000, LONG_WAIT_MS, 0, undefined), 'robots.txt Crawl-delay of 30 s');
    assert.equal(holdReason(crawlDelayed, 30_000, LONG_WAIT_MS, 1, unavailable), 'robots.txt Crawl-delay of 30 s', 'a 1 s backoff is not what holds it');
    assert.equal(holdReason(crawlDelayed, 30_000, LONG_WAIT_MS, 1, { ...unavailable, retryAfterMs: 45_000 }), 'HTTP 503 with Retry-After 45 s');
    const delayed = hostPacingPolicy(config({ delayMs: 12_500 }), undefined, 5_000);
    assert.equal(holdReason(delayed, 12_500, LONG_WAIT_MS, 0, undefined), 'a delay of 12.5 s between requests');
    const throttled = hostPacingPolicy(config({ autoThrottle: { enabled: true, maxDelayMs: 60_000 } }), undefined, null);
    assert.equal(holdReason(throttled, 20_000, LONG_WAIT_MS, 0, undefined), "AutoThrottle's delay of 20 s between requests");
  });

  it("has no reason when the batch saw no failure and the gap is short: another batch's failure set the hold", () => {
    assert.equal(holdReason(policy, 200, LONG_WAIT_MS, 0, undefined), undefined);
  });

  it('names a short gap as a long one, for the heartbeat that status reads', () => {
    assert.equal(gapReason(hostPacingPolicy(config({ delayMs: 250 }), undefined, 2_000), 2_000), 'robots.txt Crawl-delay of 2 s');
    assert.equal(gapReason(hostPacingPolicy(config({ delayMs: 250 }), undefined, null), 250), 'a delay of 0.3 s between requests');
    assert.equal(gapReason(hostPacingPolicy(config({ delayMs: 250 }), { delayMs: 1_500 }, 1_000), 1_500), 'a delay of 1.5 s between requests', "the host's override, larger than its Crawl-delay");
    const throttled = hostPacingPolicy(config({ delayMs: 100, autoThrottle: { enabled: true } }), undefined, null);
    assert.equal(gapReason(throttled, requestGapMs(throttled, { errorStreak: 0, throttleDelayMs: 800 })), "AutoThrottle's delay of 0.8 s between requests");
  });
});

describe('AutoThrottle (Scrapy rules)', () => {
  const throttled = (input: Partial<CrawlInput['autoThrottle']> = {}, delayMs = 0) =>
    hostPacingPolicy(config({ delayMs, autoThrottle: { enabled: true, startDelayMs: 1_000, maxDelayMs: 10_000, ...input } }), undefined, null);

  it('starts at the start delay, then moves to the mean of the old delay and latency / target, at least the target', () => {
    const policy = throttled({ targetConcurrency: 2 });
    assert.equal(requestGapMs(policy, INITIAL_PACING), 1_000);
    assert.equal(throttledDelayMs(policy, null, 400, 200), 600, '(1000 + 200) / 2');
    assert.equal(throttledDelayMs(policy, 600, 400, 200), 400, '(600 + 200) / 2');
    assert.equal(throttledDelayMs(policy, 100, 4_000, 200), 2_000, 'a slower host: straight to the target, not the mean');
  });

  it('stays within [minimum delay, maxDelayMs]', () => {
    assert.equal(throttledDelayMs(throttled({}, 300), 300, 10, 200), 300, 'never below delayMs');
    assert.equal(throttledDelayMs(throttled(), 9_000, 60_000, 200), 10_000, 'never above maxDelayMs');
    const crawlDelayed = hostPacingPolicy(config({ autoThrottle: { enabled: true } }), undefined, 2_000);
    assert.equal(throttledDelayMs(crawlDelayed, 2_000, 10, 200), 2_000, 'never below Crawl-delay');
  });

  it('a non-200 response never lowers the delay, but may raise it', () => {
    const policy = throttled();
    assert.equal(throttledDelayMs(policy, 800, 10, 404), 800);
    assert.equal(throttledDelayMs(policy, 800, 10, 503), 800);
    assert.equal(throttledDelayMs(policy, 800, 4_000, 503), 4_000);
  });

  it('is stored through pacingAfter only when enabled, and only for responses', () => {
    assert.equal(pacingAfter(throttled(), INITIAL_PACING, ok, 0).pacing.throttleDelayMs, 550);
    assert.equal(pacingAfter(throttled(), INITIAL_PACING, timedOut, 0).pacing.throttleDelayMs, null);
    assert.equal(pacingAfter(hostPacingPolicy(config(), undefined, null), INITIAL_PACING, ok, 0).pacing.throttleDelayMs, null);
    assert.equal(requestGapMs(hostPacingPolicy(config({ delayMs: 250 }), undefined, null), { errorStreak: 0, throttleDelayMs: 5_000 }), 250, 'ignored when off');
  });
});

describe('minimum delay', () => {
  it('is the host override of delayMs (else the crawl\'s) or the capped Crawl-delay, whichever is larger', () => {
    const crawl = config({ delayMs: 100, maxCrawlDelayMs: 3_000, hosts: { 'slow.example': { delayMs: 900 } } });
    assert.equal(hostPacingPolicy(crawl, undefined, null).minDelayMs, 100);
    assert.equal(hostPacingPolicy(crawl, hostOverride(crawl.hosts, 'slow.example'), null).minDelayMs, 900);
    assert.equal(hostPacingPolicy(crawl, hostOverride(crawl.hosts, 'slow.example'), 2_000).minDelayMs, 2_000);
    assert.equal(hostPacingPolicy(crawl, undefined, 60_000).minDelayMs, 3_000, 'Crawl-delay capped');
  });
});

describe('hostOverride', () => {
  const hosts = { 'example.com': { delayMs: 1 }, '*.example.com': { delayMs: 2 }, '*.api.example.com': { delayMs: 3 }, 'example.com:8080': { delayMs: 4 } };

  it('prefers the exact host, then the longest *.domain pattern; a pattern does not cover the domain itself or other ports', () => {
    assert.equal(hostOverride(hosts, 'example.com')?.delayMs, 1);
    assert.equal(hostOverride(hosts, 'www.example.com')?.delayMs, 2);
    assert.equal(hostOverride(hosts, 'v1.api.example.com')?.delayMs, 3);
    assert.equal(hostOverride(hosts, 'example.com:8080')?.delayMs, 4);
    assert.equal(hostOverride(hosts, 'www.example.com:8080'), undefined);
    assert.equal(hostOverride(hosts, 'notexample.com'), undefined);
    assert.equal(hostOverride(hosts, 'constructor'), undefined, 'no prototype keys');
  });
});

describe('requestProfile', () => {
  const crawl = config({
    userAgent: 'crawler/1',
    headers: { 'X-Team': 'search', Accept: 'text/html' },
    cookies: { lang: 'en' },
    hosts: {
      'shop.example': { userAgent: 'shop-bot/2', headers: { 'x-team': 'shop' }, headersFromEnv: { Authorization: 'SHOP_TOKEN' }, cookiesFromEnv: { sid: 'SHOP_SID' } },
    },
  });
  const env = { SHOP_TOKEN: 'Bearer s3cret-token', SHOP_SID: 's3cret-sid' };

  it('merges the crawl\'s headers and cookies with the host\'s (host wins, names case-insensitive)', () => {
    const plain = { 'user-agent': 'crawler/1', 'x-team': 'search', accept: 'text/html', cookie: 'lang=en' };
    assert.deepEqual(requestProfile(crawl, undefined, env), { userAgent: 'crawler/1', headers: plain, recordedHeaders: plain });
    assert.deepEqual(requestProfile(crawl, 'shop.example', env), {
      userAgent: 'shop-bot/2',
      headers: { 'user-agent': 'shop-bot/2', 'x-team': 'shop', accept: 'text/html', authorization: 'Bearer s3cret-token', cookie: 'lang=en; sid=s3cret-sid' },
      recordedHeaders: { 'user-agent': 'shop-bot/2', 'x-team': 'shop', accept: 'text/html', authorization: '[redacted]', cookie: 'lang=en; sid=[redacted]' },
    });
  });

  it('records a credential header redacted whatever its origin, and a value from the environment redacted whatever its name', () => {
    const inline = config({ headers: { Authorization: 'Basic aW5saW5l', 'X-Api-Key': 'visible' }, headersFromEnv: { 'X-Session': 'SESSION' }, cookies: { a: '1' } });
    const profile = requestProfile(inline, undefined, { SESSION: 'from-env' });
    assert.deepEqual(profile.headers, { 'user-agent': inline.userAgent, authorization: 'Basic aW5saW5l', 'x-api-key': 'visible', 'x-session': 'from-env', cookie: 'a=1' });
    assert.deepEqual(profile.recordedHeaders, { 'user-agent': inline.userAgent, authorization: '[redacted]', 'x-api-key': 'visible', 'x-session': '[redacted]', cookie: 'a=1' });
    const overridden = config({ headersFromEnv: { 'X-Session': 'SESSION' }, hosts: { 'site.test': { headers: { 'x-session': 'public' } } } });
    assert.deepEqual(requestProfile(overridden, 'site.test', { SESSION: 'from-env' }).recordedHeaders['x-session'], 'public', "a host's inline value over the crawl's secret is recorded as sent");
  });

  it('a missing or unusable variable is an error naming the field and variable, never a value', () => {
    assert.throws(
      () => requestProfile(crawl, 'shop.example', { SHOP_TOKEN: 'Bearer x' }),
      (err: unknown) => err instanceof RequestSecretError && /hosts\.shop\.example\.cookiesFromEnv\.sid: environment variable SHOP_SID is not set/.test(err.message),
    );
    assert.throws(
      () => requestProfile(crawl, 'shop.example', { ...env, SHOP_TOKEN: 'Bearer s3cret\r\nX-Evil: 1' }),
      (err: unknown) => err instanceof RequestSecretError && !err.message.includes('s3cret') && /SHOP_TOKEN holds a value that is not allowed/.test(err.message),
    );
  });

  it('an error from a pattern override names the pattern', () => {
    const patterned = config({ hosts: { '*.shop.example': { headersFromEnv: { 'X-Key': 'TEST_NOPE' } } } });
    assert.throws(() => requestProfile(patterned, hostOverrideKey(patterned.hosts, 'eu.shop.example'), {}), /^RequestSecretError: hosts\.\*\.shop\.example\.headersFromEnv\.X-Key: environment variable TEST_NOPE is not set/);
  });

  it('the proxy takes its credentials from the environment', () => {
    const proxied = config({ proxy: 'http://proxy.internal:3128', proxyAuthFromEnv: 'PROXY_AUTH' });
    assert.deepEqual(proxyRoute(proxied, { PROXY_AUTH: 'user:pw' }), { url: 'http://proxy.internal:3128', authorization: `Basic ${Buffer.from('user:pw').toString('base64')}` });
    assert.throws(() => proxyRoute(proxied, {}), /proxyAuthFromEnv: environment variable PROXY_AUTH is not set/);
    assert.equal(proxyRoute(config()), undefined);
  });
});

describe('politeness and request settings: validation', () => {
  const rejects = (input: Partial<CrawlInput>, message: RegExp) => assert.throws(() => config(input), message);

  it('names the field and never echoes a value', () => {
    rejects({ headers: { Host: 'evil' } }, /headers\.Host: header may not be set: it is set by the transport/);
    rejects({ headers: { Connection: 'close' } }, /headers\.Connection: header may not be set: it is hop-by-hop/);
    rejects({ headers: { 'Proxy-Authorization': 'Basic x' } }, /use proxyAuthFromEnv/);
    rejects({ headers: { 'X-A': 'a\r\nX-Injected: 1' } }, /^(?!.*Injected).*headers\.X-A: must not contain CR, LF or NUL/);
    rejects({ headers: { 'x-a': '1', 'X-A': '2' } }, /headers\.X-A: header is given twice/);
    rejects({ cookies: { sid: 'two words' } }, /cookies\.sid: must be a cookie value/);
    rejects({ headersFromEnv: { Authorization: 'not a name' } }, /headersFromEnv\.Authorization: must be an environment variable name/);
    rejects({ proxy: 'http://user:hunter2@proxy:3128' }, /^(?!.*hunter2).*proxy: must not contain credentials/);
    rejects({ hosts: { 'Example.COM': {} } }, /hosts\.Example\.COM: host key must be written as URLs spell the host \(example\.com\)/);
    rejects({ hosts: { 'example.com': { perHostConcurrency: 0 } } }, /hosts\.example\.com\.perHostConcurrency/);
    rejects({ hosts: { 'example.com': { proxy: 'http://p:1' } as never } }, /hosts\.example\.com\.proxy: unknown field/);
    rejects({ autoThrottle: { targetConcurrency: 0 } }, /autoThrottle\.targetConcurrency/);
    rejects({ backoff: { baseMs: 5_000, maxMs: 1_000 } }, /backoff\.maxMs: maxMs must be at least baseMs/);
  });
});

describe('crawl flags', () => {
  const dir = mkdtempSync(join(tmpdir(), 'crawlflow-politeness-flags-'));
  const request = (flags: CrawlFlags) => crawlRequestFrom([SEED], flags);

  it('--header, --cookie, --proxy, --auto-throttle and --backoff-* reach the config, merged over --config', () => {
    const file = join(dir, 'crawl.json');
    writeFileSync(file, JSON.stringify({ headers: { 'X-From-File': '1' }, autoThrottle: { targetConcurrency: 3 }, hosts: { 'example.com': { delayMs: 700 } } }));
    const { config: parsed } = request({
      config: file,
      header: { 'X-From-Flag': '2' },
      cookie: { lang: 'en' },
      proxy: 'http://127.0.0.1:3128',
      autoThrottle: true,
      backoffMaxMs: 9_000,
    });
    assert.deepEqual(parsed.headers, { 'X-From-File': '1', 'X-From-Flag': '2' });
    assert.deepEqual(parsed.cookies, { lang: 'en' });
    assert.equal(parsed.proxy, 'http://127.0.0.1:3128');
    assert.deepEqual(parsed.autoThrottle, { enabled: true, targetConcurrency: 3, startDelayMs: 5_000, maxDelayMs: 60_000 });
    assert.deepEqual(parsed.backoff, { baseMs: 500, maxMs: 9_000 });
    assert.deepEqual(parsed.hosts, { 'example.com': { delayMs: 700 } });
    rmSync(dir, { recursive: true, force: true });
  });

  it('errors name the flag (and the header), or the config file field', () => {
    assert.throws(() => request({ header: { Host: 'x' } }), (err: unknown) => err instanceof UsageError && /^--header Host: header may not be set/.test(err.message));
    assert.throws(() => request({ autoThrottleTarget: -1 }), (err: unknown) => err instanceof UsageError && /^--auto-throttle-target: /.test(err.message));
    assert.throws(() => request({ backoffBaseMs: 10_000, backoffMaxMs: 1 }), (err: unknown) => err instanceof UsageError && /^--backoff-max-ms: /.test(err.message));
    assert.throws(() => request({ proxy: 'ftp://x' }), (err: unknown) => err instanceof UsageError && /^--proxy: must be an http\(s\) URL/.test(err.message));
  });
});
