/**
 * Fault injection with stored bodies: a crawl with `storeBodies` on, its only worker process
 * SIGKILLed while every running batch is mid-way (five pages stored and committed, the sixth
 * in flight), a fresh process started in its place. The killed attempts' body files stay on
 * disk and the retries write files of their own; the WARC export must hold each recorded page
 * exactly once, and exactly the recorded pages, as Python's warcio reads it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { startCrawl } from '../src/client/crawl-client';
import { crawlBodyDir, parseBodyRef } from '../src/bodies/body-store';
import { exportWarc } from '../src/results/export-warc';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { readRecords, startTestTemporal, uniqueQueue, type TestTemporal } from './helpers/temporal';
import { spawnWorker, type WorkerProcess } from './helpers/processes';
import { html, linkedRoutes, sortedPaths, waitFor } from './helpers/fixtures';
import { batchOutcomes, pendingBatches, seconds } from './helpers/faults';
import { warcioCheck, warcioRecords } from './helpers/warcio';

const PAGES = 200;
const BATCH_SIZE = 10;
const CONCURRENCY = 4;
/** The page of each batch whose request is held: batches claim 10 URLs in discovery order (/p/0-9, /p/10-19, ...). */
const HELD_SLOT = 5;
/** The first batches run undisturbed, so the kill hits batches that started while others were finishing. */
const FIRST_HELD = 40 + HELD_SLOT;

/**
 * A site whose pages /p/45, /p/55, ... are not answered until the gate opens: each running
 * batch stores five pages, then waits on its sixth.
 */
function gatedSite(): Promise<SyntheticSite & { held: Map<string, ServerResponse>; open(): void }> {
  const held = new Map<string, ServerResponse>();
  let open = false;
  const routes = linkedRoutes('/p/', PAGES, (req, res) => {
    const index = Number((req.url ?? '').slice('/p/'.length));
    if (!open && index >= FIRST_HELD && index % BATCH_SIZE === HELD_SLOT) held.set(req.url ?? '', res);
    else html(res, `page ${req.url}`);
  });
  return startSyntheticSite({ pages: 1, routes }).then((site) => Object.assign(site, { held, open: () => void (open = true) }));
}

/** warcio reads the file, every digest checks, and it holds one request and one response per page of `expected`, and a warcinfo. */
async function assertWarcHoldsOnce(file: string, expected: string[]): Promise<number> {
  await warcioCheck(file);
  const warc = await warcioRecords(file);
  const uris = (type: string): string[] => sortedPaths(warc.filter((record) => record.type === type).map((record) => record.uri ?? ''));
  assert.deepEqual(uris('response'), expected, 'a response record per recorded page, each once');
  assert.deepEqual(uris('request'), expected, 'and a request record per page');
  assert.deepEqual(warc.map((record) => record.type).filter((type) => type !== 'request' && type !== 'response'), ['warcinfo']);
  return uris('response').length;
}

describe('faults: a worker SIGKILLed while storeBodies is on', () => {
  let env: TestTemporal;
  let site: Awaited<ReturnType<typeof gatedSite>>;
  const workers: WorkerProcess[] = [];

  before(async () => {
    env = await startTestTemporal();
    site = await gatedSite();
  });
  after(async () => {
    for (const worker of workers) await worker.kill('SIGKILL');
    for (const res of site?.held.values() ?? []) res.destroy();
    await site?.close();
    await env?.close();
  });

  it('the WARC export holds each recorded page once, and only those, after a SIGKILL mid-batch', async () => {
    const started = Date.now();
    const crawlId = 'kill-bodies';
    const taskQueue = uniqueQueue('faults-kill-bodies');
    const spawn = (): WorkerProcess => {
      const worker = spawnWorker({ address: env.address, taskQueue, dataDir: env.dataDir, logFile: join(env.dataDir, 'workers.log') });
      workers.push(worker);
      return worker;
    };
    const victim = spawn();
    await victim.ready;
    const handle = await startCrawl(
      env.client,
      crawlId,
      { seeds: [`${site.origin}/`], storeBodies: true, concurrency: CONCURRENCY, perHostConcurrency: CONCURRENCY, batchSize: BATCH_SIZE },
      taskQueue,
    );
    await waitFor(() => site.held.size === CONCURRENCY, 30_000, `a page of each of the ${CONCURRENCY} running batches to be held`);
    const inFlight = [...site.held.keys()].sort();
    await victim.kill('SIGKILL');
    const killedAt = Date.now();
    // The server shows the dead worker's batches as started until their heartbeats time out.
    const killed = (await pendingBatches(handle)).filter((batch) => batch.identity.startsWith(`${victim.child.pid}@`) && batch.state.endsWith('STARTED'));
    assert.equal(killed.length, CONCURRENCY, 'the kill hit every running batch');
    site.open();
    const replacement = spawn();
    await replacement.ready;

    const summary = await handle.result();
    assert.equal(summary.status, 'completed');
    const records = await readRecords(env.dataDir, crawlId);
    const expected = ['/', ...Array.from({ length: PAGES }, (_, i) => `/p/${i}`)].sort();
    assert.deepEqual(sortedPaths(records.map((record) => record.url)), expected, 'the records are exactly the pages, each once');
    assert.ok(records.every((record) => record.status === 200 && record.bodyRef !== null), 'every record is a 200 with a stored body');
    const refetched = [...new Set(site.requests.map((entry) => entry.path))].filter((path) => site.requests.filter((entry) => entry.path === path).length > 1);
    assert.deepEqual(refetched.sort(), inFlight, 'only the pages in flight at the kill were requested again, once each');
    assert.deepEqual(inFlight, ['/p/45', '/p/55', '/p/65', '/p/75'], 'each killed batch had stored and committed its first five pages');

    const { outcomes } = await batchOutcomes(handle);
    const retried = outcomes.filter((outcome) => killed.some((batch) => batch.activityId === outcome.activityId));
    assert.ok(retried.length === CONCURRENCY && retried.every((outcome) => outcome.closedAs === 'COMPLETED' && outcome.attempt === 2), 'every killed batch completed on its second attempt');
    const bodyFiles = readdirSync(crawlBodyDir(env.dataDir, crawlId));
    const retryFiles = bodyFiles.filter((name) => name.endsWith('.attempt-2.warc.gz'));
    assert.equal(retryFiles.length, CONCURRENCY, 'each retry stored the rest of its batch in a file of its own');
    assert.ok(retryFiles.every((name) => bodyFiles.includes(name.replace('.attempt-2.', '.attempt-1.'))), 'next to what the killed attempt stored');
    // A killed batch's record points into the file of the attempt that committed it: 40-44 in attempt 1, 45-49 in attempt 2.
    const attemptOf = new Map(records.map((record) => [new URL(record.url).pathname, /\.attempt-(\d+)\./.exec(parseBodyRef(record.bodyRef!).file)?.[1]]));
    for (const held of inFlight) {
      const index = Number(held.slice('/p/'.length));
      const batch = Array.from({ length: BATCH_SIZE }, (_, i) => index - HELD_SLOT + i);
      assert.deepEqual(batch.map((i) => attemptOf.get(`/p/${i}`)), batch.map((i) => (i < index ? '1' : '2')), `the batch of ${held}: stored by both attempts`);
    }

    const file = join(env.dataDir, `${crawlId}.warc.gz`);
    assert.equal(await exportWarc({ dataDir: env.dataDir }, crawlId, file), records.length, 'one exported page per record');
    const responses = await assertWarcHoldsOnce(file, expected);
    console.log(
      `kill-bodies: SIGKILL ${seconds(killedAt - started)} s in, ${killed.length} batches killed with ${inFlight.length} pages in flight (${inFlight.join(' ')}); ` +
        `${records.length} records, ${responses} WARC responses; ${bodyFiles.length} body files (${retryFiles.length} of retries); crawl ${seconds(Date.now() - started)} s`,
    );
  });
});
