/**
 * Extraction, stored bodies, an incremental recrawl and the exports, end to end through a
 * real Temporal dev server and the real worker. A loopback site is crawled, then changes (one
 * page edited, one removed but still linked, one dropped from every link, one added, one
 * unchanged behind an ETag, one unchanged without validators), then is crawled again as a
 * recrawl of the first crawl. The site logs every request with its headers, so the tests see
 * the conditional requests and the 304s; the stored bodies, the CSV and the WARC export
 * (checked by Python's warcio) are compared with what the site served. A third crawl starts
 * with `temporal workflow start --input`, like an operator would.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { crawlStorePath } from '../src/store/sqlite-store';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import Database from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { crawlBodyDir, FileBodyStore } from '../src/bodies/body-store';
import { readStoredResponse, readWarcRecords } from '../src/warc/warc-reader';
import type { CrawlSummary } from '../src/shared/crawl-types';
import type { PageRecord } from '../src/store/frontier-store';
import { ChangingSite, type SitePage } from './helpers/changing-site';
import { csvRecords } from './helpers/csv';
import { runCli } from './helpers/processes';
import { readRecords, runCrawlToEnd, startTestTemporal, startWithTemporalCli, type TestTemporal, uniqueQueue } from './helpers/temporal';
import { warcioCheck, warcioRecords } from './helpers/warcio';

const html = (title: string, body: string, links: string[]): string =>
  `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1>${body}${links.map((link) => `<a href="${link}">${link}</a>`).join('')}</body></html>`;

const V1_DATE = 'Mon, 01 Jun 2026 00:00:00 GMT';
const V2_DATE = 'Tue, 02 Jun 2026 00:00:00 GMT';
const unchangedEtag: SitePage = { html: html('Same', '<span class="tag">t</span>', ['/etag/child']), etag: '"etag-1"', gzip: true };
const unchangedChild: SitePage = { html: html('Child', '', []) };
const unchangedPlain: SitePage = { html: html('Plain', '', []) };

const V1: Record<string, SitePage> = {
  '/': { html: html('Home', '<p class="summary">the <b>home</b> page</p>', ['/edited', '/removed', '/etag', '/plain', '/unlinked']), lastModified: V1_DATE },
  '/edited': { html: html('Edited v1', '<img class="hero" src="/v1.png"><span class="tag">a</span><span class="tag">b</span>', []), etag: '"edited-1"' },
  '/removed': { html: html('Removed soon', '', []) },
  '/etag': unchangedEtag,
  '/etag/child': unchangedChild,
  '/plain': unchangedPlain,
  '/unlinked': { html: html('Unlinked soon', '', []) },
};

const V2: Record<string, SitePage> = {
  '/': { html: html('Home', '<p class="summary">the <b>new</b> home</p>', ['/edited', '/removed', '/etag', '/plain', '/added']), lastModified: V2_DATE },
  '/edited': { html: html('Edited v2', '<img class="hero" src="/v2.png">', []), etag: '"edited-2"' },
  '/etag': unchangedEtag,
  '/etag/child': unchangedChild,
  '/plain': unchangedPlain,
  '/added': { html: html('Added', '', []) },
};

const EXTRACT = {
  heading: 'h1',
  hero: 'img.hero @src',
  tags: { selector: '.tag', list: true },
  summary: { selector: 'p.summary', type: 'html' },
};

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describe('extraction, stored bodies and incremental recrawl through Temporal', () => {
  let env: TestTemporal;
  let site: ChangingSite;
  const taskQueue = uniqueQueue('content');
  let first: { summary: CrawlSummary; records: PageRecord[] };
  let servedV1: Map<string, Buffer>;

  const pathOf = (url: string): string => new URL(url).pathname;
  const byPath = (records: PageRecord[]): Map<string, PageRecord> => new Map(records.map((record) => [pathOf(record.url), record]));
  const cli = (args: string[]) => runCli(args, { TEMPORAL_ADDRESS: '127.0.0.1:1', CRAWLFLOW_DATA_DIR: env.dataDir });

  before(async () => {
    env = await startTestTemporal();
    await env.startWorker(taskQueue);
    site = await new ChangingSite().start();
  });
  after(async () => {
    await site?.close();
    await env?.close();
  });

  it('a first crawl extracts the fields of every page and stores every HTML body, compressed', async () => {
    site.pages = V1;
    first = await runCrawlToEnd(env, taskQueue, 'content-1', { seeds: [site.url('/')], extract: EXTRACT, storeBodies: true });
    servedV1 = new Map(site.served);
    assert.equal(first.summary.status, 'completed');
    const records = byPath(first.records);
    assert.deepEqual([...records.keys()].sort(), Object.keys(V1).sort());
    assert.deepEqual(records.get('/')?.fields, { heading: 'Home', hero: null, tags: [], summary: 'the <b>home</b> page' });
    assert.deepEqual(records.get('/edited')?.fields, { heading: 'Edited v1', hero: '/v1.png', tags: ['a', 'b'], summary: null });
    assert.equal(records.get('/edited')?.etag, '"edited-1"');
    assert.equal(records.get('/')?.lastModified, V1_DATE);
    assert.equal(records.get('/plain')?.contentHash, sha256(Buffer.from(V1['/plain'].html)));
    assert.ok(first.records.every((record) => record.change === null), 'not a recrawl: no change kinds');
    assert.deepEqual(first.summary.totals.changes, { new: 0, changed: 0, unchanged: 0, gone: 0 });

    const bodies = new FileBodyStore(env.dataDir);
    for (const [path, record] of records) {
      assert.ok(record.bodyRef, `${path} has a stored body`);
      const stored = readStoredResponse(await bodies.read('content-1', record.bodyRef));
      assert.equal(stored.url, record.url);
      assert.equal(stored.status, 200);
      assert.deepEqual(stored.body, servedV1.get(path), `${path}: the stored body is what the site sent`);
    }
    const gzipped = readStoredResponse(await bodies.read('content-1', records.get('/etag')?.bodyRef ?? ''));
    assert.deepEqual(gzipped.headers['x-archive-orig-content-encoding'], ['gzip'], 'served gzipped, stored decoded, and the record says so');
    assert.equal(gzipped.headers['content-encoding'], undefined);
    for (const file of readdirSync(crawlBodyDir(env.dataDir, 'content-1'))) {
      assert.match(file, /\.warc\.gz$/);
      assert.deepEqual([...readFileSync(join(crawlBodyDir(env.dataDir, 'content-1'), file)).subarray(0, 2)], [0x1f, 0x8b], `${file} is gzip`);
    }
  });

  it('a recrawl sends validators, gets 304s, follows unchanged pages\' links, and reports new / changed / unchanged / gone', async () => {
    site.pages = V2;
    site.requests.length = 0;
    site.served.clear();
    const { summary, records: list } = await runCrawlToEnd(env, taskQueue, 'content-2', {
      seeds: [site.url('/')],
      extract: EXTRACT,
      storeBodies: true,
      recrawlOf: 'content-1',
    });
    assert.equal(summary.status, 'completed');
    const records = byPath(list);

    // What the server saw.
    const only = (path: string) => {
      const requests = site.requestsFor(path);
      assert.equal(requests.length, 1, `${path} fetched once`);
      return requests[0];
    };
    assert.equal(only('/').headers['if-modified-since'], V1_DATE);
    assert.equal(only('/edited').headers['if-none-match'], '"edited-1"');
    assert.equal(only('/etag').headers['if-none-match'], '"etag-1"');
    assert.equal(only('/etag').status, 304);
    assert.equal(only('/plain').headers['if-none-match'], undefined, 'no validators, no conditional request');
    assert.equal(only('/plain').headers['if-modified-since'], undefined);
    assert.equal(only('/etag/child').status, 200, 'reached through the links of a page that answered 304');
    assert.equal(site.requestsFor('/unlinked').length, 0);
    assert.deepEqual(
      site.requests.filter((request) => request.status === 304).map((request) => request.path),
      ['/etag'],
    );

    assert.deepEqual(
      Object.fromEntries([...records].map(([path, record]) => [path, record.change])),
      { '/': 'changed', '/edited': 'changed', '/removed': 'gone', '/etag': 'unchanged', '/plain': 'unchanged', '/etag/child': 'unchanged', '/added': 'new', '/unlinked': 'gone' },
    );
    assert.deepEqual(summary.totals.changes, { new: 1, changed: 2, unchanged: 3, gone: 2 });
    assert.equal(summary.totals.processed, 7, 'an unreached gone URL is reported, not counted as processed');

    const revalidated = records.get('/etag');
    assert.equal(revalidated?.status, 304);
    assert.equal(revalidated?.title, 'Same', 'a 304 keeps the previous content');
    assert.deepEqual(revalidated?.fields, { heading: 'Same', hero: null, tags: ['t'], summary: null });
    assert.equal(revalidated?.contentHash, byPath(first.records).get('/etag')?.contentHash);
    assert.deepEqual(records.get('/edited')?.fields, { heading: 'Edited v2', hero: '/v2.png', tags: [], summary: null });
    assert.equal(records.get('/removed')?.status, 404);
    assert.equal(records.get('/unlinked')?.status, null);

    // Unchanged bodies are not stored again: the crawl's body files hold exactly the new and changed pages.
    const dir = crawlBodyDir(env.dataDir, 'content-2');
    const storedUris = readdirSync(dir).flatMap((file) =>
      readWarcRecords(readFileSync(join(dir, file)))
        .filter((record) => record.headers['warc-type'] === 'response')
        .map((record) => pathOf(record.headers['warc-target-uri'])),
    );
    assert.deepEqual(storedUris.sort(), ['/', '/added', '/edited']);
    for (const path of ['/removed', '/unlinked']) assert.equal(records.get(path)?.bodyRef, null, path);
    // Unchanged pages are kept as revisits of the first crawl's captures: headers, no body.
    const bodies = new FileBodyStore(env.dataDir);
    for (const [path, profile] of [['/etag', 'server-not-modified'], ['/plain', 'identical-payload-digest'], ['/etag/child', 'identical-payload-digest']]) {
      const stored = readWarcRecords(await bodies.read('content-2', records.get(path)?.bodyRef ?? ''));
      assert.deepEqual(stored.map((record) => record.headers['warc-type']), ['request', 'revisit'], path);
      const revisit = stored[1];
      assert.equal(revisit.headers['warc-profile'], `http://netpreserve.org/warc/1.1/revisit/${profile}`);
      assert.equal(revisit.headers['warc-refers-to-target-uri'], site.url(path));
      assert.equal(revisit.headers['warc-refers-to-date'], byPath(first.records).get(path)?.fetchedAt.replace(/\.\d{3}Z$/, 'Z'));
      assert.equal(revisit.block.indexOf('\r\n\r\n') + 4, revisit.block.length, `${path}: no body stored again`);
    }
  });

  it('`crawlflow results` exports CSV (parsed back to the records) and a WARC file that warcio checks record by record', async () => {
    const records = await readRecords(env.dataDir, 'content-2');
    const csvFile = join(env.dataDir, 'content-2.csv');
    const csv = await cli(['results', 'content-2', '--format', 'csv', '--out', csvFile]);
    assert.equal(csv.code, 0, csv.stderr);
    assert.match(csv.stdout, /8 rows written/);
    assert.match(csv.stdout, /compared with the earlier crawl: 1 new, 2 changed, 3 unchanged, 2 gone/);
    const { header, rows } = csvRecords(readFileSync(csvFile, 'utf8'), parse);
    assert.deepEqual(header.filter((column) => column.startsWith('fields.')), ['fields.heading', 'fields.hero', 'fields.tags', 'fields.summary']);
    const fieldNames = ['heading', 'hero', 'tags', 'summary'];
    assert.deepEqual(rows, records.map((record) => ({ ...record, fields: Object.fromEntries(fieldNames.map((name) => [name, record.fields[name] ?? null])) })));

    // A URL never reached is recorded gone when the crawl ends: its fetchedAt is that moment, in
    // ISO 8601 like every other record's, after every page the crawl fetched; in JSON Lines as in CSV.
    const jsonlFile = join(env.dataDir, 'content-2.jsonl');
    assert.equal((await cli(['results', 'content-2', '--out', jsonlFile])).code, 0);
    const lines = readFileSync(jsonlFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as PageRecord);
    const unreached = lines.find((record) => pathOf(record.url) === '/unlinked')!;
    assert.deepEqual([unreached.change, unreached.status], ['gone', null]);
    assert.equal(new Date(unreached.fetchedAt).toISOString(), unreached.fetchedAt, 'ISO 8601, UTC, milliseconds');
    const lastFetched = lines.filter((record) => record !== unreached).map((record) => record.fetchedAt).sort().at(-1)!;
    assert.ok(unreached.fetchedAt >= lastFetched, `${unreached.fetchedAt} is at the end of the crawl, after ${lastFetched}`);
    assert.equal(rows.find((row) => row.url === unreached.url)?.fetchedAt, unreached.fetchedAt, 'the CSV cell is the same');

    for (const [crawlId, served, expected, revisited] of [
      ['content-1', servedV1, Object.keys(V1), []],
      ['content-2', site.served, ['/', '/edited', '/added'], ['/etag', '/plain', '/etag/child']],
    ] as const) {
      const warcFile = join(env.dataDir, `${crawlId}.warc.gz`);
      const warc = await cli(['results', crawlId, '--format', 'warc', '--out', warcFile]);
      assert.equal(warc.code, 0, warc.stderr);
      assert.match(warc.stdout, new RegExp(`${expected.length + revisited.length} pages written`));
      const check = await warcioCheck(warcFile);
      assert.doesNotMatch(check, /fail/i, check);
      const warcRecords = await warcioRecords(warcFile);
      assert.equal(warcRecords[0].type, 'warcinfo');
      const responses = warcRecords.filter((record) => record.type === 'response');
      const requests = warcRecords.filter((record) => record.type === 'request');
      assert.equal(warcRecords.length, 1 + 2 * (expected.length + revisited.length), 'warcinfo, then a request and a response or revisit per page');
      assert.deepEqual(warcRecords.filter((record) => record.type === 'revisit').map((record) => pathOf(record.uri ?? '')).sort(), [...revisited].sort());
      assert.deepEqual(responses.map((record) => pathOf(record.uri ?? '')).sort(), [...expected].sort());
      for (const response of responses) {
        const path = pathOf(response.uri ?? '');
        assert.equal(response.status, '200');
        assert.equal(response.payloadSha256, sha256(served.get(path) ?? Buffer.alloc(0)), `${crawlId} ${path}: payload is what the site sent`);
        assert.ok(requests.some((request) => request.concurrentTo === response.id), `${path} has its request record`);
      }
    }
  });

  it('a crawl started with `temporal workflow start --input` extracts, recrawls, and finds nothing changed', async () => {
    const input = { seeds: [site.url('/')], extract: EXTRACT, recrawlOf: 'content-2' };
    site.requests.length = 0;
    await startWithTemporalCli(env, taskQueue, 'content-3', input);
    const summary = (await env.client.workflow.getHandle('content-3').result()) as CrawlSummary;
    assert.deepEqual(summary.totals.changes, { new: 0, changed: 0, unchanged: 7, gone: 0 }, 'the removed page is still gone: unchanged, and not reported again');
    const records = byPath(await readRecords(env.dataDir, 'content-3'));
    assert.equal(records.get('/edited')?.status, 304);
    assert.equal(site.requestsFor('/edited')[0]?.headers['if-none-match'], '"edited-2"');
    assert.deepEqual(records.get('/edited')?.fields, { heading: 'Edited v2', hero: '/v2.png', tags: [], summary: null });
    assert.equal(records.get('/unlinked'), undefined);

    const noBodies = await cli(['results', 'content-3', '--format', 'warc', '--out', join(env.dataDir, 'none.warc.gz')]);
    assert.equal(noBodies.code, 1);
    assert.match(noBodies.stderr, /crawlflow: crawl "content-3" stored no page bodies: a WARC export needs a crawl run with storeBodies \(--store-bodies\)/);
  });

  it('a recrawl whose extraction settings differ from the earlier crawl\'s reads every page anew, with no validators, and takes its fields from the current selectors', async () => {
    site.pages = {
      '/x/': { html: html('X home', '', ['/x/a', '/x/b']), lastModified: V1_DATE },
      '/x/a': { html: html('X a', '<span class="tag">one</span>', []), etag: '"xa"' },
      '/x/b': { html: html('X b', '<span class="tag">two</span><span class="tag">three</span>', []), etag: '"xb"' },
    };
    const seeds = [site.url('/x/')];
    // Each page's request as the site saw it: path, status, If-None-Match, If-Modified-Since.
    const requests = () =>
      site.requests
        .filter((request) => request.path.startsWith('/x/'))
        .map((request) => [request.path, request.status, request.headers['if-none-match'] ?? null, request.headers['if-modified-since'] ?? null])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    const recrawl = async (crawlId: string, recrawlOf: string, extract: Record<string, unknown>) => {
      site.requests.length = 0;
      const { summary, records } = await runCrawlToEnd(env, taskQueue, crawlId, { seeds, extract, recrawlOf });
      assert.equal(summary.status, 'completed');
      return { changes: summary.totals.changes, records: Object.fromEntries(records.map((record) => [pathOf(record.url), [record.change, record.status, record.fields]])) };
    };
    await runCrawlToEnd(env, taskQueue, 'extract-1', { seeds, extract: { heading: 'h1' } });

    // A field added: a 304 would carry over records that lack it.
    const added = await recrawl('extract-2', 'extract-1', { heading: 'h1', tag: { selector: '.tag', list: true } });
    assert.deepEqual(requests(), [
      ['/x/', 200, null, null],
      ['/x/a', 200, null, null],
      ['/x/b', 200, null, null],
    ]);
    assert.deepEqual(added.records, {
      '/x/': ['unchanged', 200, { heading: 'X home', tag: [] }],
      '/x/a': ['unchanged', 200, { heading: 'X a', tag: ['one'] }],
      '/x/b': ['unchanged', 200, { heading: 'X b', tag: ['two', 'three'] }],
    });
    assert.deepEqual(added.changes, { new: 0, changed: 0, unchanged: 3, gone: 0 });

    // The same settings written another way (object form, other order): the validators are sent, and the 304s keep the fields.
    const same = await recrawl('extract-3', 'extract-2', { tag: { selector: '.tag', type: 'text', list: true }, heading: { selector: 'h1' } });
    assert.deepEqual(requests(), [
      ['/x/', 304, null, V1_DATE],
      ['/x/a', 304, '"xa"', null],
      ['/x/b', 304, '"xb"', null],
    ]);
    assert.deepEqual(same.records, {
      '/x/': ['unchanged', 304, { heading: 'X home', tag: [] }],
      '/x/a': ['unchanged', 304, { heading: 'X a', tag: ['one'] }],
      '/x/b': ['unchanged', 304, { heading: 'X b', tag: ['two', 'three'] }],
    });

    // Extraction dropped: no fields, not the earlier ones.
    const dropped = await recrawl('extract-4', 'extract-3', {});
    assert.deepEqual(requests(), [
      ['/x/', 200, null, null],
      ['/x/a', 200, null, null],
      ['/x/b', 200, null, null],
    ]);
    assert.deepEqual(dropped.records, {
      '/x/': ['unchanged', 200, {}],
      '/x/a': ['unchanged', 200, {}],
      '/x/b': ['unchanged', 200, {}],
    });
    assert.deepEqual(dropped.changes, { new: 0, changed: 0, unchanged: 3, gone: 0 });

    // An earlier store with no recorded config, as releases before 0.3.0 left: what its fields came from is unknown, so no validators either.
    const earlier = new Database(crawlStorePath(env.dataDir, 'extract-4'));
    try {
      earlier.exec('DELETE FROM configs');
    } finally {
      earlier.close();
    }
    const unrecorded = await recrawl('extract-5', 'extract-4', {});
    assert.deepEqual(requests(), [
      ['/x/', 200, null, null],
      ['/x/a', 200, null, null],
      ['/x/b', 200, null, null],
    ]);
    assert.deepEqual(unrecorded.changes, { new: 0, changed: 0, unchanged: 3, gone: 0 });
  });

  it('a recrawl of a crawl that does not exist fails at once, naming recrawlOf, and makes no store for it', async () => {
    site.requests.length = 0;
    await startWithTemporalCli(env, taskQueue, 'content-typo', { seeds: [site.url('/')], recrawlOf: 'content-l' });
    await assert.rejects(env.client.workflow.getHandle('content-typo').result(), (err: unknown) => {
      // The workflow's own failure names the field, as for every other invalid input (not an "Activity task failed" around it).
      assert.ok(err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure, String(err));
      assert.equal(err.cause.type, 'InvalidCrawlConfig');
      assert.equal(err.cause.nonRetryable, true);
      assert.equal(err.cause.message, 'invalid crawl config: recrawlOf: no crawl "content-l" in this store to compare with');
      return true;
    });
    assert.equal(site.requests.length, 0, 'nothing fetched');
    assert.equal(existsSync(crawlStorePath(env.dataDir, 'content-l')), false, 'no store made for the crawl that is not there');
  });

  it('a recrawl that cannot read a page follows its earlier links: a failing hub or a site that is down is no reason to call the pages behind it gone', async () => {
    const hub = html('Hub', '', ['/u/hub/a', '/u/hub/b']);
    // Its record keeps the link to /u/secret, which nofollow kept the first crawl from.
    const nofollow = html('Nofollow', '<meta name="robots" content="nofollow">', ['/u/secret']);
    const leaves = { '/u/hub/a': { html: html('A', '', []) }, '/u/hub/b': { html: html('B', '', []) }, '/u/secret': { html: html('Secret', '', []) } };
    site.pages = { '/u/': { html: html('Start', '', ['/u/hub', '/u/nf']) }, '/u/hub': { html: hub }, '/u/nf': { html: nofollow }, ...leaves };
    const seeds = [site.url('/u/')];
    await runCrawlToEnd(env, taskQueue, 'unread-1', { seeds });
    const earlier = ['/u/', '/u/hub', '/u/hub/a', '/u/hub/b', '/u/nf'];
    const changes = (records: PageRecord[]) => Object.fromEntries(records.map((record) => [pathOf(record.url), [record.change, record.status, record.error, record.skipped]]));

    site.pages = { '/u/': { html: html('Start', '', ['/u/hub', '/u/nf']) }, '/u/hub': { html: hub, status: 503 }, '/u/nf': { html: nofollow, status: 500 }, ...leaves };
    site.requests.length = 0;
    const failing = await runCrawlToEnd(env, taskQueue, 'unread-2', { seeds, recrawlOf: 'unread-1', maxRetries: 0 });
    assert.deepEqual(changes(failing.records), {
      '/u/': ['unchanged', 200, null, null],
      '/u/hub': ['changed', 503, null, null],
      '/u/nf': ['changed', 500, null, null],
      '/u/hub/a': ['unchanged', 200, null, null],
      '/u/hub/b': ['unchanged', 200, null, null],
    });
    assert.deepEqual(failing.summary.totals.changes, { new: 0, changed: 2, unchanged: 3, gone: 0 });
    assert.deepEqual(site.requests.map((request) => request.path).sort(), ['/robots.txt', ...earlier].sort(), 'every earlier page asked once, /u/secret never');

    // The whole site down: robots.txt answers 503, so no page may be fetched, and none is gone.
    site.pages = { '/robots.txt': { html: 'down', status: 503 } };
    site.requests.length = 0;
    const down = await runCrawlToEnd(env, taskQueue, 'unread-3', { seeds, recrawlOf: 'unread-1' });
    assert.deepEqual(changes(down.records), Object.fromEntries(earlier.map((path) => [path, ['changed', null, null, 'robots']])));
    assert.deepEqual(down.summary.totals.changes, { new: 0, changed: 5, unchanged: 0, gone: 0 });
    assert.deepEqual(new Set(site.requests.map((request) => request.path)), new Set(['/robots.txt']), 'no page fetched');
  });

  it('a recrawl of a recrawl refers its revisits to the original capture, the response record that holds the payload, not to the revisit between', async () => {
    site.pages = {
      '/chain/': { html: html('Chain', '', ['/chain/plain']), etag: '"chain"' },
      '/chain/plain': { html: html('Plain link', '', []) },
    };
    const seeds = [site.url('/chain/')];
    const exported = async (crawlId: string) => {
      const file = join(env.dataDir, `${crawlId}.warc.gz`);
      const result = await cli(['results', crawlId, '--format', 'warc', '--out', file]);
      assert.equal(result.code, 0, result.stderr);
      const check = await warcioCheck(file);
      assert.doesNotMatch(check, /fail/i, check);
      return new Map((await warcioRecords(file)).filter((record) => record.type === 'response' || record.type === 'revisit').map((record) => [pathOf(record.uri ?? ''), record]));
    };
    await runCrawlToEnd(env, taskQueue, 'chain-1', { seeds, storeBodies: true });
    const originals = await exported('chain-1');
    let recrawlOf = 'chain-1';
    for (const crawlId of ['chain-2', 'chain-3', 'chain-4']) {
      const { summary, records } = await runCrawlToEnd(env, taskQueue, crawlId, { seeds, storeBodies: true, recrawlOf });
      assert.deepEqual(summary.totals.changes, { new: 0, changed: 0, unchanged: 2, gone: 0 }, crawlId);
      const revisits = await exported(crawlId);
      for (const [path, profile] of [['/chain/', 'server-not-modified'], ['/chain/plain', 'identical-payload-digest']]) {
        const original = originals.get(path)!;
        assert.equal(original.type, 'response');
        const revisit = revisits.get(path)!;
        assert.deepEqual(
          [revisit.type, revisit.profile, revisit.refersTo, revisit.refersToUri, revisit.refersToDate],
          ['revisit', `http://netpreserve.org/warc/1.1/revisit/${profile}`, original.id, original.uri, original.date],
          `${crawlId} ${path}: refers to chain-1's response`,
        );
        assert.deepEqual(byPath(records).get(path)?.payloadRecord, { id: original.id, uri: original.uri, date: original.date }, `${crawlId} ${path}: its record names the original capture`);
      }
      recrawlOf = crawlId;
    }
    assert.deepEqual(
      byPath(await readRecords(env.dataDir, 'chain-1')).get('/chain/')?.payloadRecord,
      { id: originals.get('/chain/')!.id, uri: site.url('/chain/'), date: originals.get('/chain/')!.date },
      'a response record names itself',
    );
  });

  it("a page's WARC request record holds the headers and cookies that went on the wire, the host's too, with every secret value redacted", async () => {
    site.pages = { '/wire/': { html: html('Wire', '', []) } };
    const host = new URL(site.url('/')).host;
    const secrets = { CRAWLFLOW_TEST_WIRE_TOKEN: 'Bearer s3cret-wire-token', CRAWLFLOW_TEST_WIRE_SID: 's3cret-wire-sid' };
    Object.assign(process.env, secrets);
    try {
      site.requests.length = 0;
      await runCrawlToEnd(env, taskQueue, 'wire-1', {
        seeds: [site.url('/wire/')],
        storeBodies: true,
        userAgent: 'wirebot/1',
        headers: { 'X-Team': 'crawl' },
        cookies: { lang: 'en' },
        hosts: { [host]: { headers: { 'X-Host': 'override' }, headersFromEnv: { Authorization: 'CRAWLFLOW_TEST_WIRE_TOKEN' }, cookiesFromEnv: { sid: 'CRAWLFLOW_TEST_WIRE_SID' } } },
      });
    } finally {
      for (const name of Object.keys(secrets)) delete process.env[name];
    }
    const sent = site.requestsFor('/wire/')[0].headers;
    assert.deepEqual([sent['x-team'], sent['x-host'], sent.authorization, sent.cookie], ['crawl', 'override', 'Bearer s3cret-wire-token', 'lang=en; sid=s3cret-wire-sid'], 'what went on the wire');

    const file = join(env.dataDir, 'wire-1.warc.gz');
    const result = await cli(['results', 'wire-1', '--format', 'warc', '--out', file]);
    assert.equal(result.code, 0, result.stderr);
    const check = await warcioCheck(file);
    assert.doesNotMatch(check, /fail/i, check);
    const request = (await warcioRecords(file)).find((record) => record.type === 'request');
    assert.deepEqual(request?.headers, [
      ['host', host],
      ['user-agent', 'wirebot/1'],
      ['accept', 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5'],
      ['accept-encoding', 'gzip, deflate, br'],
      ['x-team', 'crawl'],
      ['x-host', 'override'],
      ['authorization', '[redacted]'],
      ['cookie', 'lang=en; sid=[redacted]'],
    ]);
    // Every header the site received is in the record, under its name, and no secret is anywhere in the file.
    assert.deepEqual(request?.headers.map(([name]) => name).sort(), Object.keys(sent).filter((name) => name !== 'connection').sort());
    const bytes = gunzipSync(readFileSync(file)).toString('latin1');
    for (const secret of Object.values(secrets)) assert.ok(!bytes.includes(secret), `${secret} is not in the WARC file`);
  });

  it('an extract selector that does not compile fails the workflow at once, naming the field', async () => {
    await startWithTemporalCli(env, taskQueue, 'content-bad', { seeds: [site.url('/')], extract: { price: 'span.price:nosuch' } });
    await assert.rejects(env.client.workflow.getHandle('content-bad').result(), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError);
      assert.match(String(err.cause?.message), /extract\.price\.selector: invalid CSS selector "span\.price:nosuch": Unknown pseudo-class :nosuch/);
      return true;
    });
  });
});
