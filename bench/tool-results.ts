/**
 * What one tool's run measured, and how runs compare: the per-page figures, the tables of
 * results and of ratios to the raw loop, each tool's median round, and the targets of
 * issue #13 as the rounds' medians.
 */
import type { HistoryCount } from './crawlflow-history';
import type { BroadScenario } from './broad-bench';
import type { PageSetCheck } from './page-set';
import type { ProcessUsage } from './process-meter';
import { median, medianBy } from './rounds';
import { TOOLS, type ToolName } from './tools';
import type { WorkerScalingRun } from './worker-scaling';

export interface ToolResult {
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

export function failed(tool: ToolName, error: string): ToolResult {
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

/** Rows under a header, as a Markdown table. */
const markdownTable = (header: string[], rows: string[][]): string =>
  [header, header.map(() => '---'), ...rows].map((row) => `| ${row.join(' | ')} |`).join('\n');

export function table(results: ToolResult[]): string {
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
  return markdownTable(header, rows);
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
export function ratioTable(results: ToolResult[]): string {
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
  return markdownTable(header, rows);
}

/**
 * Each tool's median round: by its ratio to the raw loop where every round has one, else (and
 * for the raw loop itself) by pages/s. A tool that failed every round: its first failure.
 */
export function medianResults(rounds: ToolResult[][], tools: ToolName[]): ToolResult[] {
  return tools.map((tool) => {
    const runs = rounds.map((round) => round.find((r) => r.tool === tool)!);
    const ran = runs.filter((r) => r.status !== 'failed');
    if (ran.length === 0) return runs[0];
    const byRatio = tool !== 'raw' && ran.every((r) => r.ratioToRaw !== null);
    return medianBy(ran, (r) => (byRatio ? r.ratioToRaw! : r.pagesPerSecond));
  });
}

/** crawlflow's pages/s over `other`'s, in each round where both ran. */
export function roundRatios(rounds: ToolResult[][], other: ToolName): number[] {
  return rounds.flatMap((round) => {
    const ran = (tool: ToolName) => round.find((r) => r.tool === tool && r.status !== 'failed');
    const crawlflow = ran('crawlflow');
    const base = ran(other);
    return crawlflow && base ? [crawlflow.pagesPerSecond / base.pagesPerSecond] : [];
  });
}

/** Each target's rounds' median; peak RSS, their largest. */
export function targetsOf(
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
    // The target on the many-host site: against the raw loop on that site.
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
