/**
 * Results files that cannot be written, through real `crawlflow` processes against a test
 * server and worker: each command ends with exit code 1 and one line that names the file, a
 * complete file already there is kept, and a crawl whose file could not be written says that
 * its results are kept and how to write them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { waitFor } from './helpers/fixtures';
import { runCli } from './helpers/processes';
import { readRecords, startTestTemporal, uniqueQueue, type TestTemporal } from './helpers/temporal';

const dir = mkdtempSync(join(tmpdir(), 'crawlflow-results-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** No stack trace, one line. */
function assertOneLine(stderr: string): void {
  assert.equal(stderr.trim().split('\n').length, 1, `one line: ${stderr}`);
}

describe('results files that cannot be written', () => {
  let env: TestTemporal;
  let site: SyntheticSite;
  let cliEnv: NodeJS.ProcessEnv;
  const queue = uniqueQueue('results-cli');

  before(async () => {
    env = await startTestTemporal();
    await env.startWorker(queue);
    site = await startSyntheticSite({ pages: 40, latencyMs: 20 });
    cliEnv = { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_TASK_QUEUE: queue, CRAWLFLOW_DATA_DIR: env.dataDir };
  });
  after(async () => {
    await site?.close();
    await env?.close();
  });

  it('a crawl whose results file cannot be written when it ends says so in one line, and `results` then writes them', async () => {
    const outDir = join(dir, 'gone');
    mkdirSync(outDir);
    const out = join(outDir, 'crawl.jsonl');
    const crawling = runCli(['crawl', site.urlOf(0), '--id', 'results-unwritable', '--out', out], cliEnv);
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
    const written = await runCli(['results', 'results-unwritable', '--format', 'jsonl', '--out', kept], cliEnv);
    assert.equal(written.code, 0, written.stderr);
    const records = await readRecords(env.dataDir, 'results-unwritable');
    assert.ok(records.length > 0);
    assert.equal(written.stdout, `${records.length} lines written to ${kept}\n`);
    assert.equal(readFileSync(kept, 'utf8').trim().split('\n').length, records.length);
  });

  it('results that cannot write its file exits 1 with one line, and the earlier file is kept as it was', async () => {
    const crawled = await runCli(['crawl', site.urlOf(0), '--id', 'results-kept', '--out', join(dir, 'first.jsonl')], cliEnv);
    assert.equal(crawled.code, 0, crawled.stderr);
    const out = join(dir, 'earlier.jsonl');
    writeFileSync(out, 'an earlier export\n');
    // Something else holds the name the export writes to first.
    mkdirSync(`${out}.partial`);
    const result = await runCli(['results', 'results-kept', '--out', out], cliEnv);
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stderr, `crawlflow: cannot write ${out} (EISDIR); a file already there is left as it was\n`);
    assertOneLine(result.stderr);
    assert.equal(readFileSync(out, 'utf8'), 'an earlier export\n');
  });
});
