/**
 * The crawlers the bench runs, each as its own process with the same seed, concurrency and
 * page limit, robots.txt off, and each printing one JSON line of counts when done.
 */
import { join } from 'node:path';
import { projectRoot } from '../src/temporal/project-paths';
import { ENV } from '../src/shared/names';
import { freeServerPort } from '../src/workers/runtime';
import { COLLY_BINARY, CRAWLEE_DIR, installColly, installCrawlee, installScrapy, installSpider, SCRAPY_DIR, SPIDER_BINARY, VENV_DIR } from './installers';

export const TOOL_NAMES = ['raw', 'crawlflow', 'crawlee', 'scrapy', 'colly', 'spider'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export interface CrawlJob {
  seed: string;
  /** crawlflow and the raw loop only: every seed, when the site has many hosts (`seed` is the first). */
  seeds?: string[];
  /** crawlflow only: batches per host; the crawl's concurrency (one host is the whole site) when absent. */
  perHostConcurrency?: number;
  maxPages: number;
  concurrency: number;
  /** crawlflow only: URLs per batch activity. */
  batchSize: number;
  /** A fresh directory for this run's files. */
  runDir: string;
}

export interface Launch {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

export interface Tool {
  name: ToolName;
  label: string;
  install(): Promise<void>;
  launch(job: CrawlJob): Promise<Launch>;
}

const node = process.execPath;
/** The `crawlflow` bin (executable, built by `npm run build`). */
export const CRAWLFLOW_CLI = join(projectRoot, 'dist', 'src', 'cli', 'main.js');

/** The crawlflow ID of a bench run, so the history can be found afterwards. */
export const CRAWLFLOW_CRAWL_ID = 'bench-crawl';

/** Flags every crawlflow run of the bench shares (`crawl` and `start`). */
export function crawlflowCrawlFlags(job: CrawlJob): string[] {
  return [
    ...(job.seeds ?? [job.seed]),
    '--max-pages', String(job.maxPages),
    // Concurrent discovery is not breadth-first, so first-seen depth can exceed the BFS depth:
    // no depth limit, like the other tools.
    '--max-depth', '1000',
    '--concurrency', String(job.concurrency),
    '--per-host-concurrency', String(job.perHostConcurrency ?? job.concurrency),
    // One host is the whole site: the per-host cap (default 100,000) must not cut the crawl short.
    '--max-pages-per-host', String(job.maxPages),
    '--batch-size', String(job.batchSize),
    '--ignore-robots',
    '--allow-private-network',
    '--data-dir', join(job.runDir, 'data'),
    '--id', CRAWLFLOW_CRAWL_ID,
  ];
}

/** Environment for crawlflow processes: the embedded dev server on free ports, quiet logs. */
export async function crawlflowEnv(grpcPort?: number): Promise<Record<string, string>> {
  return {
    [ENV.devServerPort]: String(grpcPort ?? (await freeServerPort())),
    [ENV.devServerUiPort]: String(await freeServerPort()),
    [ENV.logLevel]: 'warn',
  };
}

const limitArgs = (job: CrawlJob): string[] => ['--concurrency', String(job.concurrency), '--max-pages', String(job.maxPages)];
const sharedArgs = (job: CrawlJob): string[] => ['--url', job.seed, ...limitArgs(job)];

export const TOOLS: Record<ToolName, Tool> = {
  raw: {
    name: 'raw',
    label: 'raw loop (undici + cheerio)',
    install: async () => undefined,
    launch: async (job) => ({
      command: node,
      args: [join(projectRoot, 'dist', 'bench', 'raw-loop.js'), ...(job.seeds ?? [job.seed]).flatMap((seed) => ['--url', seed]), ...limitArgs(job)],
    }),
  },
  crawlflow: {
    name: 'crawlflow',
    label: 'crawlflow (CLI, embedded server, 1 worker)',
    install: async () => undefined,
    // The CLI itself, as `crawlflow crawl` runs it: its first line sets Node's flags.
    launch: async (job) => ({
      command: CRAWLFLOW_CLI,
      args: ['crawl', ...crawlflowCrawlFlags(job), '--no-progress', '--json', '--out', join(job.runDir, 'crawl.jsonl')],
      env: await crawlflowEnv(),
    }),
  },
  crawlee: {
    name: 'crawlee',
    label: 'Crawlee CheerioCrawler',
    install: installCrawlee,
    launch: async (job) => ({
      command: node,
      // No --max-pages: the site bounds the crawl, and Crawlee's page limit slows it (see crawl.mjs).
      args: [join(CRAWLEE_DIR, 'crawl.mjs'), '--url', job.seed, '--concurrency', String(job.concurrency)],
      // Crawlee keeps a ./storage directory by default; keep even its metadata out of the repo.
      env: { CRAWLEE_STORAGE_DIR: join(job.runDir, 'storage') },
    }),
  },
  scrapy: {
    name: 'scrapy',
    label: 'Scrapy (minimal spider)',
    install: installScrapy,
    launch: async (job) => ({ command: join(VENV_DIR, 'bin', 'python'), args: [join(SCRAPY_DIR, 'spider.py'), ...sharedArgs(job)] }),
  },
  colly: {
    name: 'colly',
    label: 'Colly (minimal collector)',
    install: installColly,
    // Go's flag package takes single-dash flags; it accepts the double-dash form too.
    launch: async (job) => ({ command: COLLY_BINARY, args: sharedArgs(job) }),
  },
  spider: {
    name: 'spider',
    label: 'spider-rs (minimal Website crawl)',
    install: installSpider,
    launch: async (job) => ({ command: SPIDER_BINARY, args: sharedArgs(job) }),
  },
};
