/**
 * Seed files (`seedsFile`, `--seeds-file`): the list is read and checked line by line, queued
 * by a heartbeated activity that resumes where its last heartbeat says, and kept out of
 * workflow history. Through a real Temporal dev server: a crawl of 20,000 file seeds fetches
 * each once (and, scope host, follows links on the seeds' host only), a bad line fails the
 * crawl before any fetch with the file and line, and `--seeds-file -` reads stdin.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../src/activities';
import { openInStore } from '../src/activities/crawl-lifecycle';
import type { SeedImportProgress, SeedImportResult } from '../src/activities/seed-import';
import { startCrawl } from '../src/client/crawl-client';
import { buildScope } from '../src/policy/scope';
import { LIST_START, seedChunks, type SeedChunk } from '../src/seeds/seed-lines';
import { InvalidCrawlConfigError, parseCrawlConfig } from '../src/shared/crawl-config';
import { testTransport } from './helpers/hostile-site';
import { sqliteActivityDeps } from './helpers/activity-batches';
import { CLI, runCli } from './helpers/processes';
import { page, startRecordingSite, type Handler, type RecordingSite } from './helpers/recording-site';
import { readRecords, startTestTemporal, startWithTemporalCli, uniqueQueue, type TestTemporal } from './helpers/temporal';

async function chunksOf(text: string, from = LIST_START, size = 2): Promise<SeedChunk[]> {
  const chunks: SeedChunk[] = [];
  for await (const chunk of seedChunks(Readable.from([Buffer.from(text).subarray(from.byteOffset)]), 'list', from, size)) chunks.push(chunk);
  return chunks;
}

describe('seed lists: reading, checking, resuming', () => {
  const list = '# seeds\nhttp://a.test/1\r\n\n  http://a.test/2  \nhttps://b.test/3\nhttp://a.test/4';

  it('skips blank lines and comments, trims, and carries the byte offset after each chunk', async () => {
    const chunks = await chunksOf(list);
    assert.deepEqual(chunks.map((chunk) => chunk.urls), [['http://a.test/1', 'http://a.test/2'], ['https://b.test/3', 'http://a.test/4']]);
    assert.deepEqual(chunks.at(-1)?.next, { byteOffset: Buffer.byteLength(list), line: 6 }, 'a last line without a newline counts');
    const resumed = await chunksOf(list, chunks[0].next);
    assert.deepEqual(resumed.flatMap((chunk) => chunk.urls), ['https://b.test/3', 'http://a.test/4'], 'read from a chunk end, the rest follows');
    assert.equal(resumed.at(-1)?.next.line, 6, 'line numbers go on from the position');
  });

  it('a line that is not a seed URL is named by list and line number', async () => {
    await assert.rejects(chunksOf('http://a.test/\n\nftp://a.test/x\n'), { code: 'invalid-seed-line', message: 'list:3: must be an absolute http(s) URL' });
    await assert.rejects(chunksOf('http://user:pw@a.test/\n'), { message: 'list:1: must not contain credentials (user:password@)' });
  });

  it('seeds may be empty when seedsFile is given, not both missing', () => {
    assert.deepEqual(parseCrawlConfig({ seedsFile: '/lists/seeds.txt' }).seeds, []);
    assert.throws(() => parseCrawlConfig({}), (err: unknown) => err instanceof InvalidCrawlConfigError && err.field === 'seeds');
  });

  it('scope keys from the store widen the inline seeds: host, domain and prefix look keys up', () => {
    assert.ok(buildScope('host', [], ['a.test:8080'])(new URL('http://a.test:8080/x')));
    assert.ok(!buildScope('host', [], ['a.test:8080'])(new URL('http://a.test/x')));
    assert.ok(buildScope('domain', ['http://www.b.test/'], ['a.co.uk'])(new URL('http://shop.a.co.uk/')));
    const prefix = buildScope('prefix', [], ['http://a.test/docs/']);
    assert.ok(prefix(new URL('http://a.test/docs/v2/page')));
    assert.ok(!prefix(new URL('http://a.test/docsv2/page')));
  });

  it('the import activity resumes from its heartbeat: the lines before it are never read again', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'crawlflow-seeds-'));
    const { transport } = testTransport();
    const deps = sqliteActivityDeps(dataDir, transport, 'seeds-test');
    const { stores } = deps;
    try {
      const seedsFile = join(dataDir, 'seeds.txt');
      const lines = ['http://a.test/0', 'http://a.test/1', 'not a url, but before the heartbeat', 'http://b.test/3'];
      writeFileSync(seedsFile, `${lines.join('\n')}\n`);
      const configVersion = await stores.use('resume', (store) => openInStore(store, parseCrawlConfig({ seedsFile }), (hostname) => transport.resolve(hostname)));
      const heartbeat: SeedImportProgress = { byteOffset: Buffer.byteLength(`${lines.slice(0, 3).join('\n')}\n`), line: 3, seeds: 2, added: 2, firstHost: 'a.test' };
      const env = new MockActivityEnvironment({ heartbeatDetails: heartbeat });
      const result = (await env.run(createActivities(deps).importSeeds, { crawlId: 'resume', configVersion })) as SeedImportResult;
      assert.deepEqual({ seeds: result.seeds, added: result.added, firstHost: result.firstHost }, { seeds: 3, added: 3, firstHost: 'a.test' });
      assert.deepEqual(await stores.use('resume', (store) => store.seedScope()), ['b.test'], 'only the lines after the heartbeat were read');
    } finally {
      await stores.closeAll();
      await transport.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

const SEEDS = 20_000;
/**
 * Seeds robots.txt lets the crawl fetch (every tenth): the others are queued and recorded as
 * skipped, which tests the whole list at a tenth of the fetches' time.
 */
const FETCHED_EVERY = 10;
/** Fetched seeds whose pages also link to a child on their host (followed) and to a host that is no seed's (not followed). */
const LINKING = 10;
const links = (n: number): boolean => n % FETCHED_EVERY === 0 && n < LINKING * FETCHED_EVERY;

describe('seed files through a real Temporal dev server', () => {
  let env: TestTemporal;
  let site: RecordingSite;
  let offsite: RecordingSite;
  let dir: string;
  const queue = uniqueQueue('seeds');
  const seedPath = (n: number): string => (n % FETCHED_EVERY === 0 ? `/seed-${n}` : `/seed-skipped-${n}`);
  const seedUrl = (n: number): string => `${site.origin}${seedPath(n)}`;

  before(async () => {
    env = await startTestTemporal();
    await env.startWorker(queue);
    offsite = await startRecordingSite({ '/x': (_req, res) => page(res) });
    const routes: Record<string, Handler> = {};
    routes['/robots.txt'] = (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /seed-skipped-\n');
    for (let n = 0; n < SEEDS; n += 1) routes[seedPath(n)] = (_req, res) => page(res, links(n) ? [`/child-${n}`, `${offsite.origin}/x`] : []);
    for (let n = 0; n < SEEDS; n += 1) if (links(n)) routes[`/child-${n}`] = (_req, res) => page(res);
    site = await startRecordingSite(routes);
    dir = mkdtempSync(join(tmpdir(), 'crawlflow-seed-files-'));
  });
  after(async () => {
    await site?.close();
    await offsite?.close();
    await env?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const input = { allowPrivateNetwork: true, maxRetries: 0, maxPages: 100_000, batchSize: 200, concurrency: 8, perHostConcurrency: 8 };

  it(`${SEEDS.toLocaleString('en')} file seeds: each queued and recorded once, fetched once where allowed, links followed on seed hosts only, and history holds no seed`, async () => {
    const seedsFile = join(dir, 'seeds.txt');
    const urls = Array.from({ length: SEEDS }, (_, n) => seedUrl(n));
    // Comments, blank lines and repeated seeds are part of real lists.
    writeFileSync(seedsFile, `# crawl list\n${urls.join('\n')}\n\n${urls.slice(0, 5).join('\r\n')}\n`);
    const handle = await startCrawl(env.client, 'seeds-20k', { ...input, seedsFile }, queue);
    const summary = await handle.result();

    const children = Array.from({ length: SEEDS }, (_, n) => n).filter(links).map((n) => `/child-${n}`);
    const fetchable = urls.map((url) => new URL(url).pathname).filter((path) => !path.startsWith('/seed-skipped-'));
    const requested = site.pages().map((request) => request.path).sort();
    assert.equal(summary.status, 'completed');
    assert.deepEqual(requested, [...fetchable, ...children].sort(), 'every allowed seed and every on-host link requested, each once');
    assert.equal(offsite.pages().length, 0, 'a host no seed names is out of scope');
    const records = await readRecords(env.store, 'seeds-20k');
    assert.equal(records.length, SEEDS + LINKING, 'each seed recorded once');
    assert.equal(records.filter((record) => record.skipped === 'robots').length, SEEDS - fetchable.length);

    const history = await handle.fetchHistory();
    const text = JSON.stringify(history);
    assert.ok(!text.includes('/seed-'), 'no seed URL in history');
    const events = history.events ?? [];
    const firstBatch = events.findIndex((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'fetchBatch');
    const opening = Buffer.byteLength(JSON.stringify(events.slice(0, firstBatch)));
    assert.ok(opening < 20_000, `opening the crawl, seeds queued, takes ${opening} bytes of history`);
  });

  it('a bad line fails the crawl before any fetch, naming the file and the line', async () => {
    const seedsFile = join(dir, 'bad-seeds.txt');
    writeFileSync(seedsFile, `${seedUrl(0)}\n# fine\n${seedUrl(1)}\nwww.example.com/no-scheme\n`);
    const before = site.requests.length;
    const handle = await startCrawl(env.client, 'seeds-bad', { ...input, seedsFile }, queue);
    await assert.rejects(handle.result(), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError);
      assert.equal(err.cause?.message, `${seedsFile}:4: must be an absolute http(s) URL`);
      return true;
    });
    assert.equal(site.requests.length, before, 'nothing was fetched');
  });

  it('a seed file with no seed URL, and no inline seeds, fails the crawl instead of completing with nothing crawled', async () => {
    const seedsFile = join(dir, 'no-seeds.txt');
    writeFileSync(seedsFile, '# nothing yet\n\n');
    await startWithTemporalCli(env, queue, 'seeds-none', { seedsFile });
    await assert.rejects(env.client.workflow.getHandle('seeds-none').result(), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure, String(err));
      assert.equal(err.cause.type, 'seeds-file-empty');
      assert.equal(err.cause.nonRetryable, true);
      assert.equal(err.cause.message, `seeds file ${seedsFile}: holds no seed URL, and the crawl has no inline seeds`);
      return true;
    });
  });

  /** `crawlflow start --seeds-file -` against the test's server, with `stdin` piped in. */
  async function startFromStdin(id: string, stdin: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const args = ['start', '--seeds-file', '-', '--id', id, '--json', '--allow-private-network', '--ignore-robots', '--task-queue', queue];
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, TEMPORAL_ADDRESS: env.address, CRAWLFLOW_DATA_DIR: env.dataDir } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.end(stdin);
    const [code] = (await once(child, 'exit')) as [number | null];
    return { code, stdout, stderr };
  }

  it('--seeds-file - reads stdin: staged in the data dir, where the workers read it; a bad line stops the command; schedules refuse it', async () => {
    const started = await startFromStdin('seeds-stdin', `${seedUrl(SEEDS - FETCHED_EVERY)}\n\n${seedUrl(SEEDS - 2 * FETCHED_EVERY)}\n`);
    assert.equal(started.code, 0, started.stderr);
    assert.equal((JSON.parse(started.stdout) as { crawlId: string }).crawlId, 'seeds-stdin');
    const summary = await env.client.workflow.getHandle('seeds-stdin').result();
    assert.equal(summary.totals.processed, 2);

    const refused = await startFromStdin('seeds-stdin-bad', `${seedUrl(0)}\nmailto:someone@example.com\n`);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--seeds-file -: stdin:2: must be an absolute http\(s\) URL/);

    const scheduled = await runCli(['schedule', 'create', 'seeds-schedule', '--seeds-file', '-', '--every', '6h'], { TEMPORAL_ADDRESS: env.address });
    assert.equal(scheduled.code, 2);
    assert.match(scheduled.stderr, /--seeds-file -: a schedule starts every crawl anew, with no stdin to read/);
  });
});
