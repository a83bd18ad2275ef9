/**
 * The broad-crawl scenario of `npm run bench`: the raw loop and crawlflow on one site of N
 * pages, then on H sites of N/H pages each (each on a loopback port of its own, so a host of
 * its own, with a seed per host and, for crawlflow, `perHostConcurrency` 2), side by side in
 * one run. It prints pages/s of each and the ratios (crawlflow to the raw loop on each site,
 * many hosts to one), history events per page and refetches: a crawl over many small hosts
 * should run about as fast as a single-site crawl of the same size, and near the raw loop.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { countHistoryEventsInDataDir } from './crawlflow-history';
import { checkPageSet, fetchSiteStats, pagesPerSecondOf, resetSiteStats } from './page-set';
import { describeRounds, median, medianBy } from './rounds';
import { runProcess } from './run-process';
import { startSiteProcess, type SiteProcess } from './site-process';
import { CRAWLFLOW_CRAWL_ID, TOOLS, type CrawlJob, type Launch } from './tools';

/** The raw loop (bench/raw-loop.ts) on the same site: the ceiling, without politeness. */
export interface RawBroadRun {
  pagesPerSecond: number;
  cpuSeconds: number;
  exactlyOnce: boolean;
}

export interface BroadRun {
  hosts: number;
  raw: RawBroadRun;
  /** crawlflow's pages/s over the raw loop's on this site. */
  vsRaw: number;
  pages: number;
  pagesPerSecond: number;
  windowSeconds: number;
  cpuSeconds: number;
  historyEvents: number;
  runs: number;
  eventsPerPage: number;
  /** Page requests beyond the first of each page. */
  refetched: number;
  exactlyOnce: boolean;
}

/** One round: the raw loop and crawlflow on one host, then on many. */
interface BroadRound {
  single: BroadRun;
  broad: BroadRun;
}

export interface BroadScenario extends BroadRound {
  /** Broad pages/s over single-host pages/s: the rounds' median. */
  ratio: number;
  /** With more than one round, each round's figures (`single` and `broad` are the median rounds, by `vsRaw`). */
  rounds?: Array<BroadRound & { ratio: number }>;
}

export interface BroadOptions {
  pages: number;
  hosts: number;
  concurrency: number;
  batchSize: number;
  workDir: string;
  timeoutSeconds: number;
  rounds: number;
  log(line: string): void;
}

/** Broad crawls keep two batches per host, as a polite crawl of many sites would. */
const BROAD_PER_HOST_CONCURRENCY = 2;

/** Runs one tool's process on the site, from fresh request counters; fails on a non-zero exit. */
async function crawlOnce(site: SiteProcess, launch: Launch, what: string, timeoutSeconds: number) {
  await resetSiteStats(site.origin);
  const run = await runProcess(launch, { timeoutMs: timeoutSeconds * 1000 });
  if (run.exitCode !== 0) throw new Error(`${what} failed (exit ${run.exitCode ?? run.signal}):\n${run.stderrTail}`);
  return { run, pageSet: checkPageSet(await fetchSiteStats(site.origin), site.reachable) };
}

async function crawlSites(options: BroadOptions, hosts: number): Promise<BroadRun> {
  const site = await startSiteProcess(options.pages, hosts);
  try {
    const runDir = join(options.workDir, `broad-${hosts}-hosts`);
    rmSync(runDir, { recursive: true, force: true });
    mkdirSync(runDir, { recursive: true });
    const seeds = site.origins.map((origin) => `${origin}/page/0`);
    const job: CrawlJob = {
      seed: seeds[0],
      seeds,
      maxPages: site.reachableCount,
      concurrency: options.concurrency,
      perHostConcurrency: hosts === 1 ? options.concurrency : BROAD_PER_HOST_CONCURRENCY,
      batchSize: options.batchSize,
      runDir,
    };
    options.log(`broad: the raw loop on ${hosts} host(s), ${site.reachableCount} pages`);
    const raw = await crawlOnce(site, await TOOLS.raw.launch(job), `the raw loop on ${hosts} host(s)`, options.timeoutSeconds);
    options.log(`broad: crawlflow on ${hosts} host(s), ${site.reachableCount} pages`);
    const { run, pageSet } = await crawlOnce(site, await TOOLS.crawlflow.launch(job), `crawlflow on ${hosts} host(s)`, options.timeoutSeconds);
    const history = await countHistoryEventsInDataDir(join(runDir, 'data'), CRAWLFLOW_CRAWL_ID);
    const pagesPerSecond = pagesPerSecondOf(pageSet);
    const rawPagesPerSecond = pagesPerSecondOf(raw.pageSet);
    return {
      hosts,
      raw: { pagesPerSecond: rawPagesPerSecond, cpuSeconds: raw.run.usage.cpuSeconds, exactlyOnce: raw.pageSet.exactlyOnce },
      vsRaw: pagesPerSecond / rawPagesPerSecond,
      pages: pageSet.pages,
      pagesPerSecond,
      windowSeconds: pageSet.windowSeconds,
      cpuSeconds: run.usage.cpuSeconds,
      historyEvents: history.events,
      runs: history.runs,
      eventsPerPage: history.events / Math.max(1, pageSet.pages),
      refetched: pageSet.pageRequests - pageSet.pages,
      exactlyOnce: pageSet.exactlyOnce,
    };
  } finally {
    await site.stop();
  }
}

export async function runBroadScenario(options: BroadOptions): Promise<BroadScenario> {
  const rounds: Array<BroadRound & { ratio: number }> = [];
  for (let round = 1; round <= options.rounds; round += 1) {
    const single = await crawlSites(options, 1);
    const broad = await crawlSites(options, options.hosts);
    rounds.push({ single, broad, ratio: broad.pagesPerSecond / single.pagesPerSecond });
  }
  return {
    single: medianBy(rounds.map((round) => round.single), (run) => run.vsRaw),
    broad: medianBy(rounds.map((round) => round.broad), (run) => run.vsRaw),
    ratio: median(rounds.map((round) => round.ratio)),
    ...(rounds.length > 1 ? { rounds } : {}),
  };
}

export function describeBroadScenario({ single, broad, ratio, rounds }: BroadScenario): string {
  const line = (run: BroadRun): string =>
    `${String(run.hosts).padStart(5)} host(s) | ${run.pages} pages | ${run.pagesPerSecond.toFixed(0)} pages/s | ${run.cpuSeconds.toFixed(1)} CPU s | ` +
    `${run.eventsPerPage.toFixed(3)} events/page over ${run.runs} run(s) | ${run.refetched} refetched | exactly once: ${run.exactlyOnce} | ` +
    `raw loop ${run.raw.pagesPerSecond.toFixed(0)} pages/s, ${run.raw.cpuSeconds.toFixed(1)} CPU s, exactly once: ${run.raw.exactlyOnce} | ${run.vsRaw.toFixed(2)}x raw`;
  const byRound = rounds
    ? [
        `round by round: one host x raw ${describeRounds(rounds.map((round) => round.single.vsRaw))}; ` +
          `${broad.hosts} hosts x raw ${describeRounds(rounds.map((round) => round.broad.vsRaw))}; broad / single ${describeRounds(rounds.map((round) => round.ratio))}`,
      ]
    : [];
  return [`broad crawl (same pages, one host vs many${rounds ? `, median of ${rounds.length} rounds` : ''}):`, line(single), line(broad), `broad / single: ${ratio.toFixed(2)}x (target >= 0.8)`, ...byRound].join('\n');
}
