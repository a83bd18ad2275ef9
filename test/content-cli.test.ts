/**
 * The content flags of the command line: `--extract`, `--store-bodies`, `--recrawl-of` and
 * `--format`, through real `crawlflow` processes. Bad values fail with exit code 2 and a
 * one-line message naming the flag (or the config file and field) before anything starts;
 * the quick-start path (embedded dev server and worker) crawls with them and writes CSV and
 * WARC output directly.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { freeServerPort } from '../src/workers/runtime';
import { ChangingSite } from './helpers/changing-site';
import { csvRecords } from './helpers/csv';
import { itRejectsEach, type UsageCase } from './helpers/usage-errors';
import { runCli, spawnCli } from './helpers/processes';
import { sleep, waitFor } from './helpers/fixtures';
import { readCrawlEnd } from './helpers/temporal';
import { warcioCheck, warcioRecords, type WarcioRecord } from './helpers/warcio';
import type { PageRecord } from '../src/store/frontier-store';

const dir = mkdtempSync(join(tmpdir(), 'crawlflow-content-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function configFile(name: string, content: object): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(content));
  return file;
}

describe('invalid content options', { concurrency: 4 }, () => {
  // Nothing listens on port 1: a command that tried to start a workflow would fail differently.
  const env = { TEMPORAL_ADDRESS: '127.0.0.1:1', CRAWLFLOW_DATA_DIR: dir };
  const seed = 'http://127.0.0.1:9/';
  const cases: UsageCase[] = [
    ['a selector that does not compile', ['crawl', seed, '--extract', 'title=a[href'], /^crawlflow: --extract title\.selector: invalid CSS selector "a\[href": /],
    ['--extract without a name', ['crawl', seed, '--extract', 'h1'], /--extract.*must be written as 'name=selector'/],
    ['a bad field name', ['crawl', seed, '--extract', '9lives=h1'], /--extract 9lives: field names are/],
    ['an attribute field without its attribute, in a config file', ['crawl', '--config', configFile('attr.json', { seeds: [seed], extract: { img: { selector: 'img', type: 'attribute' } } })], /attr\.json: extract\.img\.attribute: is required when type is 'attribute'/],
    ['an unknown --format', ['crawl', seed, '--format', 'xml'], /option '--format <format>' argument 'xml' is invalid/],
    ['--format warc without --store-bodies', ['crawl', seed, '--format', 'warc'], /--format warc: needs --store-bodies/],
    ['--recrawl-of a crawl that is not in the data dir', ['crawl', seed, '--recrawl-of', 'no-such-crawl'], /--recrawl-of: no crawl "no-such-crawl" in /],
    ['--recrawl-of the crawl itself', ['crawl', seed, '--id', 'same', '--recrawl-of', 'same'], /--recrawl-of: must name an earlier crawl, not this one/],
    ['results in an unknown format', ['results', 'some-crawl', '--format', 'xml'], /option '--format <format>' argument 'xml' is invalid/],
  ];
  itRejectsEach(cases, env);
});

describe('quick start with content options', () => {
  let site: ChangingSite;
  let env: NodeJS.ProcessEnv;
  const page = (title: string, links: string[]) => `<title>${title}</title><h1>${title}</h1>${links.map((link) => `<a href="${link}" class="nav">${link}</a>`).join('')}`;
  before(async () => {
    site = await new ChangingSite().start();
    site.pages = { '/': { html: page('Home', ['/a', '/b']) }, '/a': { html: page('A', []), etag: '"a1"' }, '/b': { html: page('B', []) } };
    env = {
      TEMPORAL_ADDRESS: '',
      CRAWLFLOW_DATA_DIR: dir,
      CRAWLFLOW_DEV_SERVER_PORT: String(await freeServerPort()),
      CRAWLFLOW_DEV_SERVER_UI_PORT: String(await freeServerPort()),
    };
  });
  after(async () => {
    await site?.close();
  });

  it('crawl --extract --store-bodies --format warc, then crawl --recrawl-of --format csv', async () => {
    const warcFile = join(dir, 'first.warc.gz');
    const first = await runCli(['crawl', site.url('/'), '--id', 'cli-content-1', '--extract', 'heading=h1', '--extract', 'nav=a.nav @href', '--store-bodies', '--format', 'warc', '--out', warcFile, '--json'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.equal((JSON.parse(first.stdout) as { lines: number }).lines, 3, 'three pages in the WARC file');
    await warcioCheck(warcFile);
    assert.deepEqual(
      (await warcioRecords(warcFile)).filter((record) => record.type === 'response').map((record) => new URL(record.uri ?? '').pathname).sort(),
      ['/', '/a', '/b'],
    );

    delete site.pages['/b'];
    const csvFile = join(dir, 'second.csv');
    // The same fields in another order: the earlier records' fields still hold, so /a is asked conditionally.
    const second = await runCli(['crawl', site.url('/'), '--id', 'cli-content-2', '--extract', 'nav=a.nav @href', '--extract', 'heading=h1', '--recrawl-of', 'cli-content-1', '--format', 'csv', '--out', csvFile], env);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /compared with the earlier crawl: 0 new, 0 changed, 2 unchanged, 1 gone/);
    assert.match(second.stdout, /3 rows written to /);
    const { rows } = csvRecords(readFileSync(csvFile, 'utf8'), parse);
    assert.deepEqual(
      rows.map((row) => [new URL(row.url).pathname, row.status, row.change, row.fields.heading, row.fields.nav]),
      [['/', 200, 'unchanged', 'Home', '/a'], ['/a', 304, 'unchanged', 'A', null], ['/b', 404, 'gone', null, null]],
    );
  });

  it('crawl --out a FIFO no one reads ends at SIGINT, though its worker takes the signal too: exit 130, a line saying the results are kept, the FIFO left a FIFO', async () => {
    const fifo = join(dir, 'nobody-reads.fifo');
    execFileSync('mkfifo', [fifo]);
    const crawling = spawnCli(['crawl', site.url('/'), '--id', 'cli-fifo', '--out', fifo, '--no-progress'], env);
    try {
      const ended = async () => (await readCrawlEnd({ dataDir: dir }, 'cli-fifo').catch(() => undefined)) !== undefined;
      await waitFor(ended, 60_000, 'the crawl to record its end');
      // Its result reaches the command, which then waits for the FIFO's reader.
      await sleep(2_000);
      crawling.signal('SIGINT');
      assert.deepEqual(await crawling.exited, [130, null], crawling.stderr());
      const line = 'crawlflow: crawl cli-fifo completed, but SIGINT while writing ' + fifo + '; its results are kept: write them with `crawlflow results cli-fifo --format jsonl --out <file>`';
      assert.ok(crawling.stderr().split('\n').includes(line), crawling.stderr());
      assert.ok(statSync(fifo).isFIFO(), 'the FIFO is still a FIFO');
    } finally {
      if (crawling.running()) crawling.signal('SIGTERM');
      await crawling.exited;
    }
  });
});

describe('redirect hops in the WARC file', () => {
  let site: ChangingSite;
  let env: NodeJS.ProcessEnv;
  const secrets = { CRAWLFLOW_TEST_HOP_TOKEN: 'Bearer s3cret-hop-token', CRAWLFLOW_TEST_HOP_SID: 's3cret-hop-sid' };
  const foundBody = '<a href="/b">found elsewhere</a>';
  const pathOf = (uri: string | null) => (uri === null ? null : new URL(uri).pathname);
  /** Each record as type, target path and HTTP status, in file order. */
  const listing = (records: WarcioRecord[]) => records.map((record) => [record.type, pathOf(record.uri), record.status]);
  /** /a's two hops (records 7-10) are each dated when sent, before /c's own capture (records 11-12), which came 1.2 s later. */
  const assertHopDates = (records: WarcioRecord[]) => {
    const [a, b, c] = [7, 9, 11].map((at) => [records[at].date, records[at + 1].date]);
    const dated = `(/a ${a}, /b ${b}, /c ${c})`;
    for (const pair of [a, b, c]) assert.equal(pair[0], pair[1], `a request and its response share their date ${dated}`);
    assert.ok(a[0]! <= b[0]! && b[0]! < c[0]!, `each hop dated when it was sent, before the slow page's capture ${dated}`);
  };
  before(async () => {
    site = await new ChangingSite().start();
    site.pages = {
      '/': { html: '<title>Home</title><a href="/old">old</a><a href="/a">a</a><a href="/out">out</a>' },
      '/old': { status: 301, location: '/new', html: '' },
      '/new': { html: '<title>New</title>' },
      '/a': { status: 302, location: '/b', html: foundBody },
      '/b': { status: 301, location: '/c', html: 'moved for good' },
      // Answered 1.2 s late, so the hops to it, sent before, fall in an earlier second of WARC-Date.
      '/c': { html: '<title>C</title>', delayMs: 1_200 },
      '/out': { status: 301, location: 'http://elsewhere.invalid/out', html: '' },
    };
    env = {
      TEMPORAL_ADDRESS: '',
      CRAWLFLOW_DATA_DIR: dir,
      CRAWLFLOW_DEV_SERVER_PORT: String(await freeServerPort()),
      CRAWLFLOW_DEV_SERVER_UI_PORT: String(await freeServerPort()),
      ...secrets,
    };
  });
  after(async () => {
    await site?.close();
  });

  it('every followed hop is a request and a 3xx response before the page\'s own pair, in a crawl and in its recrawl; a redirect out of scope stores nothing', async () => {
    const config = configFile('hops.json', { headersFromEnv: { Authorization: 'CRAWLFLOW_TEST_HOP_TOKEN' }, cookiesFromEnv: { sid: 'CRAWLFLOW_TEST_HOP_SID' } });
    const crawl = async (crawlId: string, extra: string[]): Promise<WarcioRecord[]> => {
      const file = join(dir, `${crawlId}.warc.gz`);
      const result = await runCli(['crawl', site.url('/'), '--id', crawlId, '--config', config, '--store-bodies', '--format', 'warc', '--out', file, ...extra], env);
      assert.equal(result.code, 0, result.stderr);
      const check = await warcioCheck(file);
      assert.doesNotMatch(check, /fail/i, check);
      const bytes = gunzipSync(readFileSync(file)).toString('latin1');
      for (const secret of Object.values(secrets)) assert.ok(!bytes.includes(secret), `${secret} is not in ${file}`);
      const records = await warcioRecords(file);
      records.forEach((record, at) => {
        if (record.type !== 'request') return;
        assert.equal(record.concurrentTo, records[at + 1].id, `request ${record.uri} is tied to the response after it`);
        const headers = new Map(record.headers);
        assert.deepEqual([headers.get('authorization'), headers.get('cookie')], ['[redacted]', 'sid=[redacted]'], `request ${record.uri}`);
      });
      return records;
    };

    const first = await crawl('hops-1', []);
    assert.deepEqual(listing(first), [
      ['warcinfo', null, null],
      ['request', '/', null],
      ['response', '/', '200'],
      ['request', '/old', null],
      ['response', '/old', '301'],
      ['request', '/new', null],
      ['response', '/new', '200'],
      ['request', '/a', null],
      ['response', '/a', '302'],
      ['request', '/b', null],
      ['response', '/b', '301'],
      ['request', '/c', null],
      ['response', '/c', '200'],
    ]);
    const found = first[8];
    assert.deepEqual(new Map(found.headers).get('location'), '/b');
    assertHopDates(first);
    assert.deepEqual([found.payloadSha256, found.payloadLength], [createHash('sha256').update(foundBody).digest('hex'), foundBody.length], 'the hop keeps its own body');

    const jsonl = join(dir, 'hops-1.jsonl');
    const results = await runCli(['results', 'hops-1', '--out', jsonl], env);
    assert.equal(results.code, 0, results.stderr);
    const records = readFileSync(jsonl, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as PageRecord);
    assert.deepEqual(
      records.map((record) => [pathOf(record.url), record.status, pathOf(record.finalUrl), record.skipped, record.bodyRef !== null]),
      [['/', 200, null, null, true], ['/old', 200, '/new', null, true], ['/a', 200, '/c', null, true], ['/out', 301, null, 'redirect-out-of-scope', false]],
    );

    const second = await crawl('hops-2', ['--recrawl-of', 'hops-1']);
    assert.deepEqual(listing(second), [
      ['warcinfo', null, null],
      ['request', '/', null],
      ['revisit', '/', '200'],
      ['request', '/old', null],
      ['response', '/old', '301'],
      ['request', '/new', null],
      ['revisit', '/new', '200'],
      ['request', '/a', null],
      ['response', '/a', '302'],
      ['request', '/b', null],
      ['response', '/b', '301'],
      ['request', '/c', null],
      ['revisit', '/c', '200'],
    ]);
    for (const at of [2, 6, 12]) assert.equal(second[at].refersTo, first[at].id, `${second[at].uri}: refers to the first crawl's response`);
    assertHopDates(second);
  });
});
