/**
 * Discovery and scope policy as pure functions: URL normalization rules, include/exclude
 * patterns, the per-crawl URL policy, content-type filters, sitemap parsing (urlset, index,
 * gzip, text, malformed, caps), the page outcome of canonical duplicates and filtered links,
 * and the crawl flags that set all of these.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { buildNormalizer, DEFAULT_NORMALIZE_RULES, type NormalizeRules } from '../src/policy/normalize-url';
import { compileUrlPattern, InvalidUrlPatternError } from '../src/policy/url-patterns';
import { buildUrlPolicy } from '../src/policy/url-policy';
import { buildContentTypeFilter } from '../src/policy/content-type';
import { decodeSitemapBody, parseSitemap, SitemapError } from '../src/discovery/sitemap-parse';
import { buildPagePolicy, fetchedOutcome } from '../src/activities/page-outcome';
import type { FetchedPage } from '../src/fetch/fetch-page';
import { InvalidCrawlConfigError, parseCrawlConfig, type CrawlInput } from '../src/shared/crawl-config';
import { addCrawlOptions, crawlRequestFrom, UsageError, type CrawlFlags } from '../src/cli/crawl-options';

const normalizer = (rules: Partial<NormalizeRules> = {}) => buildNormalizer({ ...DEFAULT_NORMALIZE_RULES, ...rules });

describe('URL normalization rules', () => {
  const cases: Array<{ rule: string; rules: Partial<NormalizeRules>; raw: string; expected: string | undefined }> = [
    // Always applied.
    { rule: 'scheme and host lower-cased', rules: {}, raw: 'HTTP://WWW.Example.COM/Path', expected: 'http://www.example.com/Path' },
    { rule: 'default port dropped', rules: {}, raw: 'https://example.com:443/a', expected: 'https://example.com/a' },
    { rule: 'other port kept', rules: {}, raw: 'http://example.com:8080/a', expected: 'http://example.com:8080/a' },
    { rule: 'dot segments resolved', rules: {}, raw: 'http://example.com/a/./b/../c', expected: 'http://example.com/a/c' },
    { rule: 'empty query dropped', rules: {}, raw: 'http://example.com/a?', expected: 'http://example.com/a' },
    { rule: 'credentials refused', rules: {}, raw: 'http://u:p@example.com/', expected: undefined },
    { rule: 'non-http refused', rules: {}, raw: 'ftp://example.com/', expected: undefined },
    // Defaults.
    { rule: 'fragment dropped by default', rules: {}, raw: 'http://example.com/a#top', expected: 'http://example.com/a' },
    { rule: 'path case kept by default', rules: {}, raw: 'http://example.com/A/B', expected: 'http://example.com/A/B' },
    { rule: 'query order kept by default', rules: {}, raw: 'http://example.com/s?b=2&a=1', expected: 'http://example.com/s?b=2&a=1' },
    { rule: 'trailing slash kept by default', rules: {}, raw: 'http://example.com/dir/', expected: 'http://example.com/dir/' },
    {
      rule: 'tracking parameters dropped by default, case-insensitively, others kept verbatim',
      rules: {},
      raw: 'http://example.com/p?UTM_Source=x&id=a%20b&fbclid=1&utm_medium=y&q=c+d&gclid=2',
      expected: 'http://example.com/p?id=a%20b&q=c+d',
    },
    { rule: 'a query of tracking parameters only goes entirely', rules: {}, raw: 'http://example.com/p?utm_source=x', expected: 'http://example.com/p' },
    // Configured.
    { rule: 'removeFragment: false keeps it', rules: { removeFragment: false }, raw: 'http://example.com/app#/route', expected: 'http://example.com/app#/route' },
    { rule: 'removeFragment: false still drops an empty one', rules: { removeFragment: false }, raw: 'http://example.com/app#', expected: 'http://example.com/app' },
    { rule: 'stripParams: [] keeps tracking parameters', rules: { stripParams: [] }, raw: 'http://example.com/p?utm_source=x', expected: 'http://example.com/p?utm_source=x' },
    { rule: 'stripParams globs', rules: { stripParams: ['session*', 'ref'] }, raw: 'http://example.com/p?sessionid=1&ref=a&refx=b', expected: 'http://example.com/p?refx=b' },
    { rule: 'sortQuery sorts by name, stably', rules: { sortQuery: true }, raw: 'http://example.com/s?b=2&a=1&b=1&a%5B%5D=0', expected: 'http://example.com/s?a=1&a%5B%5D=0&b=2&b=1' },
    { rule: 'trailingSlash strip', rules: { trailingSlash: 'strip' }, raw: 'http://example.com/dir/?x=1', expected: 'http://example.com/dir?x=1' },
    { rule: 'trailingSlash strip keeps the root', rules: { trailingSlash: 'strip' }, raw: 'http://example.com/', expected: 'http://example.com/' },
    { rule: 'trailingSlash add', rules: { trailingSlash: 'add' }, raw: 'http://example.com/dir', expected: 'http://example.com/dir/' },
    { rule: 'trailingSlash add leaves files alone', rules: { trailingSlash: 'add' }, raw: 'http://example.com/dir/page.html', expected: 'http://example.com/dir/page.html' },
    { rule: 'lowercasePath', rules: { lowercasePath: true }, raw: 'http://example.com/Docs/Intro?Q=A', expected: 'http://example.com/docs/intro?Q=A' },
  ];
  for (const { rule, rules, raw, expected } of cases) {
    it(rule, () => assert.equal(normalizer(rules)(raw), expected));
  }

  it('resolves relative URLs against a base before the rules', () => {
    assert.equal(normalizer({ trailingSlash: 'strip', sortQuery: true })('../x/?b=1&a=2#f', 'http://example.com/d/e/'), 'http://example.com/d/x?a=2&b=1');
  });

  it('makes one key of spellings the rules say are the same page', () => {
    const normalize = normalizer({ sortQuery: true, trailingSlash: 'strip' });
    const keys = new Set(['http://example.com/p/?a=1&b=2', 'http://example.com/p?b=2&a=1&utm_campaign=z', 'HTTP://example.com:80/p?a=1&b=2#x'].map((url) => normalize(url)));
    assert.deepEqual([...keys], ['http://example.com/p?a=1&b=2']);
  });
});

describe('include and exclude patterns', () => {
  const matches = (pattern: string, url: string) => compileUrlPattern(pattern)(new URL(url));

  it('a glob starting with / matches the path and query', () => {
    assert.ok(matches('/blog/**', 'http://example.com/blog/2024/post'));
    assert.ok(matches('/blog/**', 'http://example.com/blog'));
    assert.ok(!matches('/blog/**', 'http://example.com/blogroll'));
    assert.ok(matches('/search*', 'http://example.com/search?q=x'));
    assert.ok(matches('/**/*.pdf', 'http://example.com/a/b/c.pdf'));
  });

  it('a glob starting with a scheme matches the whole URL', () => {
    assert.ok(matches('https://*.example.com/docs/**', 'https://www.example.com/docs/a/b'));
    assert.ok(!matches('https://*.example.com/docs/**', 'http://www.example.com/docs/a'));
  });

  it('re: is a regular expression tested against the whole URL', () => {
    assert.ok(matches('re:\\?page=\\d{3,}', 'http://example.com/list?page=100'));
    assert.ok(!matches('re:\\?page=\\d{3,}', 'http://example.com/list?page=99'));
    assert.ok(matches('re:^https://', 'https://example.com/'));
  });

  it('refuses what it cannot use, saying why', () => {
    for (const [pattern, why] of [
      ['re:(', /invalid regular expression/],
      ['re:', /empty regular expression/],
      ['*.pdf', /must start with \/ .* or http\(s\):\/\//],
      ['', /must start with/],
    ] as const) {
      assert.throws(() => compileUrlPattern(pattern), (err: unknown) => err instanceof InvalidUrlPatternError && why.test(err.message), pattern);
    }
  });

  it('the config refuses a bad pattern naming the field, its index and the pattern', () => {
    assert.throws(
      () => parseCrawlConfig({ seeds: ['http://example.com/'], exclude: ['/ok/**', 're:[unclosed'] }),
      (err: unknown) => err instanceof InvalidCrawlConfigError && err.field === 'exclude.1' && err.message.includes('"re:[unclosed"'),
    );
    assert.throws(
      () => parseCrawlConfig({ seeds: ['http://example.com/'], include: ['docs/**'] }),
      (err: unknown) => err instanceof InvalidCrawlConfigError && err.field === 'include.0',
    );
  });
});

describe('the URL policy of a crawl', () => {
  const policy = (input: Partial<CrawlInput>) => buildUrlPolicy(parseCrawlConfig({ seeds: ['http://site.test/'], ...input }));

  it('checks scope, then exclude, then include', () => {
    const urls = policy({ include: ['/docs/**', '/blog/**'], exclude: ['/docs/private/**', 're:\\.zip$'] });
    const admit = (url: string) => urls.admit(new URL(url));
    assert.equal(admit('http://site.test/docs/a'), null);
    assert.equal(admit('http://site.test/blog/b'), null);
    assert.equal(admit('http://site.test/shop/c'), 'not-included');
    assert.equal(admit('http://site.test/docs/private/x'), 'excluded');
    assert.equal(admit('http://site.test/blog/file.zip'), 'excluded');
    assert.equal(admit('http://other.test/docs/a'), 'out-of-scope', 'scope first');
  });

  it('no include means everything in scope', () => {
    assert.equal(policy({}).admit(new URL('http://site.test/anything')), null);
  });

  it('normalizes with the crawl rules', () => {
    assert.equal(policy({ normalize: { sortQuery: true } }).normalize('http://site.test/?b=1&a=2&utm_source=x'), 'http://site.test/?a=2&b=1');
  });
});

describe('allowed content types', () => {
  it('matches media types without parameters, case-insensitively, and type/* ranges', () => {
    const accepts = buildContentTypeFilter(['text/html', 'application/*']);
    assert.ok(accepts('Text/HTML; charset=utf-8'));
    assert.ok(accepts('application/pdf'));
    assert.ok(!accepts('text/plain'));
    assert.ok(!accepts('image/png'));
    assert.ok(accepts(null), 'no Content-Type counts as text/html');
    assert.ok(!buildContentTypeFilter(['application/pdf'])(null));
  });

  it('the config refuses what is not a media type, naming the index', () => {
    assert.throws(
      () => parseCrawlConfig({ seeds: ['http://example.com/'], allowedContentTypes: ['text/html', 'html'] }),
      (err: unknown) => err instanceof InvalidCrawlConfigError && err.field === 'allowedContentTypes.1',
    );
    assert.throws(
      () => parseCrawlConfig({ seeds: ['http://example.com/'], allowedContentTypes: [] }),
      (err: unknown) => err instanceof InvalidCrawlConfigError && err.field === 'allowedContentTypes',
    );
  });
});

const urlset = (urls: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((url) => `<url><loc>${url}</loc><lastmod>2024-01-01</lastmod></url>`).join('\n')}</urlset>`;

describe('parseSitemap', () => {
  it('reads a urlset: locs in order, entities decoded, CDATA, whitespace trimmed, image:loc ignored', () => {
    const xml = `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
      <url><loc>
        http://site.test/a?x=1&amp;y=2
      </loc><image:image><image:loc>http://site.test/pic.png</image:loc></image:image></url>
      <url><loc><![CDATA[http://site.test/b?p=1&q=2]]></loc></url>
      <url><loc></loc></url>
    </urlset>`;
    assert.deepEqual(parseSitemap(xml), { kind: 'urlset', locs: ['http://site.test/a?x=1&y=2', 'http://site.test/b?p=1&q=2'], truncated: false });
  });

  it('reads a sitemap index', () => {
    const xml = `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>http://site.test/s1.xml</loc></sitemap><sitemap><loc>http://site.test/s2.xml.gz</loc><lastmod>2024-01-01</lastmod></sitemap></sitemapindex>`;
    assert.deepEqual(parseSitemap(xml), { kind: 'sitemapindex', locs: ['http://site.test/s1.xml', 'http://site.test/s2.xml.gz'], truncated: false });
  });

  it('reads a text sitemap: one URL per line, other lines ignored', () => {
    assert.deepEqual(parseSitemap('\uFEFFhttp://site.test/a\r\n\n# comment\nhttps://site.test/b\nnot a url\n'), { kind: 'text', locs: ['http://site.test/a', 'https://site.test/b'], truncated: false });
  });

  it('keeps the entries before broken or cut-off markup', () => {
    const cut = urlset(['http://site.test/1', 'http://site.test/2', 'http://site.test/3']).slice(0, -60);
    assert.deepEqual(parseSitemap(cut).locs, ['http://site.test/1', 'http://site.test/2']);
    const broken = '<urlset><url><loc>http://site.test/1</loc></url><url><loc>http://site.test/2</lo></url><<<>>></urlset>';
    assert.deepEqual(parseSitemap(broken).locs.slice(0, 1), ['http://site.test/1']);
  });

  it('refuses a document that is not a sitemap', () => {
    for (const body of ['<html><body><a href="http://site.test/">x</a></body></html>', '<rss><channel><link>http://site.test/</link></channel></rss>', '<']) {
      assert.throws(() => parseSitemap(body), (err: unknown) => err instanceof SitemapError && err.code === 'not-a-sitemap', body);
    }
  });

  it('keeps at most maxLocs entries and says it cut the rest', () => {
    const urls = Array.from({ length: 10 }, (_, i) => `http://site.test/${i}`);
    assert.deepEqual(parseSitemap(urlset(urls), 4), { kind: 'urlset', locs: urls.slice(0, 4), truncated: true });
    assert.deepEqual(parseSitemap(urls.join('\n'), 4), { kind: 'text', locs: urls.slice(0, 4), truncated: true });
    assert.equal(parseSitemap(urlset(urls), 10).truncated, false);
  });

  it('the default cap is the protocol\'s 50,000 URLs', () => {
    const urls = Array.from({ length: 50_001 }, (_, i) => `http://site.test/${i}`);
    const parsed = parseSitemap(urlset(urls));
    assert.equal(parsed.locs.length, 50_000);
    assert.equal(parsed.truncated, true);
  });
});

describe('decodeSitemapBody', () => {
  const xml = Buffer.from(urlset(['http://site.test/gz']));

  it('gunzips gzip by its magic bytes and passes plain XML through', () => {
    assert.deepEqual(parseSitemap(decodeSitemapBody(gzipSync(xml))).locs, ['http://site.test/gz']);
    assert.equal(decodeSitemapBody(xml), xml);
  });

  it('caps the uncompressed size, for plain files and for gzip bombs', () => {
    assert.throws(() => decodeSitemapBody(Buffer.alloc(2_000, 'a'), 1_000), (err: unknown) => err instanceof SitemapError && err.code === 'too-large');
    const bomb = gzipSync(Buffer.alloc(10 * 1024 * 1024));
    assert.ok(bomb.length < 20_000);
    assert.throws(() => decodeSitemapBody(bomb, 1024 * 1024), (err: unknown) => err instanceof SitemapError && err.code === 'too-large');
  });

  it('refuses broken gzip', () => {
    const broken = gzipSync(xml).subarray(0, 30);
    assert.throws(() => decodeSitemapBody(broken), (err: unknown) => err instanceof SitemapError && err.code === 'bad-gzip');
  });
});

describe('page outcome: canonical duplicates, content types and filtered links', () => {
  const PAGE = 'http://site.test/a';
  const page = (html: string | null, overrides: Partial<FetchedPage> = {}): FetchedPage => ({
    finalUrl: PAGE,
    status: 200,
    contentType: 'text/html',
    bytes: 100,
    retryAfterMs: null,
    redirectBlocked: null,
    robotsHeader: null,
    headers: { 'content-type': 'text/html' },
    requestHeaders: {},
    redirects: [],
    html,
    body: html === null ? null : Buffer.from(html),
    latencyMs: 1,
    ...overrides,
  });
  const outcome = (html: string | null, input: Partial<CrawlInput> = {}, overrides: Partial<FetchedPage> = {}) => {
    const config = parseCrawlConfig({ seeds: ['http://site.test/'], ...input });
    return fetchedOutcome({ url: PAGE, depth: 2 }, page(html, overrides), config, buildPagePolicy(config));
  };

  it('a page whose canonical is another followable URL is its duplicate: that URL is queued instead, at the same depth', () => {
    const { record, discovered } = outcome('<link rel="canonical" href="/main?utm_source=x"><a href="/other">o</a>');
    assert.equal(record.skipped, 'canonical');
    assert.equal(record.canonical, 'http://site.test/main', 'normalized with the crawl rules');
    assert.equal(record.status, 200);
    assert.deepEqual(record.links, ['http://site.test/other'], 'links are still recorded');
    assert.deepEqual(discovered, [{ url: 'http://site.test/main', host: 'site.test', depth: 2 }]);
  });

  it('a self-canonical page, or one canonical to where it redirected, is an ordinary page', () => {
    assert.equal(outcome('<link rel="canonical" href="/a#x"><a href="/b">b</a>').record.skipped, null);
    const redirected = outcome('<link rel="canonical" href="/final"><a href="/b">b</a>', {}, { finalUrl: 'http://site.test/final' });
    assert.equal(redirected.record.skipped, null);
    assert.deepEqual(redirected.discovered.map((entry) => entry.url), ['http://site.test/b']);
  });

  it('a canonical the crawl may not follow leaves the page as it is', () => {
    assert.equal(outcome('<link rel="canonical" href="http://other.test/a">').record.skipped, null);
    assert.equal(outcome('<link rel="canonical" href="/private/a">', { exclude: ['/private/**'] }).record.skipped, null);
  });

  it('respectCanonical: false ignores canonicals', () => {
    const { record, discovered } = outcome('<link rel="canonical" href="/main"><a href="/b">b</a>', { respectCanonical: false });
    assert.equal(record.skipped, null);
    assert.equal(record.canonical, 'http://site.test/main');
    assert.deepEqual(discovered.map((entry) => entry.url), ['http://site.test/b']);
  });

  it('a successful response of a type the crawl does not keep is skipped as content-type', () => {
    assert.equal(outcome(null, {}, { contentType: 'application/pdf' }).record.skipped, 'content-type');
    assert.equal(outcome(null, {}, { contentType: 'application/pdf', status: 404 }).record.skipped, null, 'error pages are what they are');
    assert.equal(outcome(null, { allowedContentTypes: ['text/html', 'application/pdf'] }, { contentType: 'application/pdf' }).record.skipped, null);
    assert.equal(outcome('<p>x', { allowedContentTypes: ['application/xhtml+xml'] }).record.skipped, 'content-type');
  });

  it('links are dropped by reason: out-of-scope, excluded, not-included', () => {
    const links = ['/docs/1', '/docs/secret/2', '/blog/3', 'http://other.test/4', '/docs/5'].map((href) => `<a href="${href}">x</a>`).join('');
    const { discovered, dropped } = outcome(links, { include: ['/docs/**'], exclude: ['/docs/secret/**'] });
    assert.deepEqual(discovered.map((entry) => entry.url), ['http://site.test/docs/1', 'http://site.test/docs/5']);
    assert.deepEqual(dropped, { excluded: 1, 'not-included': 1, 'out-of-scope': 1 });
  });

  it('a redirect the filters refuse is skipped with the reason', () => {
    const blocked = (target: string, input: Partial<CrawlInput> = {}) => outcome(null, input, { redirectBlocked: target, status: 302 }).record.skipped;
    assert.equal(blocked('http://other.test/x'), 'redirect-out-of-scope');
    assert.equal(blocked('http://site.test/private/x', { exclude: ['/private/**'] }), 'redirect-excluded');
    assert.equal(blocked('http://site.test/x', { include: ['/docs/**'] }), 'redirect-not-included');
  });
});

describe('discovery and scope flags', () => {
  const request = (argv: string[]) => {
    const command = addCrawlOptions(new Command()).exitOverride().argument('[seeds...]');
    command.parse(argv, { from: 'user' });
    return crawlRequestFrom(command.args, command.opts<CrawlFlags>());
  };

  it('set every discovery field, repeatable ones as lists', () => {
    const { config } = request([
      'http://site.test/',
      '--include', '/docs/**', '--include', 're:/blog/',
      '--exclude', '/docs/old/**',
      '--sitemap', 'http://site.test/sitemap.xml', '--sitemap', 'http://site.test/news.xml.gz',
      '--sitemaps-from-robots',
      '--allowed-content-type', 'text/html', '--allowed-content-type', 'text/*',
      '--ignore-canonical',
      '--strip-param', 'sid', '--strip-param', 'utm_*',
      '--sort-query',
      '--trailing-slash', 'strip',
    ]);
    assert.deepEqual(config.include, ['/docs/**', 're:/blog/']);
    assert.deepEqual(config.exclude, ['/docs/old/**']);
    assert.deepEqual(config.sitemaps, { urls: ['http://site.test/sitemap.xml', 'http://site.test/news.xml.gz'], fromRobots: true, maxUrls: 50_000, maxFiles: 100, maxIndexDepth: 2 });
    assert.deepEqual(config.allowedContentTypes, ['text/html', 'text/*']);
    assert.equal(config.respectCanonical, false);
    assert.deepEqual(config.normalize, { removeFragment: true, trailingSlash: 'strip', stripParams: ['sid', 'utm_*'], sortQuery: true, lowercasePath: false });
  });

  it('flags merge into a config file field by field, and errors name the flag or the file field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlflow-discovery-'));
    const file = join(dir, 'crawl.json');
    writeFileSync(file, JSON.stringify({ seeds: ['http://site.test/'], sitemaps: { maxUrls: 10, urls: ['http://site.test/a.xml'] }, normalize: { lowercasePath: true } }));
    const { config } = request(['--config', file, '--sitemap', 'http://site.test/b.xml', '--sort-query']);
    assert.deepEqual(config.sitemaps.urls, ['http://site.test/b.xml'], 'the flag replaces the list');
    assert.equal(config.sitemaps.maxUrls, 10, 'the rest of the file object stays');
    assert.equal(config.normalize.lowercasePath, true);
    assert.equal(config.normalize.sortQuery, true);

    assert.throws(() => request([]), (err: unknown) => err instanceof UsageError && /needs at least one seed/.test(err.message));
    assert.throws(() => request(['http://site.test/', '--exclude', 're:(']), /^Error: --exclude: "re:\(": invalid regular expression/);
    assert.throws(() => request(['http://site.test/', '--sitemap', 'ftp://x/']), /--sitemap: must be an absolute http\(s\) URL/);
    assert.throws(() => request(['http://site.test/', '--trailing-slash', 'sometimes']), /--trailing-slash: /);
    assert.throws(() => request(['http://site.test/', '--allowed-content-type', 'pdf']), /--allowed-content-type: must be a media type/);
    writeFileSync(file, JSON.stringify({ seeds: ['http://site.test/'], sitemaps: { maxIndexDepth: 9 } }));
    assert.throws(() => request(['--config', file, '--sitemap', 'http://site.test/b.xml']), new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: sitemaps.maxIndexDepth`));
  });
});
