/**
 * The SQLite store alone: the bench's two crawl shapes replayed against SqliteFrontierStore,
 * with no fetching, parsing or Temporal, timing what the store's claims and completions cost.
 * Free of the network and of the machine's other processes, it tells two builds of the store
 * apart in seconds where a whole crawl's ±20% cannot.
 *
 *   node dist/bench/store-only.js [--runs 3] [--pages 20000] [--hosts 1000]
 *
 * - one host: the bench site's graph (12 links a page), 32 batches taking shares of 200 URLs;
 * - many hosts: the same number of pages as `--hosts` sites of the same graph, 32 batches each
 *   filled with ready claims up to 200 URLs, two batches per host at most (the broad scenario).
 *
 * Each completion carries the page's record (its links included) and its links, as a batch's
 * does. Prints, per run, the store's CPU µs per page, the part of it on the main thread, and the
 * part its claims took.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteFrontierStore } from '../src/store/sqlite-store';
import type { ClaimedUrl, FrontierEntry, PageRecord } from '../src/store/frontier-store';
import { pagePath, SiteGraph } from '../src/sites/synthetic-site';
import { mainThreadCpuSeconds } from './process-meter';
import { BenchUsageError, parseFlags, runBenchCommand, wholeNumber } from './bench-args';

const BATCHES = 32;
const BATCH_URLS = 200;
const PER_HOST_BATCHES = 2;

interface StoreRun {
  pages: number;
  cpuMicrosPerPage: number;
  /** The part of it on the main thread, where a worker's batches run (the WAL checkpoints are not). */
  mainThreadMicrosPerPage: number;
  claimMicrosPerPage: number;
  claims: number;
}

/** The record a batch writes for a fetched page: the fields it fills for the bench's pages. */
function recordOf(url: string, depth: number, links: string[]): PageRecord {
  return {
    url, depth, status: 200, error: null, skipped: null, title: 'A page of the synthetic site', links, fetchedAt: new Date().toISOString(),
    finalUrl: null, contentType: 'text/html; charset=utf-8', bytes: 8_192, canonical: null, noindex: false, fields: {},
    etag: null, lastModified: null, contentHash: '0'.repeat(64), change: null, bodyRef: null, payloadRecord: null,
  };
}

/** A site of `hosts` hosts on one graph: the key and URL of page `page` of host `host`. */
function siteOf(pages: number, hosts: number) {
  const graph = new SiteGraph({ pages: pages / hosts, seed: 1 });
  const key = (host: number): string => `h${host}.test:8080`;
  const urlOf = (host: number, page: number): string => `http://${key(host)}${pagePath(page)}`;
  const parse = (url: string): { host: number; page: number } => {
    const match = /^http:\/\/h(\d+)\.test:8080\/page\/(\d+)$/.exec(url)!;
    return { host: Number(match[1]), page: Number(match[2]) };
  };
  return { graph, key, urlOf, parse };
}

async function replay(pages: number, hosts: number): Promise<StoreRun> {
  const dir = mkdtempSync(join(tmpdir(), 'crawlflow-store-only-'));
  const store = new SqliteFrontierStore(join(dir, 'crawl.sqlite'));
  const site = siteOf(pages, hosts);
  let claimMicros = 0;
  let claims = 0;
  /** Times the synchronous part of a claim: the SQLite store does its whole transaction there. */
  const timed = async <T>(claim: () => Promise<T>): Promise<T> => {
    const started = process.cpuUsage();
    const pending = claim();
    const used = process.cpuUsage(started);
    claimMicros += used.user + used.system;
    claims += 1;
    return pending;
  };
  const finish = async (batchId: string, item: ClaimedUrl): Promise<void> => {
    const { host, page } = site.parse(item.url);
    const links = site.graph.linksOf(page).map((target) => site.urlOf(host, target));
    const entries: FrontierEntry[] = links.map((url) => ({ url, host: site.key(host), depth: item.depth + 1, priority: 1 }));
    await store.complete(batchId, recordOf(item.url, item.depth, links), entries);
  };
  let batches = 0;
  /** One batch: its share of the one host, or ready claims up to its limit; false when it found nothing. */
  const runBatch = async (): Promise<boolean> => {
    const batchId = `batch-${(batches += 1)}`;
    let claimed = 0;
    for (;;) {
      const urls =
        hosts === 1
          ? await timed(() => store.claim(batchId, site.key(0), BATCH_URLS, undefined, false, { holders: BATCHES }))
          : ((await timed(() =>
              store.claimReady(batchId, { render: false, freeBy: Date.now() + 10_000, batchLimit: BATCH_URLS, maxPagesPerHost: pages, holdersOf: () => PER_HOST_BATCHES, maxHolders: PER_HOST_BATCHES }),
            )).flatMap((ready) => ready.urls));
      for (const item of urls) await finish(batchId, item);
      claimed += urls.length;
      if (urls.length === 0 || hosts === 1 || claimed >= BATCH_URLS) return claimed > 0;
    }
  };
  await store.enqueue(Array.from({ length: hosts }, (_, host) => ({ url: site.urlOf(host, 0), host: site.key(host), depth: 0 })));
  const started = process.cpuUsage();
  const mainStarted = mainThreadCpuSeconds();
  // A lane whose batch found nothing waits a turn: others' completions may queue more.
  const lane = async (): Promise<void> => {
    for (let idle = 0; idle < BATCHES * 4; ) {
      if (await runBatch()) idle = 0;
      else {
        idle += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  };
  await Promise.all(Array.from({ length: BATCHES }, lane));
  const used = process.cpuUsage(started);
  const mainUsed = mainThreadCpuSeconds() - mainStarted;
  const { processed } = await store.totals();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return { pages: processed, cpuMicrosPerPage: (used.user + used.system) / processed, mainThreadMicrosPerPage: (mainUsed * 1e6) / processed, claimMicrosPerPage: claimMicros / processed, claims };
}

const USAGE = `usage: node dist/bench/store-only.js [--runs N] [--pages N] [--hosts N]
  --runs N    runs of both crawl shapes, one host and --hosts hosts (default 3)
  --pages N   pages of each replayed crawl (default 20000)
  --hosts N   hosts of the many-host shape; --pages must be a multiple of it (default 1000)
`;

async function main(): Promise<void> {
  const { values } = parseFlags({
    options: { runs: { type: 'string', default: '3' }, pages: { type: 'string', default: '20000' }, hosts: { type: 'string', default: '1000' } },
  });
  const pages = wholeNumber('--pages', values.pages);
  const manyHosts = wholeNumber('--hosts', values.hosts);
  if (!Number.isInteger(pages / manyHosts)) throw new BenchUsageError(`--pages ${pages} must be a multiple of --hosts ${manyHosts}`);
  for (let run = 1; run <= wholeNumber('--runs', values.runs); run += 1) {
    for (const hosts of [1, manyHosts]) {
      const result = await replay(pages, hosts);
      process.stdout.write(
        `run ${run} | ${String(hosts).padStart(5)} host(s) | ${result.pages} pages | ${result.cpuMicrosPerPage.toFixed(1)} µs CPU/page ` +
          `(main thread ${result.mainThreadMicrosPerPage.toFixed(1)}) | ` +
          `claims ${result.claimMicrosPerPage.toFixed(1)} µs/page over ${result.claims} claims\n`,
      );
    }
  }
}

runBenchCommand(main, USAGE);
