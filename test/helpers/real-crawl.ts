/**
 * Real crawls for behaviour tests: `crawlSession` on a Temporal dev server (one per test
 * file), with its batches run concurrently by a crawl worker on its own task queue. The
 * worker's requests go through the network the test gives it (a stub resolver and a
 * recording, loopback-only connector), so what a test asserts about connections holds for
 * the crawl's own sockets.
 */
import { after, before } from 'node:test';
import type { SitemapDiscoveryResult } from '../../src/activities/sitemap-discovery';
import type { CrawlHandle } from '../../src/client/crawl-client';
import type { CrawlInput } from '../../src/shared/crawl-config';
import type { CrawlSummary } from '../../src/shared/crawl-types';
import type { PageRecord } from '../../src/store/frontier-store';
import type { WorkerNetwork } from '../../src/workers/crawl-worker';
import { completedResults } from './histories';
import { runCrawlToEnd, startTestTemporal, uniqueQueue, type TestTemporal } from './temporal';

export interface CrawlRun {
  summary: CrawlSummary;
  /** In discovery order. */
  records: PageRecord[];
  handle: CrawlHandle;
}

export interface RealCrawler {
  /** Crawls to the end: the summary, the records and the workflow's handle. */
  run(input: CrawlInput): Promise<CrawlRun>;
  /** Crawls to the end and returns the records, in discovery order. */
  crawl(input: CrawlInput): Promise<PageRecord[]>;
  /** The record of a crawl of `url` alone (depth 0: its links are not followed). */
  record(url: string, input?: Partial<CrawlInput>): Promise<PageRecord>;
  /** What the crawl's sitemap activity reported, read from the workflow's history. */
  sitemapReport(handle: CrawlHandle): Promise<SitemapDiscoveryResult>;
}

/** A dev server and a worker on `network`, started before and stopped after the calling suite. */
export function realCrawler(network: WorkerNetwork): RealCrawler {
  const taskQueue = uniqueQueue('real-crawl');
  let env: TestTemporal | undefined;
  let crawls = 0;
  before(async () => {
    env = await startTestTemporal();
    await env.startWorker(taskQueue, undefined, network);
  });
  after(() => env?.close());

  const run = (input: CrawlInput): Promise<CrawlRun> => {
    if (env === undefined) throw new Error('realCrawler: crawls run in tests, after its before hook');
    crawls += 1;
    // No retries unless a test asks: a retried failure would only slow the suite down.
    return runCrawlToEnd(env, taskQueue, `crawl-${process.pid}-${crawls}`, { maxRetries: 0, ...input });
  };
  return {
    run,
    crawl: async (input) => (await run(input)).records,
    async record(url, input = {}) {
      const { records } = await run({ seeds: [url], maxDepth: 0, ...input });
      const record = records.find((candidate) => candidate.url === url);
      if (!record) throw new Error(`no record for ${url}`);
      return record;
    },
    async sitemapReport(handle) {
      const [report] = completedResults<SitemapDiscoveryResult>(await handle.fetchHistory(), 'discoverSitemaps');
      if (report === undefined) throw new Error(`crawl ${handle.workflowId} read no sitemaps`);
      return report;
    },
  };
}
