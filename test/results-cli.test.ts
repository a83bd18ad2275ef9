/**
 * Results through real `crawlflow` processes against a test server and worker. Results that
 * cannot be written or read: each command ends with exit code 1 and one line that names the
 * file or the crawl's store, a complete file already there is kept, and a crawl whose file
 * could not be written says that its results are kept and how to write them. Results of a
 * crawl that has not finished: the records so far are written (exit 0) and one line on stderr
 * says where the crawl stands (running, stopped, failed, terminated) and that the export is
 * partial; `--require-finished` writes nothing instead; a finished crawl's export gets no line,
 * until it is run again under its ID.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, constants, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import type { ServerResponse } from 'node:http';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { startCrawl } from '../src/client/crawl-client';
import { stopUpdate } from '../src/shared/messages';
import type { crawlSession } from '../src/workflows';
import { freeServerPort } from '../src/workers/runtime';
import { html, linkedRoutes, waitFor } from './helpers/fixtures';
import { runCli, spawnCli } from './helpers/processes';
import { warcioCheck, warcioRecords } from './helpers/warcio';
import { FIXTURE_DIR } from './tools/make-release-stores';
import { SQLITE_SCHEMA_VERSION } from '../src/store/sqlite-schema';
import { failureCause, readCrawlEnd, readRecords, startWithTemporalCli } from './helpers/temporal';
import { cliTemporal } from './helpers/cli-temporal';

const dir = mkdtempSync(join(tmpdir(), 'crawlflow-results-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A site whose seed page links to `n` pages under /held/, each held unanswered until `release()`, beside `pages` synthetic pages answered at once. */
async function startHeldSite(n: number, pages = 0): Promise<{ site: SyntheticSite; held(): number; release(): void }> {
  const waiting: ServerResponse[] = [];
  let released = false;
  const site = await startSyntheticSite({
    pages,
    routes: linkedRoutes('/held/', n, (_req, res) => {
      if (released) html(res, 'released');
      else waiting.push(res);
    }),
  });
  return {
    site,
    held: () => waiting.length,
    release() {
      released = true;
      for (const res of waiting.splice(0)) html(res, 'released');
    },
  };
}

/** The URLs of a JSON Lines export, in its order. */
const exportedUrls = (file: string): string[] =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { url: string }).url);

/** One batch of one URL at a time: a held page holds the whole crawl, and a stop leaves the rest queued. */
const ONE_AT_A_TIME = { concurrency: 1, perHostConcurrency: 1, batchSize: 1 };

describe('results that cannot be written or read', () => {
  const temporal = cliTemporal('results-cli');
  let site: SyntheticSite;

  before(async () => {
    site = await startSyntheticSite({ pages: 40, latencyMs: 20 });
  });
  after(async () => {
    await site?.close();
  });

  /** Runs `crawlflow results <args>` and checks that it exported: exit 0, and exactly `stdout` and `stderr`. */
  async function expectExport(args: readonly string[], expected: { stdout: string; stderr: string }, processEnv: NodeJS.ProcessEnv = temporal.cliEnv): Promise<void> {
    const { code, stdout, stderr } = await runCli(['results', ...args], processEnv);
    assert.deepEqual({ code, stdout, stderr }, { code: 0, ...expected });
  }

  it('a crawl whose results file cannot be written when it ends says so in one line, and `results` then writes them', async () => {
    const outDir = join(dir, 'gone');
    mkdirSync(outDir);
    const out = join(outDir, 'crawl.jsonl');
    const crawling = runCli(['crawl', site.urlOf(0), '--id', 'results-unwritable', '--out', out], temporal.cliEnv);
    // The command checked --out before starting; the directory goes away while the crawl runs.
    await waitFor(() => site.requests.length > 0, 60_000, 'the crawl to start');
    rmSync(outDir, { recursive: true });
    const crawled = await crawling;
    assert.equal(crawled.code, 1, crawled.stderr);
    assert.equal(
      crawled.stderr.trimEnd().split('\n').at(-1),
      `crawlflow: crawl results-unwritable completed, but cannot write ${out} (ENOENT); its results are kept: write them with \`crawlflow results results-unwritable --format jsonl --out <file>\``,
    );
    assert.doesNotMatch(crawled.stderr, /^\s+at /m, 'no stack trace');

    const kept = join(dir, 'kept.jsonl');
    const written = await runCli(['results', 'results-unwritable', '--format', 'jsonl', '--out', kept], temporal.cliEnv);
    assert.equal(written.code, 0, written.stderr);
    const records = await readRecords(temporal.env.dataDir, 'results-unwritable');
    assert.ok(records.length > 0);
    assert.equal(written.stdout, `${records.length} lines written to ${kept}\n`);
    assert.equal(readFileSync(kept, 'utf8').trim().split('\n').length, records.length);
  });

  it('a crawl ID with a path in it writes its default results files in the working directory, the ID encoded, and its WARC names the ID as it is', async () => {
    const work = join(dir, 'work');
    mkdirSync(work);
    const crawled = await runCli(['crawl', site.urlOf(0), '--id', '../escape', '--store-bodies', '--max-pages', '5'], temporal.cliEnv, 120_000, work);
    assert.equal(crawled.code, 0, crawled.stderr);
    assert.ok(!existsSync(join(dir, 'escape.jsonl')), 'nothing written outside the working directory');
    assert.equal(readFileSync(join(work, '..%2Fescape.jsonl'), 'utf8').trim().split('\n').length, 5);
    const exported = await runCli(['results', '../escape', '--format', 'warc'], temporal.cliEnv, 120_000, work);
    assert.equal(exported.code, 0, exported.stderr);
    const warc = join(work, '..%2Fescape.warc.gz');
    assert.equal(exported.stdout, `5 pages written to ${warc}\n`);
    const warcinfo = gunzipSync(readFileSync(warc)).toString('utf8').split('\r\n\r\n')[1];
    assert.equal(warcinfo.split('\r\n').find((line) => line.startsWith('isPartOf:')), 'isPartOf: ../escape');
  });

  it('results refuses a results file whose partial name is taken (exit 2, one line), and a crawl whose partial file appears while it runs exits 1 saying its results are kept; earlier files are kept as they were', async () => {
    const first = join(dir, 'first.jsonl');
    const held = await startHeldSite(1);
    let crawled;
    try {
      const crawling = runCli(['crawl', `${held.site.origin}/`, '--id', 'results-kept', '--out', first], temporal.cliEnv);
      // Its --out was checked before the crawl started; while a page is held, another export starts writing to it.
      await waitFor(() => held.held() > 0, 60_000, 'the crawl to reach the held page');
      writeFileSync(`${first}.partial`, 'another export, mid-way\n');
      held.release();
      crawled = await crawling;
    } finally {
      held.release();
      await held.site.close();
    }
    assert.equal(crawled.code, 1, crawled.stderr);
    assert.equal(
      crawled.stderr.trimEnd().split('\n').at(-1),
      `crawlflow: crawl results-kept completed, but cannot write ${first}: ${first}.partial exists (another export is writing it, or one was killed: remove it if none is running); its results are kept: write them with \`crawlflow results results-kept --format jsonl --out <file>\``,
    );
    assert.equal(readFileSync(`${first}.partial`, 'utf8'), 'another export, mid-way\n');

    const out = join(dir, 'earlier.jsonl');
    writeFileSync(out, 'an earlier export\n');
    // Something else holds the name the export writes to first: a directory, or another export's partial file, which is left alone.
    const partial = `${out}.partial`;
    for (const holder of [() => mkdirSync(partial), () => writeFileSync(partial, 'another export, mid-way\n')]) {
      rmSync(partial, { recursive: true, force: true });
      holder();
      const result = await runCli(['results', 'results-kept', '--out', out], temporal.cliEnv);
      assert.deepEqual(result, {
        code: 2,
        stdout: '',
        stderr: `crawlflow: --out ${out}: ${partial} exists (another export is writing it, or one was killed: remove it if none is running)\n`,
      });
      assert.equal(readFileSync(out, 'utf8'), 'an earlier export\n');
    }
    assert.equal(readFileSync(partial, 'utf8'), 'another export, mid-way\n');
  });

  /** A finished crawl of 5 pages and its JSON Lines export as a file, to compare other targets with. */
  async function targetsCrawl(crawlId: string): Promise<string> {
    assert.equal((await (await startCrawl(temporal.env.client, crawlId, { seeds: [site.urlOf(0)], maxPages: 5 }, temporal.taskQueue)).result()).status, 'max-pages-reached');
    const file = join(dir, `${crawlId}.jsonl`);
    await expectExport([crawlId, '--out', file], { stdout: `5 lines written to ${file}\n`, stderr: '' });
    return readFileSync(file, 'utf8');
  }

  it('results --out - (or a path that leads to stdout) writes only the export on stdout and its line on stderr; a full stdout exits 1 with one line; a reader that went away ends it quietly', async () => {
    const expected = await targetsCrawl('results-stdout');
    const work = mkdtempSync(join(dir, 'stdout-'));
    for (const out of ['-', '/proc/self/fd/1']) {
      const result = await runCli(['results', 'results-stdout', '--out', out], temporal.cliEnv, 120_000, work);
      assert.deepEqual(result, { code: 0, stdout: expected, stderr: `5 lines written to ${out === '-' ? 'standard output' : out}\n` });
    }
    const full = openSync('/dev/full', 'w');
    try {
      const result = await runCli(['results', 'results-stdout', '--out', '-'], temporal.cliEnv, 120_000, work, full);
      assert.deepEqual({ code: result.code, stderr: result.stderr }, { code: 1, stderr: 'crawlflow: cannot write standard output (ENOSPC)\n' });
    } finally {
      closeSync(full);
    }
    assert.deepEqual(readdirSync(work), [], 'no file named "-"');

    // The reader of stdout went away (`| head -1`): a pipe whose only reader has closed, so every write fails with EPIPE.
    // The command stops quietly, with the status a shell shows for cat ended by SIGPIPE; `crawl` too, its crawl done.
    const fifo = join(dir, 'reader-gone.fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const readerGone = openSync(fifo, constants.O_WRONLY);
    closeSync(reader);
    try {
      const result = await runCli(['results', 'results-stdout', '--out', '-'], temporal.cliEnv, 120_000, work, readerGone);
      assert.deepEqual({ code: result.code, stderr: result.stderr }, { code: 141, stderr: '' });
      const crawledGone = await runCli(['crawl', site.urlOf(0), '--id', 'results-stdout-gone', '--max-pages', '5', '--out', '-'], temporal.cliEnv, 120_000, work, readerGone);
      assert.deepEqual({ code: crawledGone.code, stderr: crawledGone.stderr }, { code: 141, stderr: '' });
    } finally {
      closeSync(readerGone);
    }
    assert.equal((await readRecords(temporal.env.dataDir, 'results-stdout-gone')).length, 5, 'the crawl ran to its end');

    // `crawl` writes its summary, --json too, on stderr then, as its help says.
    const help = (await runCli(['crawl', '--help'])).stdout.replace(/\s+/g, ' ');
    assert.match(help, / crawl to the end and write its results: JSON Lines, CSV or a WARC file \(--format\) /);
    assert.match(help, /--json print a machine-readable summary on stdout \(on stderr when --out - takes stdout\)/);
    const crawled = await runCli(['crawl', site.urlOf(0), '--id', 'results-stdout-crawl', '--max-pages', '5', '--out', '-', '--json'], temporal.cliEnv, 120_000, work);
    assert.equal(crawled.code, 0, crawled.stderr);
    const file = join(dir, 'results-stdout-crawl.jsonl');
    await expectExport(['results-stdout-crawl', '--out', file], { stdout: `5 lines written to ${file}\n`, stderr: '' });
    assert.equal(crawled.stdout, readFileSync(file, 'utf8'));
    const summary = JSON.parse(crawled.stderr.trimEnd().split('\n').at(-1) ?? '') as { status: string; out: string; lines: number };
    assert.deepEqual({ status: summary.status, out: summary.out, lines: summary.lines }, { status: 'max-pages-reached', out: '-', lines: 5 });
  });

  it('results --out a FIFO or a symbolic link writes through them, and leaves the FIFO a FIFO and the link a link', async () => {
    const expected = await targetsCrawl('results-through');
    const real = join(dir, 'through-real.jsonl');
    const link = join(dir, 'through-link.jsonl');
    writeFileSync(real, 'an earlier export\n');
    symlinkSync(real, link);
    await expectExport(['results-through', '--out', link], { stdout: `5 lines written to ${link}\n`, stderr: '' });
    assert.ok(lstatSync(link).isSymbolicLink(), 'the link is still a link');
    assert.equal(readFileSync(real, 'utf8'), expected);

    const fifo = join(dir, 'through.fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let read = '';
      reader.stdout.on('data', (chunk: Buffer) => (read += chunk.toString()));
      const readerDone = once(reader, 'exit');
      await expectExport(['results-through', '--out', fifo], { stdout: `5 lines written to ${fifo}\n`, stderr: '' });
      assert.ok(statSync(fifo).isFIFO(), 'the FIFO is still a FIFO');
      await readerDone;
      assert.equal(read, expected);
    } finally {
      reader.kill();
    }
  });

  it('results of an empty store file, or of a crawl with none, exits 1 with one line and creates nothing', async () => {
    const stores = join(temporal.env.dataDir, 'crawls');
    mkdirSync(stores, { recursive: true });
    const empty = join(stores, 'zero.sqlite');
    writeFileSync(empty, '');
    const zero = await runCli(['results', 'zero', '--out', join(dir, 'zero.jsonl')], temporal.cliEnv);
    assert.equal(zero.code, 1, zero.stderr);
    assert.equal(zero.stderr, `crawlflow: no results for crawl "zero" in ${temporal.env.dataDir}: ${empty} is empty\n`);
    assert.equal(statSync(empty).size, 0, 'the file is not made a store');
    const none = await runCli(['results', 'never-ran', '--out', join(dir, 'never-ran.jsonl')], temporal.cliEnv);
    assert.equal(none.code, 1, none.stderr);
    assert.equal(none.stderr, `crawlflow: no results for crawl "never-ran" in ${temporal.env.dataDir}\n`);
    assert.deepEqual(readdirSync(stores).filter((name) => /^(zero|never-ran)\./.test(name)), ['zero.sqlite'], 'no store made, no -wal or -shm');
    assert.ok(!existsSync(join(dir, 'zero.jsonl')) && !existsSync(join(dir, 'never-ran.jsonl')), 'no results file');
  });

  it('results of a crawl whose input was refused before it made a store says, in its one line, how the crawl ended', async () => {
    // `temporal workflow start` skips the client's check: the crawl fails in its first activity, with no store.
    await startWithTemporalCli(temporal.env, temporal.taskQueue, 'refused-input', { seeds: [site.urlOf(0)], maxPages: 0 });
    const failure = await failureCause(temporal.env.client.workflow.getHandle<typeof crawlSession>('refused-input'));
    assert.ok(!existsSync(join(temporal.env.dataDir, 'crawls', 'refused-input.sqlite')), 'the crawl made no store');
    const result = await runCli(['results', 'refused-input', '--out', join(dir, 'refused-input.jsonl')], temporal.cliEnv);
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stderr, `crawlflow: no results for crawl "refused-input" in ${temporal.env.dataDir}; the Temporal server has the crawl as failed (${failure})\n`);
    assert.match(failure, /maxPages/);
    assert.ok(!existsSync(join(dir, 'refused-input.jsonl')), 'no results file');
  });

  it("results of a store an earlier release wrote exports the release's records, the file brought to today's schema as a worker would", async () => {
    const file = join(temporal.env.dataDir, 'crawls', 'release-0.1.0.sqlite');
    mkdirSync(dirname(file), { recursive: true });
    copyFileSync(join(FIXTURE_DIR, 'v0.1.0.sqlite'), file);
    const out = join(dir, 'release-0.1.0.jsonl');
    const result = await runCli(['results', 'release-0.1.0', '--out', out], temporal.cliEnv);
    assert.equal(result.code, 0, result.stderr);
    const released = exportedUrls(join(FIXTURE_DIR, 'v0.1.0.records.jsonl'));
    assert.deepEqual(exportedUrls(out), released);
    // The release recorded no end, and Temporal has no such crawl to ask about.
    assert.equal(
      result.stderr,
      `crawlflow: crawl "release-0.1.0" has recorded no end: it is still running, or it ended without recording one (terminated, or crawled by an earlier release) — ${released.length} pages so far; this export may be partial\n`,
    );
    const migrated = new Database(file, { readonly: true });
    try {
      assert.equal(migrated.pragma('user_version', { simple: true }), SQLITE_SCHEMA_VERSION);
    } finally {
      migrated.close();
    }
  });

  it('results of a crawl whose store is damaged exits 1 with one line naming the crawl and its store', async () => {
    const crawled = await runCli(['crawl', site.urlOf(0), '--id', 'results-damaged', '--out', join(dir, 'damaged.jsonl')], temporal.cliEnv);
    assert.equal(crawled.code, 0, crawled.stderr);
    const stores = join(temporal.env.dataDir, 'crawls');
    // A file that is no database, and a real store whose pages after the first are overwritten.
    writeFileSync(join(stores, 'not-a-store.sqlite'), 'not a database, but long enough to have a header of one\n'.repeat(4));
    const copy = join(stores, 'damaged-store.sqlite');
    // The worker keeps the crawl's pages in its write-ahead log: a copy takes them all into one file.
    const db = new Database(join(stores, 'results-damaged.sqlite'));
    db.exec(`VACUUM INTO '${copy}'`);
    db.close();
    const damaged = readFileSync(copy);
    assert.ok(damaged.length > 4096 * 4, 'a store of more than a few pages');
    writeFileSync(copy, damaged.fill(0xff, 4096));

    const where = `(sqlite files in ${temporal.env.dataDir})`;
    const notAStore = await runCli(['results', 'not-a-store', '--out', join(dir, 'not-a-store.jsonl')], temporal.cliEnv);
    assert.equal(notAStore.code, 1, notAStore.stderr);
    assert.equal(notAStore.stderr, `crawlflow: the store of crawl "not-a-store" ${where} cannot be read: file is not a database\n`);
    const broken = await runCli(['results', 'damaged-store', '--format', 'csv', '--out', join(dir, 'damaged-store.csv')], temporal.cliEnv);
    assert.equal(broken.code, 1, broken.stderr);
    assert.equal(broken.stderr, `crawlflow: the store of crawl "damaged-store" ${where} cannot be read: database disk image is malformed\n`);
    assert.ok(!existsSync(join(dir, 'damaged-store.csv')) && !existsSync(join(dir, 'damaged-store.csv.partial')), 'no file is left');
  });

  it('a WARC export whose body files are gone exits 1 with one line naming the missing file, and writes nothing', async () => {
    const crawled = await runCli(['crawl', site.urlOf(0), '--id', 'results-no-bodies', '--store-bodies', '--out', join(dir, 'no-bodies.jsonl')], temporal.cliEnv);
    assert.equal(crawled.code, 0, crawled.stderr);
    // As on a machine other than the one whose worker stored them.
    const bodies = join(temporal.env.dataDir, 'crawls', 'results-no-bodies', 'warc');
    rmSync(bodies, { recursive: true });
    const out = join(dir, 'no-bodies.warc.gz');
    const result = await runCli(['results', 'results-no-bodies', '--format', 'warc', '--out', out], temporal.cliEnv);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, new RegExp(`^crawlflow: no body file ${bodies}/\\S+\\.warc\\.gz for \\S+: body files stay on the machine whose worker fetched the page\n$`));
    assert.ok(!existsSync(out) && !existsSync(`${out}.partial`), 'no file is left');
  });

  it("results --out a crawl's own store files is refused with exit 2 and one line, and the crawl's store stays readable", async () => {
    const expected = await targetsCrawl('results-own-files');
    const crawls = join(temporal.env.dataDir, 'crawls');
    for (const out of [join(crawls, 'results-own-files.sqlite'), join(crawls, 'results-own-files.sqlite-wal')]) {
      const result = await runCli(['results', 'results-own-files', '--out', out], temporal.cliEnv);
      assert.deepEqual(result, {
        code: 2,
        stdout: '',
        stderr: `crawlflow: --out ${out}: lies among crawlflow's own files in ${temporal.env.dataDir} (crawl stores and their bodies, the embedded server's history); choose a file outside them\n`,
      });
    }
    const again = join(dir, 'own-files-again.jsonl');
    await expectExport(['results-own-files', '--out', again], { stdout: `5 lines written to ${again}\n`, stderr: '' });
    assert.equal(readFileSync(again, 'utf8'), expected);
  });

  it('results interrupted by SIGINT or SIGTERM ends by the signal at once, its partial file removed and the earlier file kept', async () => {
    const crawled = await runCli(['crawl', site.urlOf(0), '--id', 'results-interrupted', '--store-bodies', '--max-pages', '5', '--out', join(dir, 'interrupted.jsonl')], temporal.cliEnv);
    assert.equal(crawled.code, 0, crawled.stderr);
    // A body file the export waits on forever (a FIFO no one writes): it is certainly mid-way when the signal comes.
    const bodies = join(temporal.env.dataDir, 'crawls', 'results-interrupted', 'warc');
    const body = join(bodies, readdirSync(bodies)[0]);
    rmSync(body);
    execFileSync('mkfifo', [body]);
    const out = join(dir, 'interrupted.warc.gz');
    writeFileSync(out, 'an earlier export\n');
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const exporting = spawnCli(['results', 'results-interrupted', '--format', 'warc', '--out', out], temporal.cliEnv);
      await waitFor(() => existsSync(`${out}.partial`), 60_000, 'the export to start');
      exporting.signal(signal);
      assert.deepEqual(await exporting.exited, [null, signal]);
      assert.equal(exporting.stderr(), '');
      assert.ok(!existsSync(`${out}.partial`), 'no partial file is left');
      assert.equal(readFileSync(out, 'utf8'), 'an earlier export\n');
    }
  });

  it('a crawl run with --store-bodies that stored none (no page was HTML answered 2xx) exports a WARC file of its warcinfo record alone', async () => {
    const out = join(dir, 'stored-none.warc.gz');
    const crawled = await runCli(['crawl', `${site.origin}/no-such-page`, '--id', 'results-stored-none', '--store-bodies', '--format', 'warc', '--out', out], temporal.cliEnv);
    assert.equal(crawled.code, 0, crawled.stderr);
    assert.match(crawled.stdout, new RegExp(`^  0 pages written to ${out}$`, 'm'));
    assert.deepEqual((await warcioRecords(out)).map((record) => [record.type, record.uri]), [['warcinfo', null]]);
    await warcioCheck(out);
    assert.deepEqual((await readRecords(temporal.env.dataDir, 'results-stored-none')).map((record) => record.status), [404]);
  });

  it('results of a running crawl writes its records so far with one line on stderr saying it is partial; --require-finished writes nothing; once stopped it says so', async () => {
    const held = await startHeldSite(10);
    try {
      const handle = await startCrawl(temporal.env.client, 'results-running', { seeds: [`${held.site.origin}/`], ...ONE_AT_A_TIME }, temporal.taskQueue);
      await waitFor(() => held.held() === 1, 60_000, 'a held page');
      const out = join(dir, 'running.jsonl');
      await expectExport(['results-running', '--out', out], {
        stdout: `1 line written to ${out}\n`,
        stderr: 'crawlflow: crawl "results-running" is still running — 1 page so far; this export is partial\n',
      });
      assert.deepEqual(exportedUrls(out), [`${held.site.origin}/`]);

      const refusedOut = join(dir, 'refused.jsonl');
      const refused = await runCli(['results', 'results-running', '--require-finished', '--out', refusedOut], temporal.cliEnv);
      assert.equal(refused.code, 1, refused.stderr);
      assert.equal(refused.stderr, 'crawlflow: crawl "results-running" is still running — 1 page so far; nothing written (--require-finished)\n');
      assert.equal(refused.stdout, '');
      assert.ok(!existsSync(refusedOut) && !existsSync(`${refusedOut}.partial`), 'no file is written');

      // With no Temporal server to ask, the store alone cannot tell a running crawl from one that ended without recording it.
      await expectExport(
        ['results-running', '--out', out],
        {
          stdout: `1 line written to ${out}\n`,
          stderr:
            'crawlflow: crawl "results-running" has recorded no end: it is still running, or it ended without recording one (terminated, or crawled by an earlier release) — 1 page so far; this export may be partial\n',
        },
        { ...temporal.cliEnv, TEMPORAL_ADDRESS: `127.0.0.1:${await freeServerPort()}` },
      );

      await handle.executeUpdate(stopUpdate);
      held.release();
      assert.equal((await handle.result()).status, 'stopped');
      await expectExport(['results-running', '--out', out], {
        stdout: `2 lines written to ${out}\n`,
        stderr: 'crawlflow: crawl "results-running" ended early: stopped by a user — 2 pages, 9 URLs left in the frontier; this export is partial\n',
      });
      assert.equal(exportedUrls(out).length, 2);
    } finally {
      held.release();
      await held.site.close();
    }
  });

  it("a finished crawl's export gets no line on stderr, whether it completed or ended at its maxPages; --require-finished writes it", async () => {
    const reachable = site.graph.reachableFrom(0).size;
    const ends: Array<[string, { maxPages?: number }, string, number, string[]]> = [
      ['results-complete', {}, 'completed', reachable, []],
      ['results-capped', { maxPages: 5 }, 'max-pages-reached', 5, ['--require-finished']],
    ];
    for (const [crawlId, limits, status, pages, flags] of ends) {
      const summary = await (await startCrawl(temporal.env.client, crawlId, { seeds: [site.urlOf(0)], ...limits }, temporal.taskQueue)).result();
      assert.equal(summary.status, status);
      const out = join(dir, `${crawlId}.jsonl`);
      await expectExport([crawlId, ...flags, '--out', out], { stdout: `${pages} lines written to ${out}\n`, stderr: '' });
    }
  });

  it('a finished crawl run again under its ID is partial while the new run crawls, and whole once it ends', async () => {
    const held = await startHeldSite(2, 1);
    try {
      const crawlId = 'results-again';
      const first = await startCrawl(temporal.env.client, crawlId, { seeds: [held.site.urlOf(0)], ...ONE_AT_A_TIME }, temporal.taskQueue);
      assert.equal((await first.result()).status, 'completed');
      assert.deepEqual(await readCrawlEnd(temporal.env.store, crawlId), { status: 'completed', failure: null });
      // As an operator may (its ID reuse policy allows it), or `crawlflow crawl --id` once the namespace's retention dropped the first workflow.
      await startWithTemporalCli(temporal.env, temporal.taskQueue, crawlId, { seeds: [`${held.site.origin}/`], ...ONE_AT_A_TIME });
      const again = temporal.env.client.workflow.getHandle<typeof crawlSession>(crawlId);
      await waitFor(() => held.held() === 1, 60_000, 'a held page');
      const out = join(dir, 'again.jsonl');
      await expectExport([crawlId, '--out', out], {
        stdout: `2 lines written to ${out}\n`,
        stderr: `crawlflow: crawl "${crawlId}" is still running — 2 pages so far; this export is partial\n`,
      });

      held.release();
      assert.equal((await again.result()).status, 'completed');
      await expectExport([crawlId, '--out', out], { stdout: `4 lines written to ${out}\n`, stderr: '' });
    } finally {
      held.release();
      await held.site.close();
    }
  });

  it('results of a crawl that failed says so with its cause, the records it made written', async () => {
    const missing = 'CRAWLFLOW_RESULTS_TEST_NOBODY_SET';
    delete process.env[missing];
    const seeds = Array.from({ length: 10 }, (_, page) => site.urlOf(page));
    const handle = await startCrawl(temporal.env.client, 'results-failed', { seeds, ...ONE_AT_A_TIME, batchSize: 2, headersFromEnv: { 'X-Token': missing } }, temporal.taskQueue);
    const cause = await failureCause(handle);
    assert.match(cause, new RegExp(`^every batch failed the same way, so the crawl stopped: .*environment variable ${missing} is not set`));
    const out = join(dir, 'failed.jsonl');
    // Two batches of two failed the same way: their four URLs recorded with the cause, the other six left queued.
    await expectExport(['results-failed', '--out', out], {
      stdout: `4 lines written to ${out}\n`,
      stderr: `crawlflow: crawl "results-failed" ended early: failed (request-secret: ${cause}) — 4 pages, 6 URLs left in the frontier; this export is partial\n`,
    });

    // A sharded crawl records the cause its failed shard gave it, as its workflow failed with it.
    const sharded = await startCrawl(temporal.env.client, 'results-failed-sharded', { seeds, shards: 2, batchSize: 2, headersFromEnv: { 'X-Token': missing } }, temporal.taskQueue);
    const shardedCause = await failureCause(sharded);
    assert.match(shardedCause, /^a shard of the crawl failed: every batch failed the same way, so the crawl stopped: /);
    assert.deepEqual(await readCrawlEnd(temporal.env.store, 'results-failed-sharded'), { status: 'failed', failure: { code: 'request-secret', message: shardedCause } });
  });

  it('results of a crawl terminated mid-way, which recorded no end, takes how it ended from Temporal', async () => {
    const held = await startHeldSite(3);
    try {
      const handle = await startCrawl(temporal.env.client, 'results-terminated', { seeds: [`${held.site.origin}/`], ...ONE_AT_A_TIME }, temporal.taskQueue);
      await waitFor(() => held.held() === 1, 60_000, 'a held page');
      await handle.terminate('ended by the test');
      const out = join(dir, 'terminated.jsonl');
      await expectExport(['results-terminated', '--out', out], {
        stdout: `1 line written to ${out}\n`,
        stderr: 'crawlflow: crawl "results-terminated" ended early: terminated (ended by the test) — 1 page; this export is partial\n',
      });
    } finally {
      held.release();
      await held.site.close();
    }
  });
});
