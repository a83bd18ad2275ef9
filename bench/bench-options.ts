/**
 * `run-bench`'s options: what `--help` says, and the flags checked once into `Options`
 * (bench/bench-args.ts reports bad input as a usage error).
 */
import { parseCrawlConfig } from '../src/shared/crawl-config';
import { BenchUsageError, parseFlags, wholeNumber } from './bench-args';
import { parseRounds } from './rounds';
import { TOOL_NAMES, type ToolName } from './tools';

export interface Options {
  tools: ToolName[];
  /** Times the tools run, in turn; figures and targets are the rounds' medians (bench/rounds.ts). */
  rounds: number;
  pages: number;
  concurrency: number;
  batchSize: number;
  workers: number[];
  wrk: boolean;
  scale: boolean;
  /** Hosts of the broad-crawl scenario (bench/broad-bench.ts); 0 skips it. */
  broadHosts: number;
  /** Runs the 1-vs-4-shard scenario on PostgreSQL (bench/shard-bench.ts). */
  shards: boolean;
  toolTimeoutSeconds: number;
  name: string;
}

/** crawlflow's own default, which the bench runs unless told otherwise. */
const CRAWLFLOW_BATCH_SIZE = parseCrawlConfig({ seeds: ['http://bench.test/'] }).batchSize;

export const USAGE = `usage: node dist/bench/run-bench.js [options]   (npm run bench -- [options])
  --tools a,b,...      tools to run, in turn (${TOOL_NAMES.join(', ')}; default: all)
  --rounds N           run the tools, and the broad scenario, N times; report each figure's median (default 1)
  --pages N            pages of the site (default 20000; 1000000 with --scale)
  --concurrency N      requests in flight, every tool (default 32)
  --batch-size N       crawlflow's URLs per batch (default: crawlflow's, ${CRAWLFLOW_BATCH_SIZE})
  --workers a,b        crawlflow worker processes to compare (default 1,2); --no-workers skips it
  --broad-hosts N      hosts of the broad scenario (default 1000); 0 or --no-broad skips it
  --no-wrk             skip the site server's wrk ceiling
  --no-shards          skip the 1-vs-4-shard scenario on PostgreSQL
  --scale              1,000,000 pages, crawlflow only, RSS over time
  --tool-timeout S     stop a tool after S seconds (default 240; 14400 with --scale)
  --help               this text
`;

export function parseOptions(): Options {
  const { values } = parseFlags({
    options: {
      tools: { type: 'string' },
      rounds: { type: 'string', default: '1' },
      pages: { type: 'string' },
      concurrency: { type: 'string', default: '32' },
      'batch-size': { type: 'string', default: String(CRAWLFLOW_BATCH_SIZE) },
      workers: { type: 'string', default: '1,2' },
      'no-workers': { type: 'boolean', default: false },
      'no-wrk': { type: 'boolean', default: false },
      scale: { type: 'boolean', default: false },
      'broad-hosts': { type: 'string', default: '1000' },
      'no-broad': { type: 'boolean', default: false },
      'no-shards': { type: 'boolean', default: false },
      'tool-timeout': { type: 'string' },
    },
  });
  const tools = (values.tools ?? (values.scale ? 'crawlflow' : TOOL_NAMES.join(','))).split(',') as ToolName[];
  for (const tool of tools) if (!TOOL_NAMES.includes(tool)) throw new BenchUsageError(`--tools: unknown tool "${tool}" (known: ${TOOL_NAMES.join(', ')})`);
  const all = TOOL_NAMES.every((tool) => tools.includes(tool));
  return {
    tools,
    rounds: parseRounds(values.rounds),
    pages: wholeNumber('--pages', values.pages ?? (values.scale ? '1000000' : '20000')),
    concurrency: wholeNumber('--concurrency', values.concurrency),
    batchSize: wholeNumber('--batch-size', values['batch-size']),
    workers: values['no-workers'] || values.scale ? [] : values.workers.split(',').map((count) => wholeNumber('--workers', count)),
    wrk: !values['no-wrk'],
    scale: values.scale,
    broadHosts: values['no-broad'] || values.scale || !tools.includes('crawlflow') ? 0 : wholeNumber('--broad-hosts', values['broad-hosts'], 0),
    shards: !values['no-shards'] && !values.scale && tools.includes('crawlflow'),
    // Keeps one invocation of the head-to-head near 10 minutes even when a tool stalls.
    toolTimeoutSeconds: wholeNumber('--tool-timeout', values['tool-timeout'] ?? (values.scale ? String(4 * 3600) : '240')),
    name: values.scale ? 'scale' : all ? 'latest' : 'partial',
  };
}
