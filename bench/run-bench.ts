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
 * With `--rounds N`, the tools (and the broad scenario) run N times in turn, each even round in
 * the reverse order (`roundOrder`), and each figure and target is the rounds' median (peak RSS:
 * their largest).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../src/temporal/project-paths';
import { barPanelsSvg, lineChartSvg, type BarPanel } from './chart';
import { countHistoryEventsInDataDir } from './crawlflow-history';
import { describeBroadScenario, runBroadScenario, type BroadScenario } from './broad-bench';
import { describeRounds, median, roundOrder } from './rounds';
import { runBenchCommand } from './bench-args';
import { parseOptions, USAGE, type Options } from './bench-options';
import { runShardScenario } from './shard-bench';
import { ensureWrk } from './installers';
import { checkPageSet, fetchSiteStats, pagesPerSecondOf, resetSiteStats } from './page-set';
import { ProcessMeter, type ProcessUsage, type RssSample } from './process-meter';
import { runProcess } from './run-process';
import { PAGE_BYTES, SITE_SEED, startSiteProcess, type SiteProcess } from './site-process';
import { CRAWLFLOW_CRAWL_ID, TOOLS, type CrawlJob, type ToolName } from './tools';
import { failed, medianResults, ratioTable, roundRatios, table, targetsOf, type ToolResult } from './tool-results';
import { runWithWorkers, type WorkerScalingRun } from './worker-scaling';
import { measureWrkCeiling, type WrkCeiling } from './wrk-ceiling';

const RESULTS_DIR = join(projectRoot, 'bench', 'results');
/** Scratch space for run directories (crawl stores, Temporal databases, outputs); not committed. */
const WORK_DIR = join(projectRoot, '.tools', 'bench-runs');
const MB = 1024 * 1024;

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

/** Round `round`: each tool in turn (`roundOrder`), with its pages/s over this round's raw loop's, listed in the tools' order. */
async function runRound(site: SiteProcess, options: Options, round: number): Promise<ToolResult[]> {
  const byTool = new Map<ToolName, ToolResult>();
  for (const tool of roundOrder(options.tools, round)) byTool.set(tool, await runTool(tool, site, options));
  const results = options.tools.map((tool) => byTool.get(tool)!);
  // Exactly-once means the fetched set is the reachable set, so those tools share one set.
  const raw = results.find((r) => r.tool === 'raw' && r.status === 'ok');
  for (const r of results) if (raw && r.status !== 'failed') r.ratioToRaw = r.pagesPerSecond / raw.pagesPerSecond;
  return results;
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
      if (options.rounds > 1) log(`round ${round} of ${options.rounds}: ${roundOrder(options.tools, round).join(', ')}`);
      rounds.push(await runRound(site, options, round));
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

/**
 * The 1M run's rate against the 20k run's crawlflow pages/s: the median of that run's rounds.
 * Its crawlflow row is the round with the median ratio to the raw loop, which can be its
 * fastest round in pages/s (or its slowest): a figure for ratios within a round, not across runs.
 */
function reportScale(crawlflow: ToolResult): void {
  const latest = join(RESULTS_DIR, 'latest.json');
  if (!existsSync(latest)) return;
  const { rounds = [] } = JSON.parse(readFileSync(latest, 'utf8')) as { rounds?: ToolResult[][] };
  const runs = rounds.flatMap((round) => round.filter((r) => r.tool === 'crawlflow' && r.status === 'ok'));
  if (runs.length === 0) return;
  const previous = median(runs.map((r) => r.pagesPerSecond));
  const ratio = crawlflow.pagesPerSecond / previous;
  process.stdout.write(
    `1M-page run: ${crawlflow.pagesPerSecond.toFixed(0)} pages/s = ${ratio.toFixed(2)}x the 20k run's ${previous.toFixed(0)} (median of its ${runs.length} round(s); target within 25%: ${ratio >= 0.75 ? 'met' : 'NOT met'})\n`,
  );
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
