/**
 * Content features without a crawl: the `extract` setting's validation (errors name the
 * field) and extraction itself, WARC records (digests, honest headers, read back by our
 * reader and by Python's warcio), the body store's references, and the CSV export parsed
 * back with a CSV parser.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { InvalidCrawlConfigError, parseCrawlConfig, type CrawlConfig } from '../src/shared/crawl-config';
import { compileExtractor, MAX_PAGE_FIELD_CHARS } from '../src/parse/extract-fields';
import { loadExtractor } from '../src/parse/load-extractor';
import { parseHtmlPage } from '../src/parse/html-page';
import { base32, captureRecords, exchangeRecords, revisitRecords, REVISIT_PROFILES, sha1Digest, warcinfoRecord, type HttpExchange } from '../src/warc/warc-record';
import { BadWarcError, readStoredResponse, readWarcRecords } from '../src/warc/warc-reader';
import { BadBodyRefError, FileBodyStore } from '../src/bodies/body-store';
import { crawlStorePath, SqliteFrontierStore } from '../src/store/sqlite-store';
import type { PageRecord } from '../src/store/frontier-store';
import { exportCsv } from '../src/results/export-csv';
import { exportJsonl } from '../src/results/export-jsonl';
import { buildPagePolicy, fetchedOutcome } from '../src/activities/page-outcome';
import type { FetchedPage } from '../src/fetch/fetch-page';
import { changeOf, conditionalHeaders } from '../src/recrawl/change';
import { warcioCheck, warcioRecords } from './helpers/warcio';
import { csvRecords } from './helpers/csv';

const SEED = 'http://site.test/';
const tempDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crawlflow-unit-content-'));
  tempDirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

function configError(extract: unknown): InvalidCrawlConfigError {
  try {
    parseCrawlConfig({ seeds: [SEED], extract });
  } catch (err) {
    assert.ok(err instanceof InvalidCrawlConfigError);
    return err;
  }
  assert.fail(`accepted ${JSON.stringify(extract)}`);
}

describe('extract setting', () => {
  it('takes an "@" where CSS has one: escaped, quoted, in brackets or parentheses', () => {
    for (const selector of ['.\\@lg\\:flex', 'a[href^="mailto:"][title*="@"]', "p:contains('@home')", 'a[data-x=@]']) {
      assert.equal(parseCrawlConfig({ seeds: [SEED], extract: { f: selector } }).extract.f.selector, selector);
    }
  });

  it('accepts both forms and fills defaults', () => {
    const { extract } = parseCrawlConfig({
      seeds: [SEED],
      extract: { heading: 'h1', image: 'img.hero @src', tags: { selector: '.tag', list: true }, body: { selector: 'main', type: 'html', maxChars: 50 } },
    });
    assert.deepEqual(extract, {
      heading: { selector: 'h1', type: 'text', list: false, maxChars: 1_000, maxItems: 100 },
      image: { selector: 'img.hero', type: 'attribute', attribute: 'src', list: false, maxChars: 1_000, maxItems: 100 },
      tags: { selector: '.tag', type: 'text', list: true, maxChars: 1_000, maxItems: 100 },
      body: { selector: 'main', type: 'html', list: false, maxChars: 50, maxItems: 100 },
    });
  });

  it('rejects what cannot work, naming the field', () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ title: 'a[href' }, 'extract.title.selector', /invalid CSS selector "a\[href": .*terminate/],
      [{ title: { selector: 'p:nosuch' } }, 'extract.title.selector', /Unknown pseudo-class :nosuch/],
      [{ title: '   ' }, 'extract.title.selector', /must be a CSS selector/],
      // css-select alone takes `@1x` and `@src` for element names, and such a field would match nothing.
      [{ hero: 'img @1x' }, 'extract.hero.selector', /^invalid CSS selector "img @1x": a stray "@" \(an attribute is read by ending the field with one " @name"/],
      [{ hero: 'img @src @alt' }, 'extract.hero.selector', /^invalid CSS selector "img @src": a stray "@"/],
      [{ hero: ' @src' }, 'extract.hero.selector', /^invalid CSS selector "@src": a stray "@"/],
      [{ link: { selector: 'a', type: 'attribute' } }, 'extract.link.attribute', /required when type is 'attribute'/],
      [{ link: { selector: 'a', attribute: 'href' } }, 'extract.link.attribute', /only allowed when type is 'attribute'/],
      [{ link: { selector: 'a', type: 'json' } }, 'extract.link.type', /text|attribute|html/],
      [{ link: { selector: 'a', xpath: '//a' } }, 'extract.link.xpath', /unknown field/],
      [{ 'bad name': 'h1' }, 'extract.bad name', /field names are/],
      [{ items: { selector: 'li', list: true, maxItems: 0 } }, 'extract.items.maxItems', />=\s*1/],
      [Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`f${i}`, 'p'])), 'extract', /at most 50 fields/],
    ];
    for (const [extract, field, reason] of cases) {
      const err = configError(extract);
      assert.equal(err.field, field, JSON.stringify(extract).slice(0, 80));
      assert.match(err.reason, reason);
    }
  });

  it('rejects an empty recrawlOf and a non-boolean storeBodies', () => {
    assert.throws(() => parseCrawlConfig({ seeds: [SEED], recrawlOf: '' }), (err: unknown) => err instanceof InvalidCrawlConfigError && err.field === 'recrawlOf');
    assert.throws(() => parseCrawlConfig({ seeds: [SEED], storeBodies: 'yes' }), (err: unknown) => err instanceof InvalidCrawlConfigError && err.field === 'storeBodies');
  });
});

describe('extraction', () => {
  const PAGE = `<!doctype html><html><head><title>T</title></head><body>
    <h1>  Hello
       <b>world</b> </h1><h1>second</h1>
    <img class="hero" src="/hero.png"><img class="hero">
    <ul><li class="tag">a</li><li class="tag"> b </li><li class="tag">c</li></ul>
    <main><p>x &amp; <i>y</i></p></main>
  </body></html>`;
  const extract = (spec: unknown, html = PAGE) => {
    const extractor = compileExtractor(parseCrawlConfig({ seeds: [SEED], extract: spec }).extract);
    return parseHtmlPage(html, SEED, null, { maxLinks: 10, maxUrlLength: 100, extractor }).fields;
  };

  it('takes text, attributes and inner HTML of the first match, or of every match for a list', () => {
    assert.deepEqual(
      extract({
        heading: 'h1',
        headings: { selector: 'h1', list: true },
        hero: 'img.hero @src',
        heroes: { selector: 'img.hero', type: 'attribute', attribute: 'src', list: true },
        tags: { selector: '.tag', list: true, maxItems: 2 },
        main: { selector: 'main', type: 'html' },
        missing: 'table',
        missingList: { selector: 'table', list: true },
      }),
      {
        heading: 'Hello world',
        headings: ['Hello world', 'second'],
        hero: '/hero.png',
        heroes: ['/hero.png'], // the second image has no src: left out of the list
        tags: ['a', 'b'],
        main: '<p>x &amp; <i>y</i></p>',
        missing: null,
        missingList: [],
      },
    );
  });

  it('no extract setting, no fields', () => {
    assert.equal(compileExtractor({}), undefined);
    assert.deepEqual(extract({}), {});
  });

  it('bounds values: per value, per list and per page', () => {
    const long = `<p>${'x'.repeat(5_000)}</p>`.repeat(400);
    const fields = extract({ one: { selector: 'p', maxChars: 10 }, all: { selector: 'p', list: true, maxChars: 100_000, maxItems: 10_000 } }, long);
    assert.equal(fields.one, 'x'.repeat(10));
    const all = fields.all as string[];
    const total = all.reduce((sum, value) => sum + value.length, 0);
    assert.equal(total + 10, MAX_PAGE_FIELD_CHARS, 'the page budget stops the list');
    assert.ok(all.length < 400);
  });

  it('cuts values and titles between characters, never between the halves of a surrogate pair', () => {
    const page = `<title>${'t'.repeat(1_023)}😀</title><h1>abcd😀efg</h1><h1>😀😀</h1>`;
    const fields = extract({ one: { selector: 'h1', maxChars: 5 }, all: { selector: 'h1', list: true, maxChars: 3 }, whole: { selector: 'h1', maxChars: 6 } }, page);
    assert.deepEqual(fields, { one: 'abcd', all: ['abc', '😀'], whole: 'abcd😀' });
    assert.equal(parseHtmlPage(page, SEED, null, { maxLinks: 10, maxUrlLength: 100 }).title, 't'.repeat(1_023), 'the 1,024-character title bound');
  });

  it('takes text as a browser lays it out: blocks, list items, cells and line breaks set apart, scripts and styles left out', () => {
    const page = `<div class="address"><p>10 Main St</p><p>Springfield</p></div>
      <table><tr><td>a</td><td>b</td></tr></table><ul><li>1</li><li>2</li></ul><p class="br">one<br>two</p>
      <div class="js">x<script>var y = 1;</script><style>p { color: red }</style><b>bold</b>y <i>it</i></div>`;
    assert.deepEqual(extract({ address: '.address', table: 'table', list: 'ul', br: '.br', js: '.js' }, page), {
      address: '10 Main St Springfield',
      table: 'a b',
      list: '1 2',
      br: 'one two',
      js: 'xboldy it',
    });
  });

  it('a page nested thousands deep (within the nesting bound) keeps its fields: text, lists and later matches; html, whose serializer recurses, is null', () => {
    const depth = 5_000;
    const page = `<h1>top</h1>${'<div>'.repeat(depth)}deep${'</div>'.repeat(depth)}<h2>after</h2>`;
    assert.deepEqual(extract({ text: 'div', html: { selector: 'div', type: 'html' }, some: { selector: 'div', list: true, maxItems: 2 }, top: 'h1', after: 'h2' }, page), {
      text: 'deep',
      html: null,
      some: ['deep', 'deep'],
      top: 'top',
      after: 'after',
    });
  });

  it('reads an attribute whatever the case its name is written in, as the selector matches it', () => {
    const page = '<img SRC="/upper.png" data-Lazy-Src="/lazy.png">';
    assert.deepEqual(extract({ compact: 'img[SRC] @SRC', lazy: { selector: 'img', type: 'attribute', attribute: 'data-lazy-SRC', list: true } }, page), {
      compact: '/upper.png',
      lazy: ['/lazy.png'],
    });
  });

  it('a worker loads the extractor only for a crawl that extracts; it runs next to the link scan (links still found)', async () => {
    assert.equal(await loadExtractor({}), undefined);
    const extractor = await loadExtractor(parseCrawlConfig({ seeds: [SEED], extract: { link: 'a @href' } }).extract);
    const parsed = parseHtmlPage('<a href="/x">x</a>', SEED, null, { maxLinks: 10, maxUrlLength: 100, extractor });
    assert.deepEqual(parsed.links, ['http://site.test/x']);
    assert.deepEqual(parsed.fields, { link: '/x' });
    // And it is a plain function of a page's HTML.
    assert.deepEqual(extractor?.('<a href="/y">'), { link: '/y' });
  });
});

function exchange(overrides: Partial<HttpExchange> = {}): HttpExchange {
  return {
    url: 'http://site.test/page?q=1',
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip', 'transfer-encoding': 'chunked', 'set-cookie': ['a=1', 'b=2'], etag: '"v1"' },
    requestHeaders: { 'user-agent': 'crawlflow-test', 'if-none-match': '"v0"' },
    body: Buffer.from('<title>é</title>'),
    ...overrides,
  };
}

describe('WARC records', () => {
  it('base32 and sha1 digests match known values', () => {
    assert.equal(base32(Buffer.from('foobar')), 'MZXW6YTBOI======');
    assert.equal(sha1Digest(Buffer.alloc(0)), 'sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ');
  });

  it('a page is a request and a response record, each its own gzip member; the response says its body is decoded', () => {
    const bytes = exchangeRecords(exchange(), new Date('2026-01-02T03:04:05.678Z'));
    const records = readWarcRecords(bytes);
    assert.deepEqual(records.map((record) => record.headers['warc-type']), ['request', 'response']);
    const [request, response] = records;
    assert.equal(request.headers['warc-concurrent-to'], response.headers['warc-record-id']);
    assert.equal(response.headers['warc-date'], '2026-01-02T03:04:05Z');
    assert.equal(response.headers['warc-target-uri'], 'http://site.test/page?q=1');
    assert.equal(response.headers['warc-payload-digest'], sha1Digest(exchange().body));
    assert.match(request.block.toString(), /^GET \/page\?q=1 HTTP\/1\.1\r\nhost: site\.test\r\nuser-agent: crawlflow-test\r\nif-none-match: "v0"\r\n\r\n$/);
    const stored = readStoredResponse(bytes);
    assert.equal(stored.status, 200);
    assert.deepEqual(stored.body, exchange().body);
    assert.deepEqual(stored.headers['set-cookie'], ['a=1', 'b=2']);
    assert.equal(stored.headers['content-encoding'], undefined, 'the stored body is not gzipped');
    assert.deepEqual(stored.headers['x-archive-orig-content-encoding'], ['gzip']);
    assert.deepEqual(stored.headers['x-archive-orig-transfer-encoding'], ['chunked']);
    assert.deepEqual(stored.headers['content-length'], [String(exchange().body.length)]);
    // Two gzip members: the first alone is the request record.
    const firstMemberEnd = bytes.indexOf(Buffer.from([0x1f, 0x8b]), 2);
    assert.ok(firstMemberEnd > 0);
    assert.match(gunzipSync(bytes.subarray(0, firstMemberEnd)).toString(), /^WARC\/1\.1\r\nWARC-Type: request/);
  });

  it('Python warcio reads and checks every record of a file of them', async () => {
    const file = join(tempDir(), 'unit.warc.gz');
    const pages = [exchange(), exchange({ url: 'http://site.test/b', status: 404, headers: {}, body: Buffer.from('gone') }), exchange({ url: 'http://site.test/empty', body: Buffer.alloc(0) })];
    const earlier = { id: '<urn:uuid:00000000-0000-4000-8000-000000000001>', uri: 'http://site.test/page?q=1', date: '2026-01-01T00:00:00Z' };
    writeFileSync(
      file,
      Buffer.concat([
        warcinfoRecord('unit.warc.gz', { software: 'crawlflow' }),
        ...pages.map((page) => exchangeRecords(page, new Date())),
        revisitRecords(exchange({ status: 304, body: Buffer.alloc(0) }), earlier, new Date()),
        revisitRecords(exchange(), earlier, new Date()),
      ]),
    );
    const check = await warcioCheck(file);
    assert.doesNotMatch(check, /fail/i, check);
    assert.equal(check.match(/digest pass/g)?.length, 1 + 2 * pages.length + 2, 'every record but the revisits is checked');
    const records = await warcioRecords(file);
    assert.deepEqual(records.map((record) => record.type), ['warcinfo', ...pages.flatMap(() => ['request', 'response']), 'request', 'revisit', 'request', 'revisit']);
    const [notModified, identical] = records.filter((record) => record.type === 'revisit');
    assert.deepEqual([notModified.profile, notModified.status, notModified.refersToUri, notModified.payloadLength], [REVISIT_PROFILES.notModified, '304', earlier.uri, 0]);
    assert.deepEqual([identical.profile, identical.payloadDigest, identical.payloadLength], [REVISIT_PROFILES.identicalPayload, sha1Digest(exchange().body), 0]);
    const responses = records.filter((record) => record.type === 'response');
    assert.deepEqual(responses.map((record) => [record.uri, record.status]), pages.map((page) => [page.url, String(page.status)]));
    for (const [i, record] of responses.entries()) {
      assert.equal(record.payloadSha256, createHash('sha256').update(pages[i].body).digest('hex'));
    }
  });
});

describe('WARC records of a redirected page', () => {
  const hops = [
    { ...exchange({ url: 'http://site.test/old', status: 301, headers: { location: '/moved' }, body: Buffer.from('moved') }), sentAt: Date.parse('2026-01-02T03:04:03Z') },
    { ...exchange({ url: 'http://site.test/moved', status: 302, headers: { location: '/page?q=1' }, body: Buffer.alloc(0), truncated: 'unspecified' as const }), sentAt: Date.parse('2026-01-02T03:04:04Z') },
  ];

  it('each hop is a request and its response before the page\'s own pair; the page\'s response is read back, and named as its payload', async () => {
    const { bytes, payload } = captureRecords({ exchange: exchange(), redirects: hops }, new Date('2026-01-02T03:04:05Z'));
    const records = readWarcRecords(bytes);
    assert.deepEqual(
      records.map((record) => [record.headers['warc-type'], record.headers['warc-target-uri'], record.headers['warc-truncated']]),
      [
        ['request', 'http://site.test/old', undefined],
        ['response', 'http://site.test/old', undefined],
        ['request', 'http://site.test/moved', undefined],
        ['response', 'http://site.test/moved', 'unspecified'],
        ['request', 'http://site.test/page?q=1', undefined],
        ['response', 'http://site.test/page?q=1', undefined],
      ],
    );
    for (const at of [0, 2, 4]) assert.equal(records[at].headers['warc-concurrent-to'], records[at + 1].headers['warc-record-id']);
    assert.deepEqual(
      records.map((record) => record.headers['warc-date']),
      ['2026-01-02T03:04:03Z', '2026-01-02T03:04:03Z', '2026-01-02T03:04:04Z', '2026-01-02T03:04:04Z', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z'],
      'each hop is dated when its request was sent, the page by its capture',
    );
    assert.equal(records[1].headers['warc-payload-digest'], sha1Digest(Buffer.from('moved')));
    assert.equal(payload.id, records[5].headers['warc-record-id']);
    const stored = readStoredResponse(bytes);
    assert.deepEqual([stored.url, stored.status, stored.body], ['http://site.test/page?q=1', 200, exchange().body]);

    const file = join(tempDir(), 'hops.warc.gz');
    writeFileSync(file, bytes);
    const check = await warcioCheck(file);
    assert.doesNotMatch(check, /fail/i, check);
    assert.deepEqual((await warcioRecords(file)).map((record) => record.status), [null, '301', null, '302', null, '200']);
  });

  it('a revisit keeps its hops as responses; reading the page back refuses the revisit, not a hop', () => {
    const earlier = { id: '<urn:uuid:00000000-0000-4000-8000-000000000002>', uri: 'http://site.test/page?q=1', date: '2026-01-01T00:00:00Z' };
    const { bytes, payload } = captureRecords({ exchange: exchange(), redirects: hops, earlier }, new Date());
    assert.deepEqual(readWarcRecords(bytes).map((record) => record.headers['warc-type']), ['request', 'response', 'request', 'response', 'request', 'revisit']);
    assert.equal(payload, earlier);
    assert.throws(() => readStoredResponse(bytes), BadWarcError);
  });
});

describe('body store', () => {
  it('appends per batch attempt and reads back by reference; bad references are refused', async () => {
    const dataDir = tempDir();
    const bodies = new FileBodyStore(dataDir);
    const first = bodies.writer('crawl/1', 'crawl/1/batch-1', 1);
    const refA = await first.append(Buffer.from('aaa'));
    const refB = await first.append(Buffer.from('bbbb'));
    await first.close();
    const retry = bodies.writer('crawl/1', 'crawl/1/batch-1', 2);
    const refC = await retry.append(Buffer.from('cc'));
    await retry.close();
    assert.notEqual(refA.split('#')[0], refC.split('#')[0], 'a retried attempt writes its own file');
    assert.deepEqual(await bodies.read('crawl/1', refA), Buffer.from('aaa'));
    assert.deepEqual(await bodies.read('crawl/1', refB), Buffer.from('bbbb'));
    assert.deepEqual(await bodies.read('crawl/1', refC), Buffer.from('cc'));
    for (const bad of ['../x#0+1', 'a/b#0+1', 'x', `${refA.split('#')[0]}#0+999`, 'elsewhere.warc.gz#0+1']) {
      await assert.rejects(bodies.read('crawl/1', bad), BadBodyRefError, bad);
    }
  });
});

/** A data dir holding a crawl `crawlId` whose store has `records`, all completed, and `config` recorded as a crawl's opening would. */
async function storeWith(crawlId: string, records: PageRecord[], config?: CrawlConfig): Promise<string> {
  const dataDir = tempDir();
  const store = new SqliteFrontierStore(crawlStorePath(dataDir, crawlId));
  try {
    if (config !== undefined) await store.saveConfig(1, JSON.stringify(config));
    await store.enqueue(records.map((record) => ({ url: record.url, host: 'site.test', depth: 0 })));
    await store.claim('b1', 'site.test', 10);
    for (const record of records) await store.complete('b1', record, []);
  } finally {
    await store.close();
  }
  return dataDir;
}

describe('CSV export', () => {
  it('every record, every field as a column, parsed back by a CSV parser to the same values', async () => {
    const hostile = 'comma, "quote", new\nline, =SUM(A1)';
    const base: Omit<PageRecord, 'url'> = {
      depth: 0, status: 200, error: null, skipped: null, title: hostile, links: ['http://site.test/a,b'], fetchedAt: '2026-01-01T00:00:00.000Z',
      finalUrl: null, contentType: 'text/html', bytes: 10, canonical: null, noindex: true, fields: { heading: hostile, tags: ['x', 'y"z'], empty: '' },
      etag: '"e,1"', lastModified: null, contentHash: 'ab', change: 'changed', bodyRef: 'f#0+1',
      payloadRecord: { id: '<urn:uuid:00000000-0000-4000-8000-000000000002>', uri: 'http://site.test/', date: '2026-01-01T00:00:00Z' },
    };
    const records: PageRecord[] = [
      { ...base, url: 'http://site.test/' },
      { ...base, url: 'http://site.test/other', title: null, status: null, error: 'timeout', noindex: false, fields: { heading: null, extra: 'only here' }, change: null },
    ];
    const dataDir = await storeWith('csv-crawl', records);
    const file = join(dataDir, 'out.csv');
    assert.equal(await exportCsv({ dataDir }, 'csv-crawl', file), 2);
    const { header, rows } = csvRecords(readFileSync(file, 'utf8'), parse);
    assert.deepEqual(header.slice(-4), ['fields.heading', 'fields.tags', 'fields.empty', 'fields.extra']);
    const columns = ['heading', 'tags', 'empty', 'extra'];
    const expected = records.map((record) => ({ ...record, fields: Object.fromEntries(columns.map((name) => [name, record.fields[name] ?? null])) }));
    assert.deepEqual(rows, expected, 'a field a record lacks is an empty cell');
    const jsonl = join(dataDir, 'out.jsonl');
    assert.equal(await exportJsonl({ dataDir }, 'csv-crawl', jsonl), 2);
    assert.deepEqual(readFileSync(jsonl, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as PageRecord), records);
  });

  it("has a column for each of the crawl's extract fields, in their order, though no record shows them (no page was HTML)", async () => {
    const config = parseCrawlConfig({ seeds: [SEED], extract: { price: 'span.price', name: 'h1' } });
    const record: PageRecord = { ...PLAIN_RECORD, status: 200, contentType: 'application/pdf', skipped: 'content-type', title: null };
    const dataDir = await storeWith('csv-no-html', [record], config);
    const file = join(dataDir, 'out.csv');
    assert.equal(await exportCsv({ dataDir }, 'csv-no-html', file), 1);
    const { header, rows } = csvRecords(readFileSync(file, 'utf8'), parse);
    assert.deepEqual(header.slice(-3), ['links', 'fields.price', 'fields.name']);
    assert.deepEqual(rows, [{ ...record, fields: { price: null, name: null } }]);
  });
});

/** A record of a page fetched with nothing in it. */
const PLAIN_RECORD: PageRecord = {
  url: SEED, depth: 0, status: 200, error: null, skipped: null, title: 'T', links: [], fetchedAt: '2026-01-01T00:00:00.000Z', finalUrl: null, contentType: 'text/html',
  bytes: 1, canonical: null, noindex: false, fields: {}, etag: null, lastModified: null, contentHash: null, change: null, bodyRef: null, payloadRecord: null,
};

describe('export files', () => {
  it('an export that replaces a file keeps its permissions, as writing into it would', async () => {
    const record = PLAIN_RECORD;
    const dataDir = await storeWith('mode-crawl', [record]);
    for (const [name, mode] of [['private.jsonl', 0o600], ['shared.jsonl', 0o664]] as const) {
      const file = join(dataDir, name);
      writeFileSync(file, 'an earlier export\n');
      chmodSync(file, mode);
      assert.equal(await exportJsonl({ dataDir }, 'mode-crawl', file), 1);
      assert.deepEqual([statSync(file).mode & 0o777, JSON.parse(readFileSync(file, 'utf8')) as PageRecord], [mode, record]);
    }
  });
});

describe('recrawl outcomes', () => {
  const config = parseCrawlConfig({ seeds: [SEED], maxDepth: 2 });
  const policy = buildPagePolicy(config);
  const page = (status: number, html: string | null, headers: Record<string, string> = {}): FetchedPage => ({
    finalUrl: SEED, status, contentType: 'text/html', bytes: html?.length ?? 0, retryAfterMs: null, redirectBlocked: null, robotsHeader: null,
    headers, requestHeaders: {}, redirects: [], html, body: html === null ? null : Buffer.from(html), latencyMs: 1,
  });
  const LINKS = '<title>T</title><a href="/a">a</a><a href="http://elsewhere.test/">x</a>';
  const previous = fetchedOutcome({ url: SEED, depth: 0 }, page(200, LINKS, { etag: '"v1"' }), config, policy).record;

  it('a 304 keeps the previous content and follows its in-scope links, within maxDepth', () => {
    const outcome = fetchedOutcome({ url: SEED, depth: 1 }, page(304, null), config, policy, { recrawl: { previous } });
    assert.equal(outcome.record.change, 'unchanged');
    assert.equal(outcome.record.status, 304);
    assert.equal(outcome.record.title, 'T');
    assert.equal(outcome.record.etag, '"v1"');
    assert.deepEqual(
      outcome.capture?.earlier,
      { id: null, uri: SEED, date: previous.fetchedAt.replace(/\.\d{3}Z$/, 'Z') },
      'stored as a revisit of the earlier capture: a record that names no payload record (stored before they did) was its own',
    );
    const original = { id: '<urn:uuid:00000000-0000-4000-8000-000000000003>', uri: 'http://site.test/first', date: '2026-01-01T00:00:00Z' };
    const chained = fetchedOutcome({ url: SEED, depth: 1 }, page(304, null), config, policy, { recrawl: { previous: { ...previous, payloadRecord: original } } });
    assert.deepEqual(chained.capture?.earlier, original, 'a record that names the payload record (a revisit names the original capture) is referred to that');
    assert.equal(outcome.capture?.exchange.body.length, 0);
    assert.deepEqual(outcome.discovered, [{ url: 'http://site.test/a', host: 'site.test', depth: 2 }]);
    assert.deepEqual(fetchedOutcome({ url: SEED, depth: 2 }, page(304, null), config, policy, { recrawl: { previous } }).discovered, []);
  });

  it('the same body is unchanged and stored as a revisit; another body is changed and stored whole', () => {
    const stored = { ...previous, bodyRef: 'batch.attempt-1.warc.gz#0+100' };
    const same = fetchedOutcome({ url: SEED, depth: 0 }, page(200, LINKS), config, policy, { recrawl: { previous: stored } });
    assert.equal(same.record.change, 'unchanged');
    assert.ok(same.capture?.earlier);
    const other = fetchedOutcome({ url: SEED, depth: 0 }, page(200, `${LINKS}!`), config, policy, { recrawl: { previous } });
    assert.equal(other.record.change, 'changed');
    assert.equal(other.capture?.earlier, undefined);
    assert.deepEqual(other.capture?.exchange.body, Buffer.from(`${LINKS}!`));
    assert.equal(fetchedOutcome({ url: SEED, depth: 0 }, page(200, LINKS), config, policy, { recrawl: { previous: undefined } }).record.change, 'new');
    assert.equal(fetchedOutcome({ url: SEED, depth: 0 }, page(410, null), config, policy, { recrawl: { previous } }).record.change, 'gone');
  });

  it('the same body, when the earlier crawl stored none (run without storeBodies), is unchanged and stored whole: there is no capture to revisit', () => {
    assert.equal(previous.bodyRef, null);
    const same = fetchedOutcome({ url: SEED, depth: 0 }, page(200, LINKS), config, policy, { recrawl: { previous } });
    assert.equal(same.record.change, 'unchanged');
    assert.deepEqual(same.capture, { exchange: { url: SEED, status: 200, headers: {}, requestHeaders: {}, body: Buffer.from(LINKS) }, redirects: [] });
  });

  it('a nofollow page keeps no validators, so a recrawl reads it again instead of following its links on a 304', () => {
    const nofollow = fetchedOutcome({ url: SEED, depth: 0 }, page(200, `<meta name="robots" content="nofollow">${LINKS}`, { etag: '"n"', 'last-modified': 'x' }), config, policy);
    assert.equal(nofollow.record.etag, null);
    assert.equal(nofollow.record.lastModified, null);
    assert.deepEqual(conditionalHeaders(nofollow.record), {});
    assert.deepEqual(conditionalHeaders(previous), { 'if-none-match': '"v1"' });
  });

  it('a crawl that stores bodies sends no validators for an HTML page whose body the earlier crawl did not store: a 304 would leave it only a revisit of nothing', () => {
    assert.equal(previous.bodyRef, null);
    assert.deepEqual(conditionalHeaders(previous, true), {});
    assert.deepEqual(conditionalHeaders({ ...previous, bodyRef: 'batch.attempt-1.warc.gz#0+100' }, true), { 'if-none-match': '"v1"' }, 'stored then: a revisit points to it');
    assert.deepEqual(conditionalHeaders({ ...previous, contentHash: null, contentType: 'application/pdf' }, true), { 'if-none-match': '"v1"' }, 'not HTML: never stored, so nothing to gain');
  });

  it('change kinds of records that were not fetched, and of URLs gone before', () => {
    const gone = { ...previous, status: null, change: 'gone' as const };
    assert.equal(changeOf(gone, { ...previous, status: 200 }), 'new', 'back again');
    assert.equal(changeOf(gone, { ...previous, status: 404 }), 'unchanged', 'still gone');
    assert.equal(changeOf(previous, { ...previous, status: null, error: 'timeout', contentHash: null }), 'changed');
  });
});
