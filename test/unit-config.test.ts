/**
 * The crawl input schema: defaults, duration parsing and errors that name the offending field;
 * and the crawl flags made from it, parsed in process (the CLI's processes: cli.test.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidCrawlConfigError, parseCrawlConfig, parseLimitsChange } from '../src/shared/crawl-config';
import { toMilliseconds } from '../src/shared/duration';
import { TRACKING_PARAMS } from '../src/policy/normalize-url';
import { DEFAULT_USER_AGENT } from '../src/shared/names';
import { Command } from 'commander';
import { addCrawlOptions, crawlRequestFrom, UsageError } from '../src/cli/crawl-options';

const SEED = 'http://example.com/';

/** Asserts that `input` is rejected with an InvalidCrawlConfigError naming `field`. */
function assertRejected(input: unknown, field: string | RegExp): InvalidCrawlConfigError {
  let caught: unknown;
  try {
    parseCrawlConfig(input);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof InvalidCrawlConfigError, `expected InvalidCrawlConfigError for ${JSON.stringify(input)}, got ${String(caught)}`);
  assert.equal(caught.code, 'invalid-config');
  if (typeof field === 'string') assert.equal(caught.field, field);
  else assert.match(caught.field, field);
  assert.ok(caught.reason.length > 0);
  assert.ok(caught.message.includes(caught.field), 'the message names the field');
  return caught;
}

describe('parseCrawlConfig', () => {
  it('defaults the user agent to the version in package.json', () => {
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
    assert.equal(parseCrawlConfig({ seeds: [SEED] }).userAgent, `crawlflow/${version}`);
  });

  it('applies every default to a seeds-only input', () => {
    const config = parseCrawlConfig({ seeds: [SEED] });
    assert.deepEqual(config, {
      seeds: [SEED],
      scope: 'host',
      maxPages: 10_000,
      maxDepth: 20,
      frontierOrder: 'opic',
      concurrency: 8,
      shards: 1,
      perHostConcurrency: 2,
      delayMs: 0,
      timeoutMs: 30_000,
      respectRobots: true,
      maxCrawlDelayMs: 30_000,
      userAgent: DEFAULT_USER_AGENT,
      maxBodyBytes: 5 * 1024 * 1024,
      maxRedirects: 5,
      maxLinksPerPage: 5_000,
      maxUrlLength: 2_048,
      batchSize: 1_000,
      maxRetries: 2,
      maxRetryAfterMs: 3_600_000,
      maxPagesPerHost: 100_000,
      allowPrivateNetwork: false,
      include: [],
      exclude: [],
      normalize: { removeFragment: true, trailingSlash: 'keep', stripParams: [...TRACKING_PARAMS], sortQuery: false, lowercasePath: false },
      respectCanonical: true,
      allowedContentTypes: ['text/html', 'application/xhtml+xml'],
      sitemaps: { urls: [], fromRobots: false, maxUrls: 50_000, maxFiles: 100, maxIndexDepth: 2 },
      extract: {},
      storeBodies: false,
      politenessKey: 'host',
      backoff: { baseMs: 500, maxMs: 60_000 },
      autoThrottle: { enabled: false, targetConcurrency: 1, startDelayMs: 5_000, maxDelayMs: 60_000 },
      headers: {},
      headersFromEnv: {},
      cookies: {},
      cookiesFromEnv: {},
      hosts: {},
    });
    assert.equal(config.deadline, undefined, 'no deadline unless given');
  });

  it('keeps explicit values', () => {
    const config = parseCrawlConfig({ seeds: [SEED, 'https://other.example/x'], scope: 'prefix', maxPages: 1, maxDepth: 0, respectRobots: false });
    assert.deepEqual(config.seeds, [SEED, 'https://other.example/x']);
    assert.equal(config.scope, 'prefix');
    assert.equal(config.maxPages, 1);
    assert.equal(config.maxDepth, 0);
    assert.equal(config.respectRobots, false);
  });

  it('parses deadlines into milliseconds', () => {
    const deadline = (value: string | number) => parseCrawlConfig({ seeds: [SEED], deadline: value }).deadline;
    assert.equal(deadline('90s'), 90_000);
    assert.equal(deadline('10m'), 600_000);
    assert.equal(deadline('1h30m'), 5_400_000);
    assert.equal(deadline(' 2h '), 7_200_000);
    assert.equal(deadline(45_000), 45_000, 'a number is milliseconds');
    assert.equal(deadline('1500'), 1_500, 'a digit string is milliseconds');
  });

  it('rejects seeds with credentials, which would otherwise reach workflow history and logs', () => {
    assert.throws(
      () => parseCrawlConfig({ seeds: ['http://user:secret@example.com/'] }),
      (err: unknown) => err instanceof InvalidCrawlConfigError && err.field === 'seeds.0' && /credentials/.test(err.reason) && !err.message.includes('secret'),
    );
  });

  it('rejects non-positive or unparseable deadlines, naming the field', () => {
    for (const bad of ['0s', '-5m', 'soon', '', 0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      assertRejected({ seeds: [SEED], deadline: bad }, 'deadline');
    }
    assertRejected({ seeds: [SEED], deadline: true }, 'deadline');
  });

  it('names the seed for a bad seed URL', () => {
    assertRejected({ seeds: ['not a url'] }, /^seeds\b/);
    assertRejected({ seeds: [SEED, 'ftp://example.com/'] }, /^seeds\.1$/);
    assertRejected({ seeds: ['/relative/path'] }, /^seeds\b/);
    assertRejected({ seeds: [] }, 'seeds');
    assertRejected({}, 'seeds');
  });

  it('names numeric fields out of range', () => {
    assertRejected({ seeds: [SEED], maxPages: -1 }, 'maxPages');
    assertRejected({ seeds: [SEED], maxPages: 0 }, 'maxPages');
    assertRejected({ seeds: [SEED], maxPages: 1.5 }, 'maxPages');
    assertRejected({ seeds: [SEED], maxPages: '10' }, 'maxPages');
    assertRejected({ seeds: [SEED], maxDepth: -1 }, 'maxDepth');
    assertRejected({ seeds: [SEED], timeoutMs: 99 }, 'timeoutMs');
    assertRejected({ seeds: [SEED], concurrency: 513 }, 'concurrency');
  });

  it('names an unknown key', () => {
    const err = assertRejected({ seeds: [SEED], maxPagez: 10 }, 'maxPagez');
    assert.equal(err.reason, 'unknown field');
  });

  it('names a typo before what it leaves missing or wrong elsewhere, at any depth', () => {
    // The typo is the cause: `render.match: needs at least one URL pattern` would send the user looking for the wrong mistake.
    assert.throws(() => parseCrawlConfig({ seeds: ['http://127.0.0.1:9/'], render: { mach: ['/a'] } }), { message: 'invalid crawl config: render.mach: unknown field' });
    assert.throws(() => parseCrawlConfig({ seeds: [SEED], maxPages: 0, hosts: { 'example.com': { delayMz: 1 } } }), { message: 'invalid crawl config: hosts.example.com.delayMz: unknown field' });
    assert.throws(() => parseLimitsChange({ concurrency: 0, delay: 5 }), { message: 'invalid crawl config: delay: unknown field' });
  });

  it('names the scope when it is not host, domain or prefix', () => {
    assertRejected({ seeds: [SEED], scope: 'subdomain' }, 'scope');
    assertRejected({ seeds: [SEED], scope: 'HOST' }, 'scope');
  });

  it('rejects input that is not an object', () => {
    assertRejected(null, 'input');
    assertRejected('http://example.com/', 'input');
  });
});

describe('toMilliseconds', () => {
  it('reads numbers, digit strings and unit strings', () => {
    assert.equal(toMilliseconds(250), 250);
    assert.equal(toMilliseconds('250'), 250);
    assert.equal(toMilliseconds('1.5s'), 1_500);
    assert.equal(toMilliseconds('1h30m'), 5_400_000);
    assert.equal(toMilliseconds(Number.NaN), undefined);
    assert.equal(toMilliseconds('banana'), undefined);
  });
});

/** The crawl a command line of crawl flags asks for, parsed as `crawlflow crawl` parses it. */
function crawlRequestOf(args: string[]) {
  const command = addCrawlOptions(new Command('crawl').argument('[seed-url...]')).exitOverride();
  command.parse(args, { from: 'user' });
  return crawlRequestFrom(command.processedArgs[0] as string[], command.opts());
}

describe('crawl flags', () => {
  it('set top-level, nested, negated, repeatable and name=value settings', () => {
    const { input } = crawlRequestOf([
      SEED,
      ...['--max-pages', '7', '--ignore-robots', '--ignore-canonical', '--sort-query'],
      ...['--sitemap', 'http://example.com/a.xml', '--sitemap', 'http://example.com/b.xml', '--strip-param', 'ref'],
      ...['--render', '/app/**', '--render-timeout-ms', '5000', '--auto-throttle', '--auto-throttle-target', '1.5'],
      ...['--header', 'X-Team: crawl', '--cookie', 'lang=en', '--extract', 'title=h1', '--extract', 'hero=img @src'],
    ]);
    assert.deepEqual(input, {
      seeds: [SEED],
      maxPages: 7,
      respectRobots: false,
      respectCanonical: false,
      normalize: { sortQuery: true, stripParams: ['ref'] },
      sitemaps: { urls: ['http://example.com/a.xml', 'http://example.com/b.xml'] },
      render: { match: ['/app/**'], timeoutMs: 5_000 },
      autoThrottle: { enabled: true, targetConcurrency: 1.5 },
      headers: { 'X-Team': 'crawl' },
      cookies: { lang: 'en' },
      extract: { title: 'h1', hero: 'img @src' },
    });
  });

  it('leave out what is not given, so the schema defaults it', () => {
    assert.deepEqual(crawlRequestOf([SEED]).input, { seeds: [SEED] });
  });

  it('name the flag (and the entry of a name=value flag) in errors', () => {
    const rejects = (args: string[], message: RegExp) =>
      assert.throws(() => crawlRequestOf(args), (err: unknown) => err instanceof UsageError && message.test(err.message));
    rejects([SEED, '--max-pages', '0'], /^--max-pages: /);
    rejects([SEED, '--sitemap', 'ftp://example.com/s.xml'], /^--sitemap: must be an absolute http\(s\) URL/);
    rejects([SEED, '--header', 'Host: evil.example'], /^--header Host: header may not be set/);
    rejects([SEED, '--extract', 'title=a[href'], /^--extract title\.selector: invalid CSS selector/);
    rejects([SEED, '--render-wait-until', 'load'], /^--render: needs at least one URL pattern/);
    rejects([], /^<seed-url\.\.\.>: needs at least one seed URL/);
  });

  it("show the schema's defaults and choices in --help", () => {
    const help = addCrawlOptions(new Command('crawl')).helpInformation().replace(/\s+/g, ' ');
    assert.match(help, /--max-pages <n> stop after this many URLs \(default 10000\)/);
    assert.match(help, /--scope <scope> which links to follow: host\|domain\|prefix\|any \(default host\)/);
    assert.match(help, /--include <pattern> .* \(repeatable\)/);
    assert.match(help, /--ignore-robots do not obey robots\.txt --/, 'a switch shows no default');
  });
});
