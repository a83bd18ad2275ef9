/**
 * Discovery and scope in real crawls (crawlSession on a dev server: sitemap reading, then
 * concurrent batches of robots, fetch, parse, outcome, store) against fixture sites on
 * loopback: what is requested, how often, and what is recorded. The sitemap activity's report
 * is read from the workflow's history.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { testNetwork } from './helpers/hostile-site';
import { realCrawler } from './helpers/real-crawl';
import { DISCOVERY_SETTINGS, expectedPages, requestedPages, sitemapIndex, startDiscoverySite, urlset } from './helpers/discovery-site';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import type { PageRecord } from '../src/store/frontier-store';
import type { SitemapDiscoveryResult } from '../src/activities/sitemap-discovery';

const { network, connects } = testNetwork();
const crawler = realCrawler(network);

const recordOf = (records: PageRecord[], url: string): PageRecord => {
  const record = records.find((candidate) => candidate.url === url);
  assert.ok(record, `a record for ${url}`);
  return record;
};
const requestsTo = (site: SyntheticSite, path: string): number => site.requests.filter((request) => request.path === path).length;

describe('sitemaps, canonicals, excludes and content types on one site', () => {
  let site: SyntheticSite;
  let records: PageRecord[];
  let report: SitemapDiscoveryResult;
  before(async () => {
    site = await startDiscoverySite();
    const crawl = await crawler.run({ seeds: [site.urlOf(0)], ...DISCOVERY_SETTINGS });
    records = crawl.records;
    report = await crawler.sitemapReport(crawl.handle);
  });
  after(() => site.close());

  it('fetches the orphans robots.txt -> sitemap index -> gzipped sitemap lists, each page once', () => {
    assert.deepEqual(requestedPages(site), expectedPages(site.graph));
    for (const orphan of [9, 29, 39]) assert.equal(recordOf(records, site.urlOf(orphan)).status, 200, `orphan ${orphan}`);
    assert.equal(recordOf(records, site.urlOf(9)).depth, 0, 'sitemap URLs are queued at depth 0');
    for (const path of ['/robots.txt', '/sitemap-index.xml', '/sitemaps/orphans.xml.gz', '/sitemaps/more.xml']) assert.equal(requestsTo(site, path), 1, path);
  });

  it('never requests excluded URLs, whether linked or listed in a sitemap, nor out-of-scope sitemap entries', () => {
    assert.deepEqual(site.requests.filter((request) => request.path.startsWith('/private/')), []);
    assert.ok(!requestedPages(site).some((page) => page >= 10 && page <= 19));
    assert.ok(!connects.some((host) => host !== '127.0.0.1'), `connected only to the site: ${connects.join(', ')}`);
    assert.equal(report.files, 3);
    assert.equal(report.failed, 0);
    assert.deepEqual(report.dropped, { excluded: 2, 'out-of-scope': 1 });
    assert.equal(report.accepted, 6, '9, 29, 39, dup/a, dup/b, report.pdf');
  });

  it('records pages whose canonical is another page as duplicates and fetches the canonical once', () => {
    const target = `${site.origin}/canonical-target`;
    for (const path of ['/dup/a', '/dup/b']) {
      const record = recordOf(records, `${site.origin}${path}`);
      assert.equal(record.skipped, 'canonical', path);
      assert.equal(record.canonical, target, `${path} names the normalized canonical`);
      assert.equal(record.status, 200);
    }
    assert.equal(requestsTo(site, '/canonical-target'), 1);
    const canonical = recordOf(records, target);
    assert.equal(canonical.skipped, null);
    assert.equal(canonical.title, 'the canonical page');
    assert.equal(records.filter((record) => record.skipped === null && record.title?.startsWith('dup')).length, 0, 'duplicates never count as content');
  });

  it('skips a response of a type the crawl does not keep without reading its body', () => {
    const pdf = recordOf(records, `${site.origin}/files/report.pdf`);
    assert.equal(pdf.skipped, 'content-type');
    assert.equal(pdf.error, null, 'an endless body read to the cap would be too-large');
    assert.equal(pdf.contentType, 'application/pdf');
    assert.equal(pdf.bytes, 0);
    const request = site.requests.find((entry) => entry.path === '/files/report.pdf');
    assert.equal(request?.aborted, true, 'the connection was dropped after the headers');
  });
});

describe('sitemap caps and failures', () => {
  let site: SyntheticSite;
  let origin = '';
  const xml = (body: string) => (_req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/xml' }).end(body);
  before(async () => {
    const urls = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `${origin}/page/${from + i}`);
    site = await startSyntheticSite({
      pages: 60,
      routes: {
        '/index-1.xml': (req, res) => xml(sitemapIndex([`${origin}/index-2.xml`, `${origin}/flat.xml`]))(req, res),
        '/index-2.xml': (req, res) => xml(sitemapIndex([`${origin}/deep.xml`]))(req, res),
        '/deep.xml': (req, res) => xml(urlset(urls(50, 60)))(req, res),
        '/flat.xml': (req, res) => xml(urlset(urls(30, 40)))(req, res),
        '/not-a-sitemap.xml': (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><a href="/page/41">x</a></html>'),
        '/bomb.xml.gz': (_req, res) => res.writeHead(200, { 'content-type': 'application/gzip' }).end(gzipSync(Buffer.alloc(60 * 1024 * 1024, ' '))),
      },
    });
    origin = site.origin;
  });
  after(() => site.close());

  const pagesRequested = (from: number, to: number) => requestedPages(site).filter((page) => page >= from && page < to);

  it('follows sitemap indexes only to maxIndexDepth', async () => {
    const { handle } = await crawler.run({ seeds: [site.urlOf(0)], maxDepth: 0, sitemaps: { urls: [`${origin}/index-1.xml`], maxIndexDepth: 1 } });
    assert.equal(requestsTo(site, '/index-2.xml'), 1);
    assert.equal(requestsTo(site, '/deep.xml'), 0, 'an index inside an index is beyond depth 1');
    assert.deepEqual(pagesRequested(30, 40), [30, 31, 32, 33, 34, 35, 36, 37, 38, 39]);
    assert.deepEqual(pagesRequested(50, 60), []);
    assert.deepEqual((await crawler.sitemapReport(handle)).dropped, { 'index-depth': 1 });
  });

  it('queues at most maxUrls sitemap URLs and reads at most maxFiles files', async () => {
    const before = requestedPages(site).length;
    const capped = await crawler.run({ seeds: [site.urlOf(0)], maxDepth: 0, sitemaps: { urls: [`${origin}/index-1.xml`], maxUrls: 4 } });
    assert.equal(requestedPages(site).length - before, 1 + 4, 'the seed and four sitemap URLs');
    const urlsReport = await crawler.sitemapReport(capped.handle);
    assert.equal(urlsReport.accepted, 4);
    assert.equal(urlsReport.dropped['max-urls'], 6 + 10, 'the rest of flat.xml, and all of deep.xml');

    const fewFiles = await crawler.run({ seeds: [site.urlOf(0)], maxDepth: 0, sitemaps: { urls: [`${origin}/index-1.xml`], maxFiles: 2 } });
    const filesReport = await crawler.sitemapReport(fewFiles.handle);
    assert.equal(filesReport.files, 2, 'index-1 and index-2');
    assert.equal(filesReport.dropped['max-files'], 2, 'flat.xml and deep.xml left');
  });

  it('reports sitemaps it cannot read and goes on with the seeds; a blocked address is never connected to', async () => {
    const connectsBefore = connects.length;
    const missing = `${origin}/missing.xml`;
    const blocked = `http://evil.test:${new URL(origin).port}/sitemap.xml`;
    const { records, handle } = await crawler.run({
      seeds: [site.urlOf(0)],
      maxDepth: 0,
      sitemaps: { urls: [missing, `${origin}/not-a-sitemap.xml`, `${origin}/bomb.xml.gz`, blocked] },
    });
    assert.deepEqual(records.map((record) => record.url), [site.urlOf(0)]);
    const report = await crawler.sitemapReport(handle);
    assert.equal(report.failed, 4);
    assert.deepEqual(
      report.failures.map(({ url, reason }) => [url, reason]),
      [
        [missing, 'http-status'],
        [`${origin}/not-a-sitemap.xml`, 'not-a-sitemap'],
        [`${origin}/bomb.xml.gz`, 'too-large'],
        [blocked, 'blocked-address'],
      ],
    );
    assert.ok(!connects.slice(connectsBefore).includes('10.0.0.1'), 'the guard stopped it before a connect');
    assert.equal(requestsTo(site, '/page/41'), 0, 'links in an HTML page are not sitemap entries');
  });
});

describe('scope filters and normalization on links and redirects', () => {
  let site: SyntheticSite;
  const page = (body: string) => (_req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>t</title>${body}`);
  before(async () => {
    site = await startSyntheticSite({
      pages: 5,
      routes: {
        '/start': page(
          ['/docs/a?b=1&a=2&utm_source=x', '/docs/a?a=2&b=1', '/docs/a/?a=2&b=1#frag', '/docs/go-private', '/blog/post', '/docs/private/x'].map((href) => `<a href="${href}">l</a>`).join(''),
        ),
        '/docs/a': page('<title>a</title>'),
        '/docs/go-private': (_req, res) => res.writeHead(302, { location: '/docs/private/target' }).end(),
        '/docs/private/target': page('never'),
        '/docs/private/x': page('never'),
        '/blog/post': page('never'),
      },
    });
  });
  after(() => site.close());

  it('include, exclude and the normalization rules decide what is requested', async () => {
    const records = await crawler.crawl({
      seeds: [`${site.origin}/start`],
      include: ['/docs/**'],
      exclude: ['re:/private/'],
      normalize: { sortQuery: true, trailingSlash: 'strip' },
    });
    const paths = site.requests.map((request) => request.path).filter((path) => path !== '/robots.txt').sort();
    assert.deepEqual(paths, ['/docs/a?a=2&b=1', '/docs/go-private', '/start'], 'three spellings of /docs/a fetched once; blog, private never');
    assert.equal(recordOf(records, `${site.origin}/docs/go-private`).skipped, 'redirect-excluded');
  });
});
