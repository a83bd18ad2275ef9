/**
 * `npm run bench`: crawlflow against a raw loop and other crawlers. One synthetic site (its own process), then
 * each tool in its own process, one after another, with the same seed, concurrency and page
 * limit (every reachable page), robots.txt off. Each tool is metered from /proc, and the
 * site server proves what it fetched. Then crawlflow with 1 and 2 worker processes.
 * Results go to bench/results/<name>.json and .svg, and a table to stdout.
 *
 *   npm run bench                                  # 20,000-page site, all tools, wrk, 1 vs 2 workers, broad crawl, 1 vs 4 shards
 *   npm run bench -- --tools raw,crawlflow         # a subset (written as bench/results/partial.*)
 *   npm run bench -- --tools crawlflow --no-wrk --no-workers --broad-hosts 1000   # the broad scenario with crawlflow only
 *   npm run bench -- --tools raw,crawlflow,colly --rounds 5 --no-workers   # five alternating rounds, medians reported
 *   npm run bench:scale                            # 1,000,000-page site, crawlflow only, RSS over time
 *
 * Numbers from one run compare with each other; across runs, a shared machine adds noise.
 * With `--rounds N`, the tools (and the broad scenario) run N times in turn, and each figure
 * and target is the rounds' median (peak RSS: their largest).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../src/temporal/project-paths';
import { barPanelsSvg, lineChartSvg, type BarPanel } from './chart';
import { countHistoryEventsInDataDir, type HistoryCount } from './crawlflow-history';
import { describeBroadScenario, runBroadScenario, type BroadScenario } from './broad-bench';
import { describeRounds, median, medianBy, parseRounds } from './rounds';
import { BenchUsageError, parseFlags, runBenchCommand, wholeNumber } from './bench-args';
import { runShardScenario } from './shard-bench';
import { ensureWrk } from './installers';
import { checkPageSet, fetchSiteStats, pagesPerSecondOf, resetSiteStats, type PageSetCheck } from './page-set';
import { ProcessMeter, type ProcessUsage, type RssSample } from './process-meter';
import { runProcess } from './run-process';
import { PAGE_BYTES, SITE_SEED, startSiteProcess, type SiteProcess } from './site-process';
import { CRAWLFLOW_CRAWL_ID, TOOL_NAMES, TOOLS, type CrawlJob, type ToolName } from './tools';
import { runWithWorkers, type WorkerScalingRun } from './worker-scaling';
import { measureWrkCeiling, type WrkCeiling } from './wrk-ceiling';

const RESULTS_DIR = join(projectRoot, 'bench', 'results');
/** Scratch space for run directories (crawl stores, Temporal databases, outputs); not committed. */
const WORK_DIR = join(projectRoot, '.tools', 'bench-runs');
const MB = 1024 * 1024;

interface ToolResult {
  tool: ToolName;
  label: string;
  /** `timeout`: killed at --tool-timeout; its figures cover what it fetched until then. */
  status: 'ok' | 'failed' | 'timeout';
  error?: string;
  pages: number;
  windowSeconds: number;
  /** Distinct pages / crawl window (first page request to last page response, at the server). */
  pagesPerSecond: number;
  /** The process's whole life, start-up and shutdown included. */
  wallSeconds: number;
  cpuSeconds: number;
  /** The part of `cpuSeconds` spent in the crawl window: the per-page cost, without start-up and shutdown. */
  windowCpuSeconds: number;
  peakRssMb: number;
  ratioToRaw: number | null;
  /** Fetched every reachable page exactly once, and the same set as every other tool. */
  samePageSet: boolean;
  pageSet?: PageSetCheck;
  processes: Array<Omit<ProcessUsage, 'peakRssBytes'> & { peakRssMb: number }>;
  /** The site server's CPU during this tool's run, as a share of one core over the window. */
  siteServerCoreShare: number;
  /** 1-minute load average when the tool started: the machine is shared, this shows how busy. */
  loadAverageAtStart?: number;
  toolOutput?: Record<string, unknown>;
  crawlflow?: {
    history: HistoryCount;
    eventsPerThousandPages: number;
    /**
     * `startupRssMb`: the worker's peak RSS when the site saw the first page request;
     * `mainThreadCpuSeconds`: the CLI process's event loop, where every batch's fetch, parse and store write run.
     */
    worker: { cpuSeconds: number; peakRssMb: number; startupRssMb: number; mainThreadCpuSeconds: number };
    temporalServer: { cpuSeconds: number; peakRssMb: number };
  };
  rssOverTime?: Array<{ t: number; mb: number; byName: Record<string, number> }>;
}

interface Options {
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

const USAGE = `usage: node dist/bench/run-bench.js [options]   (npm run bench -- [options])
  --tools a,b,...      tools to run, in turn (${TOOL_NAMES.join(', ')}; default: all)
  --rounds N           run the tools, and the broad scenario, N times; report each figure's median (default 1)
  --pages N            pages of the site (default 20000; 1000000 with --scale)
  --concurrency N      requests in flight, every tool (default 32)
  --batch-size N       crawlflow's URLs per batch (default 200)
  --workers a,b        crawlflow worker processes to compare (default 1,2); --no-workers skips it
  --broad-hosts N      hosts of the broad scenario (default 1000); 0 or --no-broad skips it
  --no-wrk             skip the site server's wrk ceiling
  --no-shards          skip the 1-vs-4-shard scenario on PostgreSQL
  --scale              1,000,000 pages, crawlflow only, RSS over time
  --tool-timeout S     stop a tool after S seconds (default 240; 14400 with --scale)
  --help               this text
`;

function parseOptions(): Options {
  const { values } = parseFlags({
    options: {
      tools: { type: 'string' },
      rounds: { type: 'string', default: '1' },
      pages: { type: 'string' },
      concurrency: { type: 'string', default: '32' },
      'batch-size': { type: 'string', default: '200' },
      workers: { type: 'string', default: '1,2' },
      'no-workers': { type: 'boolean', default: false },
      'no-wrk': { type: 'boolean', default: false },
      scale: { type: 'boolean', default: false },
      'broad-hosts': { type: 'string', default: '1000' },
      'no-broad': { type: 'boolean', default: false },
      'no-shards': { type: 'boolean', default: false },
      'tool-timeout': { type: 'string' },
      help: { type: 'boolean', default: false },
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

function log(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}

function sumUsage(processes: ProcessUsage[], name: string): { cpuSeconds: number; peakRssMb: number } {
  const matching = processes.filter((process) => process.name === name);
  return {
    cpuSeconds: matching.reduce((sum, process) => sum + process.cpuSeconds, 0),
    peakRssMb: matching.reduce((sum, process) => sum + process.peakRssBytes, 0) / MB,
  };
}

function failed(tool: ToolName, error: string): ToolResult {
  return {
    tool,
    label: TOOLS[tool].label,
    status: 'failed',
    error,
    pages: 0,
    windowSeconds: 0,
    pagesPerSecond: 0,
    wallSeconds: 0,
    cpuSeconds: 0,
    windowCpuSeconds: 0,
    peakRssMb: 0,
    ratioToRaw: null,
    samePageSet: false,
    processes: [],
    siteServerCoreShare: 0,
  };
}

async function runTool(tool: ToolName, site: SiteProcess, options: Options): Promise<ToolResult> {
  const spec = TOOLS[tool];
  try {
    log(`${tool}: installing if needed`);
    await spec.install();
  } catch (err) {
    log(`${tool}: install failed, skipping it:\n${(err as Error).message}`);
    return failed(tool, (err as Error).message);
  }
  const runDir = join(WORK_DIR, `${options.name}-${tool}`);
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(runDir, { recursive: true });
  const job: CrawlJob = { seed: `${site.origin}/page/0`, maxPages: site.reachableCount, concurrency: options.concurrency, batchSize: options.batchSize, runDir };
  await resetSiteStats(site.origin);
  log(`${tool}: crawling ${site.reachableCount} pages`);
  const loadAverageAtStart = loadavg()[0];
  const siteMeter = new ProcessMeter(site.pid);
  const run = await runProcess(await spec.launch(job), { timeoutMs: options.toolTimeoutSeconds * 1000, recordEveryMs: options.scale ? 5_000 : 1_000 });
  const siteUsage = siteMeter.stop();
  if (run.exitCode !== 0 && !run.timedOut) {
    const reason = `exit ${run.exitCode ?? run.signal}:\n${run.stderrTail}`;
    log(`${tool}: failed (${reason})`);
    return failed(tool, reason);
  }
  const stats = await fetchSiteStats(site.origin);
  const pageSet = checkPageSet(stats, site.reachable);
  const result: ToolResult = {
    tool,
    label: spec.label,
    status: run.timedOut ? 'timeout' : 'ok',
    ...(run.timedOut ? { error: `timed out after ${options.toolTimeoutSeconds} s with ${pageSet.pages} of ${site.reachableCount} pages` } : {}),
    pages: pageSet.pages,
    windowSeconds: pageSet.windowSeconds,
    pagesPerSecond: pagesPerSecondOf(pageSet),
    wallSeconds: run.wallSeconds,
    cpuSeconds: run.usage.cpuSeconds,
    windowCpuSeconds: stats.firstRequestAt === null || stats.lastResponseAt === null ? 0 : run.usage.cpuSecondsBetween(stats.firstRequestAt, stats.lastResponseAt),
    peakRssMb: run.usage.peakRssBytes / MB,
    ratioToRaw: null,
    samePageSet: pageSet.exactlyOnce && !run.timedOut,
    pageSet,
    processes: run.usage.processes.map(({ peakRssBytes, ...rest }) => ({ ...rest, peakRssMb: peakRssBytes / MB })),
    siteServerCoreShare: siteUsage.cpuSeconds / Math.max(1e-3, pageSet.windowSeconds),
    loadAverageAtStart,
    toolOutput: run.output,
  };
  if (options.scale) result.rssOverTime = run.usage.rssOverTime.map(toMbSample);
  if (tool === 'crawlflow' && !run.timedOut) {
    const history = await countHistoryEventsInDataDir(join(runDir, 'data'), CRAWLFLOW_CRAWL_ID);
    result.crawlflow = {
      history,
      eventsPerThousandPages: (history.events * 1000) / Math.max(1, pageSet.pages),
      // The CLI process runs the worker (and the client); its child is the dev server.
      worker: {
        ...sumUsage(run.usage.processes, 'node'),
        startupRssMb: run.usage.peakRssAt(run.pid, stats.firstRequestAt ?? 0) / MB,
        mainThreadCpuSeconds: run.usage.processes.find((process) => process.pid === run.pid)?.mainThreadCpuSeconds ?? 0,
      },
      temporalServer: sumUsage(run.usage.processes, 'temporal'),
    };
  }
  log(`${tool}: ${pageSet.pages} pages in ${pageSet.windowSeconds.toFixed(1)} s, exactly once: ${pageSet.exactlyOnce}${run.timedOut ? ` (${result.error})` : ''}`);
  return result;
}

function toMbSample(sample: RssSample): { t: number; mb: number; byName: Record<string, number> } {
  return { t: sample.t, mb: sample.rssBytes / MB, byName: Object.fromEntries(Object.entries(sample.byName).map(([name, bytes]) => [name, bytes / MB])) };
}

function table(results: ToolResult[]): string {
  const header = ['tool', 'pages', 'pages/s', 'wall s', 'CPU s', 'peak RSS MB', 'x raw', 'same page set'];
  const rows = results.map((r) =>
    r.status === 'failed'
      ? [r.tool, 'failed', '', '', '', '', '', r.error?.split('\n')[0] ?? '']
      : [
          r.tool,
          r.status === 'timeout' ? `${r.pages} (timed out at ${r.wallSeconds.toFixed(0)} s)` : String(r.pages),
          r.pagesPerSecond.toFixed(0),
          r.wallSeconds.toFixed(1),
          r.cpuSeconds.toFixed(1),
          r.peakRssMb.toFixed(0),
          r.ratioToRaw === null ? '' : r.ratioToRaw.toFixed(2),
          r.samePageSet ? 'yes' : `no (${r.pageSet?.missing} missing, ${r.pageSet?.duplicates} duplicates, ${r.pageSet?.unexpected} unexpected)`,
        ],
  );
  return [header, header.map(() => '---'), ...rows].map((row) => `| ${row.join(' | ')} |`).join('\n');
}

/** The process tree's CPU per page fetched, so a tool stopped early is not flattered. */
const cpuMsPerPage = (r: ToolResult): number => (r.cpuSeconds * 1000) / Math.max(1, r.pages);

/** The same over the crawl window alone: what one more page costs, once the tool is up. */
const windowCpuMsPerPage = (r: ToolResult): number => (r.windowCpuSeconds * 1000) / Math.max(1, r.pages);

/**
 * Each tool against the raw loop of the same run: throughput, CPU per page and peak RSS as
 * ratios (CPU per page, not CPU seconds, so a tool stopped early is not flattered), over the
 * whole run and over the crawl window alone (the CPU outside it is start-up and shutdown,
 * which a longer crawl does not repeat), and crawlflow's history events per page, which have
 * no raw-loop counterpart.
 */
function ratioTable(results: ToolResult[]): string {
  const raw = results.find((r) => r.tool === 'raw' && r.status === 'ok');
  if (!raw) return '';
  const header = ['tool', 'pages/s', 'x raw', 'CPU ms/page', 'x raw', 'CPU ms/page in the window', 'x raw', 'CPU s outside it', 'peak RSS MB', 'x raw', 'events/page'];
  const rows = results
    .filter((r) => r.status !== 'failed')
    .map((r) => [
      r.status === 'timeout' ? `${r.tool} (timed out)` : r.tool,
      r.pagesPerSecond.toFixed(0),
      // Against the raw loop of the tool's own round: with rounds, the raw row may be another round's.
      (r.ratioToRaw ?? r.pagesPerSecond / raw.pagesPerSecond).toFixed(2),
      cpuMsPerPage(r).toFixed(2),
      (cpuMsPerPage(r) / cpuMsPerPage(raw)).toFixed(2),
      windowCpuMsPerPage(r).toFixed(2),
      (windowCpuMsPerPage(r) / windowCpuMsPerPage(raw)).toFixed(2),
      (r.cpuSeconds - r.windowCpuSeconds).toFixed(1),
      r.peakRssMb.toFixed(0),
      (r.peakRssMb / raw.peakRssMb).toFixed(2),
      r.crawlflow ? (r.crawlflow.eventsPerThousandPages / 1000).toFixed(3) : '',
    ]);
  return [header, header.map(() => '---'), ...rows].map((row) => `| ${row.join(' | ')} |`).join('\n');
}

/** One round: each tool in turn, with its pages/s over this round's raw loop's. */
async function runRound(site: SiteProcess, options: Options): Promise<ToolResult[]> {
  const results: ToolResult[] = [];
  for (const tool of options.tools) results.push(await runTool(tool, site, options));
  // Exactly-once means the fetched set is the reachable set, so those tools share one set.
  const raw = results.find((r) => r.tool === 'raw' && r.status === 'ok');
  for (const r of results) if (raw && r.status !== 'failed') r.ratioToRaw = r.pagesPerSecond / raw.pagesPerSecond;
  return results;
}

/**
 * Each tool's median round: by its ratio to the raw loop where every round has one, else (and
 * for the raw loop itself) by pages/s. A tool that failed every round: its first failure.
 */
function medianResults(rounds: ToolResult[][], tools: ToolName[]): ToolResult[] {
  return tools.map((tool) => {
    const runs = rounds.map((round) => round.find((r) => r.tool === tool)!);
    const ran = runs.filter((r) => r.status !== 'failed');
    if (ran.length === 0) return runs[0];
    const byRatio = tool !== 'raw' && ran.every((r) => r.ratioToRaw !== null);
    return medianBy(ran, (r) => (byRatio ? r.ratioToRaw! : r.pagesPerSecond));
  });
}

/** crawlflow's pages/s over `other`'s, in each round where both ran. */
function roundRatios(rounds: ToolResult[][], other: ToolName): number[] {
  return rounds.flatMap((round) => {
    const ran = (tool: ToolName) => round.find((r) => r.tool === tool && r.status !== 'failed');
    const crawlflow = ran('crawlflow');
    const base = ran(other);
    return crawlflow && base ? [crawlflow.pagesPerSecond / base.pagesPerSecond] : [];
  });
}

/** Each target's rounds' median; peak RSS, their largest. */
function targetsOf(
  rounds: ToolResult[][],
  workers: WorkerScalingRun[],
  broad: BroadScenario | { error: string } | undefined,
): Record<string, { value: number | null; target: string; met: boolean | null }> {
  // A timed-out tool's rate covers only its first, faster part: comparisons flatter it.
  const crawlflows = rounds.flatMap((round) => round.filter((r) => r.tool === 'crawlflow' && r.status !== 'failed'));
  const medianOf = (values: number[]): number | null => (values.length === 0 ? null : median(values));
  const ratio = (other: ToolName): number | null => medianOf(roundRatios(rounds, other));
  const crawlflowFigures = crawlflows.flatMap((r) => (r.crawlflow ? [r.crawlflow] : []));
  const check = (value: number | null, target: string, ok: (v: number) => boolean) => ({ value, target, met: value === null ? null : ok(value) });
  const one = workers.find((w) => w.workers === 1);
  const two = workers.find((w) => w.workers === 2);
  const broadRuns = broad !== undefined && 'ratio' in broad ? broad : undefined;
  return {
    crawlflowVsRaw: check(ratio('raw'), '>= 0.8', (v) => v >= 0.8),
    crawlflowVsCrawlee: check(ratio('crawlee'), '>= 3', (v) => v >= 3),
    crawlflowVsScrapy: check(ratio('scrapy'), '>= 1 (be ahead)', (v) => v >= 1),
    crawlflowVsColly: check(ratio('colly'), '>= 1 (be ahead)', (v) => v >= 1),
    historyEventsPerPage: check(medianOf(crawlflowFigures.map((figures) => figures.eventsPerThousandPages / 1000)), '<= 0.05', (v) => v <= 0.05),
    broadVsSingleHost: check(broadRuns?.ratio ?? null, '>= 0.8', (v) => v >= 0.8),
    // The issue's target on the many-host site: against the raw loop on that site.
    broadVsRaw: check(broadRuns?.broad.vsRaw ?? null, '>= 0.8', (v) => v >= 0.8),
    broadEventsPerPage: check(broadRuns?.broad.eventsPerPage ?? null, '<= 0.05', (v) => v <= 0.05),
    singleHostEventsPerPage: check(broadRuns?.single.eventsPerPage ?? null, '<= 0.05', (v) => v <= 0.05),
    // The process tree: the worker and the Temporal server it starts, over its whole life.
    cpuMsPerPage: check(medianOf(crawlflows.map(cpuMsPerPage)), '<= 0.8', (v) => v <= 0.8),
    // The same in the crawl window alone, beside it: start-up is not a cost per page.
    windowCpuMsPerPage: check(medianOf(crawlflows.map(windowCpuMsPerPage)), '<= 0.8', (v) => v <= 0.8),
    workerPeakRssMb: check(crawlflowFigures.length === 0 ? null : Math.max(...crawlflowFigures.map((figures) => figures.worker.peakRssMb)), '< 300', (v) => v < 300),
    twoWorkersSpeedup: check(one && two ? two.pagesPerSecond / one.pagesPerSecond : null, '> 1', (v) => v > 1),
  };
}

function chartOf(results: ToolResult[], subtitle: string): string {
  const bars = (value: (r: ToolResult) => number) =>
    results.map((r) => ({ label: r.status === 'timeout' ? `${r.label} (timed out)` : r.label, value: value(r), failed: r.status === 'failed' ? 'failed' : undefined }));
  const panels: BarPanel[] = [
    { title: 'throughput', unit: 'pages/s', bars: bars((r) => r.pagesPerSecond) },
    { title: 'CPU', unit: 's, process tree', bars: bars((r) => r.cpuSeconds) },
    { title: 'peak RSS', unit: 'MB, process tree', bars: bars((r) => r.peakRssMb) },
  ];
  return barPanelsSvg('crawlflow bench: same site, same concurrency, every reachable page once', panels, subtitle);
}

/** The site server's own ceiling, measured with wrk; why not, if it could not be. */
async function wrkCeiling(site: SiteProcess): Promise<WrkCeiling | { error: string }> {
  try {
    const wrk = await measureWrkCeiling(await ensureWrk(), site.origin, site.pages, site.pid, WORK_DIR);
    log(`site server ceiling: ${wrk.requestsPerSecond.toFixed(0)} req/s (${wrk.command})`);
    return wrk;
  } catch (err) {
    log(`wrk: ${(err as Error).message}`);
    return { error: (err as Error).message };
  }
}

/** crawlflow with each `--workers` count of worker processes; a count that failed is logged and left out. */
async function workerScaling(site: SiteProcess, options: Options): Promise<WorkerScalingRun[]> {
  const workers: WorkerScalingRun[] = [];
  for (const count of options.workers) {
    log(`crawlflow with ${count} worker process(es)`);
    const runDir = join(WORK_DIR, `${options.name}-workers-${count}`);
    rmSync(runDir, { recursive: true, force: true });
    try {
      const job: CrawlJob = { seed: `${site.origin}/page/0`, maxPages: site.reachableCount, concurrency: options.concurrency, batchSize: options.batchSize, runDir };
      const run = await runWithWorkers(site, job, count);
      workers.push(run);
      log(`${count} worker(s): ${run.pagesPerSecond.toFixed(0)} pages/s, exactly once: ${run.pageSet.exactlyOnce}`);
    } catch (err) {
      log(`${count} worker(s) failed: ${(err as Error).message}`);
    }
  }
  return workers;
}

/** The measured parts of a run. */
interface RunParts {
  wrk: WrkCeiling | { error: string } | undefined;
  results: ToolResult[];
  rounds: ToolResult[][];
  workers: WorkerScalingRun[];
  broad: Awaited<ReturnType<typeof broadScenario>> | undefined;
  shards: string | undefined;
}

/** What a run writes to bench/results/<name>.json. */
function reportOf(site: SiteProcess, options: Options, { wrk, results, rounds, workers, broad, shards }: RunParts) {
  return {
    generatedAt: new Date().toISOString(),
    command: `node dist/bench/run-bench.js ${process.argv.slice(2).join(' ')}`.trim(),
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryGiB: totalmem() / 1024 ** 3, node: process.version, loadAverageAtEnd: loadavg() },
    site: { pages: site.pages, reachable: site.reachableCount, pageBytes: PAGE_BYTES, linksPerPage: 12, seed: SITE_SEED },
    settings: { concurrency: options.concurrency, maxPages: site.reachableCount, crawlflowBatchSize: options.batchSize, robots: 'off' },
    wrk,
    tools: results,
    ...(options.rounds > 1 ? { rounds } : {}),
    workers,
    broad,
    shards,
    targets: targetsOf(rounds, workers, broad),
  };
}

type BenchReport = ReturnType<typeof reportOf>;

/** The report's tables, figures and targets on stdout. */
function printReport(report: BenchReport, rounds: ToolResult[][], options: Options): void {
  const { wrk, workers, broad, shards } = report;
  process.stdout.write(`\n${table(report.tools)}\n\n${ratioTable(report.tools)}\n\n`);
  if (wrk && 'requestsPerSecond' in wrk) process.stdout.write(`site server ceiling (wrk): ${wrk.requestsPerSecond.toFixed(0)} req/s\n`);
  const crawlflow = report.tools.find((r) => r.crawlflow);
  if (crawlflow?.crawlflow) {
    const { history, eventsPerThousandPages, worker, temporalServer } = crawlflow.crawlflow;
    process.stdout.write(
      `crawlflow: ${history.events} history events over ${history.runs} run(s) = ${eventsPerThousandPages.toFixed(1)} per 1,000 pages; ` +
        `worker ${worker.cpuSeconds.toFixed(1)} CPU s (main thread ${worker.mainThreadCpuSeconds.toFixed(1)}) / ${worker.peakRssMb.toFixed(0)} MB peak (${worker.startupRssMb.toFixed(0)} MB at the first page request), Temporal server ${temporalServer.cpuSeconds.toFixed(1)} CPU s / ${temporalServer.peakRssMb.toFixed(0)} MB peak\n`,
    );
    if (options.scale) reportScale(crawlflow);
  }
  if (options.rounds > 1) {
    for (const other of options.tools.filter((tool) => tool !== 'crawlflow')) {
      const ratios = roundRatios(rounds, other);
      if (ratios.length > 0) process.stdout.write(`crawlflow x ${other}, round by round: ${describeRounds(ratios)}\n`);
    }
  }
  for (const run of workers) process.stdout.write(`crawlflow, ${run.workers} worker process(es): ${run.pagesPerSecond.toFixed(0)} pages/s\n`);
  if (broad && 'ratio' in broad) process.stdout.write(`${describeBroadScenario(broad)}\n`);
  if (shards !== undefined) process.stdout.write(`one crawl as 1 shard and as 4 (bench/shard-bench.ts):\n${shards}\n`);
  for (const [name, target] of Object.entries(report.targets)) {
    if (target.value !== null) process.stdout.write(`target ${name}: ${target.value.toFixed(3)} (${target.target}) ${target.met ? 'met' : 'NOT met'}\n`);
  }
  process.stdout.write(`\nwritten: bench/results/${options.name}.json, bench/results/${options.name}.svg\n`);
}

async function main(): Promise<void> {
  const options = parseOptions();
  mkdirSync(RESULTS_DIR, { recursive: true });
  mkdirSync(WORK_DIR, { recursive: true });
  log(`starting the ${options.pages.toLocaleString('en-US')}-page site`);
  const site = await startSiteProcess(options.pages);
  try {
    log(`${site.reachableCount} pages reachable from /page/0 (every 10th page is an orphan)`);
    const wrk = options.wrk ? await wrkCeiling(site) : undefined;

    const rounds: ToolResult[][] = [];
    for (let round = 1; round <= options.rounds; round += 1) {
      if (options.rounds > 1) log(`round ${round} of ${options.rounds}`);
      rounds.push(await runRound(site, options));
    }
    const results = medianResults(rounds, options.tools);

    const workers = await workerScaling(site, options);

    const broad = options.broadHosts > 0 ? await broadScenario(options) : undefined;
    const shards = options.shards ? await shardScenario() : undefined;

    const report = reportOf(site, options, { wrk, results, rounds, workers, broad, shards });
    const subtitle = `${site.reachableCount.toLocaleString('en-US')} pages of ~8 KB, concurrency ${options.concurrency}, ${report.machine.cpus} cores, ${report.generatedAt.slice(0, 16)}Z`;
    writeFileSync(join(RESULTS_DIR, `${options.name}.json`), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(RESULTS_DIR, `${options.name}.svg`), chartOf(results, subtitle));
    if (options.scale) writeScaleCharts(results);

    printReport(report, rounds, options);
  } finally {
    await site.stop();
  }
}

/** The shard scenario (bench/shard-bench.ts): its table, or why it could not run. */
async function shardScenario(): Promise<string> {
  log('shards: one crawl on PostgreSQL as 1 shard, then as 4');
  try {
    return await runShardScenario();
  } catch (err) {
    log(`shard scenario failed: ${(err as Error).message}`);
    return `failed: ${(err as Error).message}`;
  }
}

/** The broad-crawl scenario on sites of their own (the head-to-head's site is one host). */
async function broadScenario(options: Options): Promise<BroadScenario | { error: string }> {
  try {
    return await runBroadScenario({
      pages: options.pages,
      hosts: options.broadHosts,
      concurrency: options.concurrency,
      batchSize: options.batchSize,
      workDir: WORK_DIR,
      timeoutSeconds: options.toolTimeoutSeconds,
      rounds: options.rounds,
      log,
    });
  } catch (err) {
    log(`broad scenario failed: ${(err as Error).message}`);
    return { error: (err as Error).message };
  }
}

/** The 1M run against the 20k head-to-head's crawlflow figure, if there is one. */
function reportScale(crawlflow: ToolResult): void {
  const latest = join(RESULTS_DIR, 'latest.json');
  if (!existsSync(latest)) return;
  const previous = (JSON.parse(readFileSync(latest, 'utf8')) as { tools: ToolResult[] }).tools.find((r) => r.tool === 'crawlflow' && r.status === 'ok');
  if (!previous) return;
  const ratio = crawlflow.pagesPerSecond / previous.pagesPerSecond;
  process.stdout.write(`1M-page run: ${crawlflow.pagesPerSecond.toFixed(0)} pages/s = ${ratio.toFixed(2)}x the 20k run's ${previous.pagesPerSecond.toFixed(0)} (target within 25%: ${ratio >= 0.75 ? 'met' : 'NOT met'})\n`);
}

function writeScaleCharts(results: ToolResult[]): void {
  const crawlflow = results.find((r) => r.tool === 'crawlflow');
  const samples = crawlflow?.rssOverTime;
  if (!crawlflow || !samples) return;
  const names = [...new Set(samples.flatMap((sample) => Object.keys(sample.byName)))];
  const series = [
    { label: 'process tree', points: samples.map((s) => ({ x: s.t / 60, y: s.mb })) },
    ...names.map((name) => ({
      label: name === 'node' ? 'worker (node)' : name === 'temporal' ? 'Temporal server' : name,
      points: samples.map((s) => ({ x: s.t / 60, y: s.byName[name] ?? 0 })),
    })),
  ];
  writeFileSync(join(RESULTS_DIR, 'scale-rss.svg'), lineChartSvg(`crawlflow, ${crawlflow.pages.toLocaleString('en-US')} pages: RSS over time`, 'minutes', 'RSS (MB)', series));
}

runBenchCommand(main, USAGE);
