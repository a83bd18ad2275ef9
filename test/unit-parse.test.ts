/**
 * HTML parsing (title, links, canonical, robots directives) and the pure page-outcome step
 * that applies crawl policy (scope, depth, nofollow) to a fetched page.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildPagePolicy, failedOutcome, fetchedOutcome, skippedOutcome } from '../src/activities/page-outcome';
import type { FetchedPage } from '../src/fetch/fetch-page';
import { parseHtmlPage, type ParseLimits } from '../src/parse/html-page';
import { ScanTokenizer } from '../src/parse/scan-tokenizer';
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';
import { seededRandom } from '../src/sites/synthetic-site';
import { parseCrawlConfig } from '../src/shared/crawl-config';

const PAGE = 'http://site.test/dir/page.html';
const LIMITS: ParseLimits = { maxLinks: 1_000, maxUrlLength: 2_048 };

const parse = (html: string, robotsHeader: string | null = null, limits: Partial<ParseLimits> = {}) =>
  parseHtmlPage(html, PAGE, robotsHeader, { ...LIMITS, ...limits });
const anchors = (hrefs: readonly string[]) => hrefs.map((href) => `<a href="${href}">x</a>`).join('\n');

describe('parseHtmlPage', () => {
  describe('title', () => {
    it('collapses whitespace and decodes entities', () => {
      assert.equal(parse('<title>\n   Hello \t\n  World &amp; Co\u00a0 </title>').title, 'Hello World & Co');
    });

    it('is null when missing or blank, and the first title wins', () => {
      assert.equal(parse('<p>no title</p>').title, null);
      assert.equal(parse('<title>  \n </title>').title, null);
      assert.equal(parse('<head><title>First</title><title>Second</title></head>').title, 'First');
    });
  });

  describe('links', () => {
    it('are absolute, normalized, de-duplicated, in document order', () => {
      const { links } = parse(
        anchors([
          'other.html',
          '../up.html#section',
          '/root?b=2&a=1',
          'HTTP://Example.COM:80/x',
          'other.html#again',
          'https://secure.test:443/s',
          '//proto-relative.test/p',
          '/root?b=2&a=1',
        ]),
      );
      assert.deepEqual(links, [
        'http://site.test/dir/other.html',
        'http://site.test/up.html',
        'http://site.test/root?b=2&a=1',
        'http://example.com/x',
        'https://secure.test/s',
        'http://proto-relative.test/p',
      ]);
    });

    it('decode character references in hrefs as a browser does: none before a letter, digit or = without its ;', () => {
      const { links, title } = parse(
        '<title>&copy 2026 &amp; &lt;site&gt;</title>' +
          anchors(['/q?a=1&amp;b=2', '/q?a=1&copy=2', '/q?x&notin', '/q?&lt;tag&gt;', '/q?&#x41;&#66;', '/q?a&amp']),
      );
      assert.equal(title, '\u00a9 2026 & <site>', 'text decodes a reference without its ; too');
      assert.deepEqual(links, [
        'http://site.test/q?a=1&b=2',
        'http://site.test/q?a=1&copy=2',
        'http://site.test/q?x&notin',
        'http://site.test/q?%3Ctag%3E',
        'http://site.test/q?AB',
        // `&amp` at the end is `&`, an empty parameter the normalizer drops.
        'http://site.test/q?a',
      ]);
    });

    it('include <area href> and skip non-http, credentialed and href-less anchors', () => {
      const { links } = parse(`
        <a>no href</a><a name="x">anchor</a>
        <a href="mailto:me@site.test">mail</a><a href="javascript:void(0)">js</a><a href="tel:123">tel</a>
        <a href="http://user:pw@site.test/secret">creds</a><a href="http://[bad/">bad</a>
        <link rel="stylesheet" href="/style.css"><img src="/img.png"><script src="/app.js"></script>
        <map><area href="/area-target" alt=""></map>
        <a href="  /padded  ">padded</a>`);
      assert.deepEqual(links, ['http://site.test/area-target', 'http://site.test/padded']);
    });

    it('resolve against <base href>, itself relative to the page', () => {
      assert.deepEqual(parse(`<head><base href="http://cdn.test/assets/"></head>${anchors(['a.html', '/b.html'])}`).links, [
        'http://cdn.test/assets/a.html',
        'http://cdn.test/b.html',
      ]);
      assert.deepEqual(parse(`<base href="../other/">${anchors(['c.html'])}`).links, ['http://site.test/other/c.html']);
      assert.deepEqual(parse(`<base href="javascript:alert(1)">${anchors(['d.html'])}`).links, ['http://site.test/dir/d.html'], 'an unusable base is ignored');
      assert.deepEqual(parse(`<base target="_blank"><base href="/first/"><base href="/second/">${anchors(['e'])}`).links, ['http://site.test/first/e']);
    });

    it('are capped at maxLinks distinct URLs, even on a 100,000-link page', () => {
      const html = `<html><body>${Array.from({ length: 100_000 }, (_, n) => `<a href="/p/${n}">${n}</a>`).join('')}</body></html>`;
      const { links } = parse(html, null, { maxLinks: 500 });
      assert.equal(links.length, 500);
      assert.equal(links[0], 'http://site.test/p/0');
      assert.equal(links[499], 'http://site.test/p/499');

      assert.deepEqual(parse(anchors(['/a', '/a#1', '/a', '/b', '/c']), null, { maxLinks: 2 }).links, ['http://site.test/a', 'http://site.test/b'], 'duplicates do not use up the cap');
      assert.deepEqual(parse(anchors(['/a']), null, { maxLinks: 0 }).links, []);
    });

    it('longer than maxUrlLength (after normalization) are dropped', () => {
      const limit = 40;
      const fits = '/' + 'a'.repeat(limit - 'http://site.test/'.length); // exactly `limit` characters absolute
      const tooLong = fits + 'b';
      const { links } = parse(anchors([tooLong, fits, '/short']), null, { maxUrlLength: limit });
      assert.deepEqual(links, [`http://site.test${fits}`, 'http://site.test/short']);
      assert.equal(links[0].length, limit);
    });
  });

  describe('tags and attributes', () => {
    it('names in any case, the first of a repeated attribute, bare and self-closing tags, nothing read from other tags', () => {
      const page = parse(
        '<A HREF="/upper" href="/second">a</A><a href>bare</a><area Href=/area /><div href="/div"></div>' +
          '<LINK REL="Canonical" HREF="/c" href="/c2"><META NAME="Robots" CONTENT="noindex" content="nofollow"><BASE href="/b/" HREF="/b2/"><TITLE>T</TITLE>',
      );
      assert.deepEqual(page.links, ['http://site.test/upper', 'http://site.test/b/', 'http://site.test/area']);
      assert.equal(page.canonical, 'http://site.test/c');
      assert.equal(page.noindex, true);
      assert.equal(page.nofollow, false);
      assert.equal(page.title, 'T');
    });

    it('tags inside comments, scripts, styles and the title are text, not tags', () => {
      const page = parse('<!-- <a href="/comment"> --><script>"<a href=/script>"</script><style>a{}</style><title><a href="/t">x</a></title><a href="/real">r</a>');
      assert.deepEqual(page.links, ['http://site.test/real']);
      assert.equal(page.title, '<a href="/t">x</a>');
    });
  });

  describe('canonical', () => {
    it('is absolute and normalized, null when absent or unusable', () => {
      assert.equal(parse('<link rel="canonical" href="/canon#x">').canonical, 'http://site.test/canon');
      assert.equal(parse('<base href="http://cdn.test/b/"><link rel="canonical" href="c">').canonical, 'http://cdn.test/b/c');
      assert.equal(parse('<link rel="canonical" href="https://Site.test:443/A">').canonical, 'https://site.test/A');
      assert.equal(parse('<link rel="alternate" href="/alt">').canonical, null);
      assert.equal(parse('<link rel="canonical" href="javascript:x">').canonical, null);
      assert.equal(parse('<p>none</p>').canonical, null);
    });
  });

  describe('robots directives', () => {
    const directives = (html: string, header: string | null = null) => {
      const { noindex, nofollow } = parse(html, header);
      return { noindex, nofollow };
    };

    it('come from <meta name="robots">, case-insensitively', () => {
      assert.deepEqual(directives('<meta name="robots" content="nofollow">'), { noindex: false, nofollow: true });
      assert.deepEqual(directives('<meta name="robots" content="noindex">'), { noindex: true, nofollow: false });
      assert.deepEqual(directives('<meta name="ROBOTS" content="NoIndex, NoFollow">'), { noindex: true, nofollow: true });
      assert.deepEqual(directives('<meta name="robots" content="none">'), { noindex: true, nofollow: true });
      assert.deepEqual(directives('<meta name="robots" content="index, follow, noarchive">'), { noindex: false, nofollow: false });
      assert.deepEqual(directives('<meta name="crawlflow" content="nofollow">'), { noindex: false, nofollow: true }, 'our own user-agent name');
      assert.deepEqual(directives('<meta name="description" content="noindex nofollow">'), { noindex: false, nofollow: false });
      assert.deepEqual(directives('<p>plain</p>'), { noindex: false, nofollow: false });
    });

    it('combine several <meta> tags', () => {
      assert.deepEqual(directives('<meta name="robots" content="noindex"><meta name="robots" content="nofollow">'), { noindex: true, nofollow: true });
    });

    it('come from the X-Robots-Tag header', () => {
      assert.deepEqual(directives('<p>x</p>', 'noindex'), { noindex: true, nofollow: false });
      assert.deepEqual(directives('<p>x</p>', 'NOFOLLOW, noarchive'), { noindex: false, nofollow: true });
      assert.deepEqual(directives('<p>x</p>', 'none'), { noindex: true, nofollow: true });
      assert.deepEqual(directives('<p>x</p>', 'noarchive'), { noindex: false, nofollow: false });
      assert.deepEqual(directives('<meta name="robots" content="noindex">', 'nofollow'), { noindex: true, nofollow: true }, 'header and meta combine');
    });
  });

  it('does not throw on malformed HTML and still finds what it can', () => {
    const broken = `<html><head><title>Broken <b>page</title>
      <body><div><p>unclosed <a href=/unquoted>one</a <a href='/single'>two
      <a href="/three"><a href="/nested">nested</a></a> <!-- unterminated comment
      </div></span></table>\u0000<<<>>> &bogus; &#xD800; <a href="/after-comment">lost</a>`;
    const parsed = parse(broken);
    assert.equal(parsed.title, 'Broken <b>page', 'title is raw text');
    assert.ok(parsed.links.includes('http://site.test/unquoted'));
    assert.ok(parsed.links.includes('http://site.test/three'));
    for (const html of ['', '<', '</a>', '<a href>', '<a href="">', '<html', '\u0000\u0001\u0002', '<svg><a href="/svg"/></svg>']) {
      assert.doesNotThrow(() => parse(html), JSON.stringify(html));
    }
    assert.deepEqual(parse('<a href="">self</a>').links, [PAGE], 'an empty href is the page itself');
  });
});

describe('ScanTokenizer: htmlparser2\'s tokenizer with its text skip done by indexOf', () => {
  const EVENT_NAMES = [
    'onattribdata', 'onattribentity', 'onattribend', 'onattribname', 'oncdata', 'onclosetag', 'oncomment', 'ondeclaration',
    'onend', 'onopentagend', 'onopentagname', 'onprocessinginstruction', 'onselfclosingtag', 'ontext', 'ontextentity',
  ] as const;
  /** Every event the tokenizer emits, with its arguments, for `html` written in `chunks` pieces. */
  const eventsOf = (Kind: typeof Tokenizer, html: string, decodeEntities: boolean, chunks: number): string[] => {
    const events: string[] = [];
    const callbacks = Object.fromEntries(EVENT_NAMES.map((name) => [name, (...args: unknown[]) => events.push(`${name}(${args.join(',')})`)])) as unknown as TokenizerCallbacks;
    const tokenizer = new Kind({ decodeEntities }, callbacks);
    const size = Math.ceil(html.length / chunks);
    for (let start = 0; start < html.length; start += size) tokenizer.write(html.slice(start, start + size));
    tokenizer.end();
    return events;
  };
  const assertSameEvents = (html: string): void => {
    for (const decodeEntities of [false, true]) {
      for (const chunks of [1, 3, 7]) {
        assert.deepEqual(eventsOf(ScanTokenizer, html, decodeEntities, chunks), eventsOf(Tokenizer, html, decodeEntities, chunks), `${JSON.stringify(html)}, entities ${decodeEntities}, ${chunks} chunk(s)`);
      }
    }
  };

  it('emits what the original emits on text, comments, CDATA and raw-text elements, whole and in chunks', () => {
    const cases = [
      '', 'plain text with no markup', 'text <', '<', 'a<b', '<p>one</p> two < three <a href="x">x</a>',
      '<!-- a comment -- with dashes --> after', '<!-- never closed', '<!--->', '<![CDATA[ x ]] ]]> y', '<![CDATA[ unclosed ]',
      '<script>if (a < b) { x = "</p>"; }</script><p>after</p>', '<style>a > b { }</style>', '<title>a < b &amp; c</title>',
      '<textarea>one <b>two</b></textarea>', '&amp; &lt;text&gt; &#65;<a>&quot;</a>', '<a href="&amp;x">&', 'x'.repeat(5_000) + '<b>' + 'y'.repeat(5_000),
    ];
    for (const html of cases) assertSameEvents(html);
  });

  it('emits what the original emits on 3,000 random pages of markup fragments', () => {
    const random = seededRandom(13);
    const pieces = ['<', '>', '</', '/>', '<!--', '-->', '-', '<![CDATA[', ']]>', ']', '<script>', '</script>', '<title>', '</title>', '<a href="', '"', "'", '=', ' ', '\n', '&amp;', '&', 'text', 'é', '<p>', '<!doctype html>', '<?xml ?>'];
    for (let page = 0; page < 3_000; page += 1) {
      const length = 1 + Math.floor(random() * 40);
      assertSameEvents(Array.from({ length }, () => pieces[Math.floor(random() * pieces.length)]).join(''));
    }
  });
});

describe('fetchedOutcome', () => {
  const config = parseCrawlConfig({ seeds: ['http://site.test/'], maxDepth: 3, maxLinksPerPage: 50 });
  const policy = buildPagePolicy(config);

  function fetched(body: string | null, overrides: Partial<FetchedPage> = {}): FetchedPage {
    return {
      finalUrl: PAGE,
      status: 200,
      contentType: 'text/html',
      bytes: 1_234,
      retryAfterMs: null,
      redirectBlocked: null,
      robotsHeader: null,
      latencyMs: 10,
      html: body,
      body: body === null ? null : Buffer.from(body),
      headers: {},
      requestHeaders: {},
      redirects: [],
      ...overrides,
    };
  }

  const LINKS = anchors(['/in/1', 'http://other.test/out', '/in/2', 'https://site.test/tls', 'http://site.test:8080/port']);
  const ALL = ['http://site.test/in/1', 'http://other.test/out', 'http://site.test/in/2', 'https://site.test/tls', 'http://site.test:8080/port'];

  it('records the page and discovers only in-scope links, one level deeper', () => {
    const { record, discovered } = fetchedOutcome({ url: PAGE, depth: 1 }, fetched(`<title>T</title><link rel="canonical" href="http://other.test/c">${LINKS}`), config, policy);
    assert.equal(record.url, PAGE);
    assert.equal(record.depth, 1);
    assert.equal(record.status, 200);
    assert.equal(record.title, 'T');
    assert.equal(record.canonical, 'http://other.test/c', 'an out-of-scope canonical is recorded, the page kept');
    assert.equal(record.bytes, 1_234);
    assert.equal(record.contentType, 'text/html');
    assert.equal(record.finalUrl, null, 'not redirected');
    assert.equal(record.error, null);
    assert.equal(record.skipped, null);
    assert.ok(!Number.isNaN(Date.parse(record.fetchedAt)));
    assert.deepEqual(record.links, ALL, 'every link is recorded, in scope or not');
    assert.deepEqual(discovered, [
      { url: 'http://site.test/in/1', host: 'site.test', depth: 2 },
      { url: 'http://site.test/in/2', host: 'site.test', depth: 2 },
      { url: 'https://site.test/tls', host: 'site.test', depth: 2 },
    ]);
  });

  it('nofollow (meta or header) discovers nothing but still records the links', () => {
    const viaMeta = fetchedOutcome({ url: PAGE, depth: 0 }, fetched(`<meta name="robots" content="nofollow">${LINKS}`), config, policy);
    assert.deepEqual(viaMeta.discovered, []);
    assert.deepEqual(viaMeta.record.links, ALL);
    const viaHeader = fetchedOutcome({ url: PAGE, depth: 0 }, fetched(LINKS, { robotsHeader: 'nofollow' }), config, policy);
    assert.deepEqual(viaHeader.discovered, []);
    assert.deepEqual(viaHeader.record.links, ALL);
  });

  it('noindex is recorded without stopping discovery', () => {
    const { record, discovered } = fetchedOutcome({ url: PAGE, depth: 0 }, fetched(`<meta name="robots" content="noindex">${LINKS}`), config, policy);
    assert.equal(record.noindex, true);
    assert.equal(discovered.length, 3);
  });

  it('a page at maxDepth discovers nothing; one just above it does', () => {
    const atMax = fetchedOutcome({ url: PAGE, depth: config.maxDepth }, fetched(LINKS), config, policy);
    assert.deepEqual(atMax.discovered, []);
    assert.deepEqual(atMax.record.links, ALL);
    const below = fetchedOutcome({ url: PAGE, depth: config.maxDepth - 1 }, fetched(LINKS), config, policy);
    assert.ok(below.discovered.length > 0);
    assert.ok(below.discovered.every((entry) => entry.depth === config.maxDepth));
  });

  it('resolves links against the final URL of a redirect and records it', () => {
    const finalUrl = 'http://site.test/moved/here/';
    const { record, discovered } = fetchedOutcome({ url: PAGE, depth: 0 }, fetched(anchors(['next', 'http://elsewhere.test/x']), { finalUrl }), config, policy);
    assert.equal(record.finalUrl, finalUrl);
    assert.deepEqual(discovered, [{ url: 'http://site.test/moved/here/next', host: 'site.test', depth: 1 }]);
  });

  it('caps links with maxLinksPerPage from the config', () => {
    const many = anchors(Array.from({ length: 200 }, (_, n) => `/p/${n}`));
    const { record, discovered } = fetchedOutcome({ url: PAGE, depth: 0 }, fetched(many), config, policy);
    assert.equal(record.links.length, 50);
    assert.equal(discovered.length, 50);
  });

  it('a blocked redirect is skipped and records its target without discovering it', () => {
    const target = 'http://other.test/landing';
    const { record, discovered } = fetchedOutcome({ url: PAGE, depth: 0 }, fetched(null, { status: 301, redirectBlocked: target, bytes: 0 }), config, policy);
    assert.equal(record.skipped, 'redirect-out-of-scope');
    assert.equal(record.status, 301);
    assert.deepEqual(record.links, [target]);
    assert.deepEqual(discovered, []);
  });

  it('a response without HTML records status and type only', () => {
    const { record, discovered } = fetchedOutcome({ url: PAGE, depth: 0 }, fetched(null, { contentType: 'application/pdf', bytes: 0 }), config, policy);
    assert.equal(record.status, 200);
    assert.equal(record.contentType, 'application/pdf');
    assert.equal(record.title, null);
    assert.deepEqual(record.links, []);
    assert.deepEqual(discovered, []);
  });

  it('failedOutcome and skippedOutcome carry the reason and discover nothing', () => {
    const failed = failedOutcome({ url: PAGE, depth: 2 }, 'timeout');
    assert.equal(failed.record.error, 'timeout');
    assert.equal(failed.record.status, null);
    assert.equal(failed.record.depth, 2);
    assert.deepEqual(failed.discovered, []);
    assert.equal(failedOutcome({ url: PAGE, depth: 0 }, 'too-large', 200).record.status, 200);
    const skipped = skippedOutcome({ url: PAGE, depth: 0 }, 'robots');
    assert.equal(skipped.record.skipped, 'robots');
    assert.equal(skipped.record.error, null);
    assert.deepEqual(skipped.discovered, []);
  });
});
