/**
 * CPU time and memory of a process tree, sampled from /proc (Linux only). The tree is the
 * root and every descendant alive at a sample, so the Temporal server that `crawlflow crawl`
 * starts, or Scrapy's and Colly's threads, count with their tool.
 *
 * Per process: CPU is utime + stime at the last sample it was seen at, and its peak RSS is
 * the kernel's own high-water mark (VmHWM), exact even between samples. For the tree, peak
 * RSS is the largest sum of current RSS over samples. CPU counts from the meter's start (a
 * process already running then, such as the site server, is charged only what it spends
 * while metered). The CPU a process spends after its last sample is lost, up to one
 * interval each (250 ms by default).
 */
import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS_PER_SECOND = 100; // getconf CLK_TCK; 100 on every Linux we run on
const PAGE_BYTES = 4096;

export interface ProcessUsage {
  pid: number;
  /** The kernel's name for it (`comm`): node, temporal, python3, bench-colly... */
  name: string;
  cpuSeconds: number;
  /** The part of it its main thread spent: a Node process's event loop, which binds a crawl when it is busy. */
  mainThreadCpuSeconds: number;
  peakRssBytes: number;
}

export interface RssSample {
  /** Seconds since the meter started. */
  t: number;
  rssBytes: number;
  /** The same, per process name (e.g. the worker's `node` and the server's `temporal`). */
  byName: Record<string, number>;
}

export interface TreeUsage {
  cpuSeconds: number;
  peakRssBytes: number;
  processes: ProcessUsage[];
  /** The tree's RSS over time, at most one sample per `recordEveryMs`. */
  rssOverTime: RssSample[];
  /** A process's peak RSS as it stood at `at` (epoch ms), as sampled: its start-up peak, given when its work began. */
  peakRssAt(pid: number, at: number): number;
  /**
   * The tree's CPU seconds between two instants (epoch ms), interpolated between the samples
   * around each: what a crawl window cost, without the start-up before it and the shutdown after.
   */
  cpuSecondsBetween(from: number, to: number): number;
}

interface StatLine {
  name: string;
  ppid: number;
  cpuTicks: number;
  rssPages: number;
}

/** A process's stat file, and its main thread's (whose thread ID is the process ID). */
const processStat = (pid: number): string => `/proc/${pid}/stat`;
const mainThreadStat = (pid: number): string => `/proc/${pid}/task/${pid}/stat`;

function readStat(path: string): StatLine | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined; // exited between listing and reading
  }
  // comm may contain spaces and parentheses: the fields start after the last ')'.
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  // fields[0] is state (field 3 of proc(5)); utime is field 14, stime 15, rss 24.
  return {
    name: text.slice(text.indexOf('(') + 1, close),
    ppid: Number(fields[1]),
    cpuTicks: Number(fields[11]) + Number(fields[12]),
    rssPages: Number(fields[21]),
  };
}

function readPeakRss(pid: number): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** CPU seconds this process's main thread has spent so far (its other threads left out). */
export function mainThreadCpuSeconds(): number {
  return (readStat(mainThreadStat(process.pid))?.cpuTicks ?? 0) / CLOCK_TICKS_PER_SECOND;
}

function treeCpuSeconds(processes: Iterable<ProcessUsage>): number {
  let seconds = 0;
  for (const process of processes) seconds += process.cpuSeconds;
  return seconds;
}

/** The tree's CPU seconds at `at`, on the line between the samples before and after it (clamped to the first and last). */
export function cpuSecondsAt(steps: ReadonlyArray<{ at: number; seconds: number }>, at: number): number {
  const after = steps.findIndex((step) => step.at >= at);
  if (after === -1) return steps.at(-1)?.seconds ?? 0;
  if (after === 0) return steps[0].seconds;
  const [before, next] = [steps[after - 1], steps[after]];
  return before.seconds + ((next.seconds - before.seconds) * (at - before.at)) / Math.max(1, next.at - before.at);
}

export class ProcessMeter {
  private readonly seen = new Map<number, ProcessUsage>();
  /** CPU ticks of the processes alive at the first sample, and of their main threads, taken then. */
  private readonly baselineTicks = new Map<number, { process: number; mainThread?: number }>();
  private firstSample = true;
  private result: TreeUsage | undefined;
  private readonly rssOverTime: RssSample[] = [];
  /** Per process, when its peak RSS grew (epoch ms) and to what, in order. */
  private readonly peakSteps = new Map<number, Array<{ at: number; bytes: number }>>();
  /** The tree's CPU seconds so far at each sample (epoch ms), exited processes' last figures included. */
  private readonly cpuSteps: Array<{ at: number; seconds: number }> = [];
  private readonly startedAt = Date.now();
  private lastRecordedAt = -Infinity;
  private peakRssBytes = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly rootPid: number,
    private readonly options: { intervalMs?: number; recordEveryMs?: number } = {},
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), options.intervalMs ?? 250);
  }

  /** The root and its descendants now: one pass over /proc, children found by parent PID. */
  private tree(): Map<number, StatLine> {
    const all = new Map<number, StatLine>();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = readStat(processStat(Number(entry)));
      if (stat) all.set(Number(entry), stat);
    }
    const tree = new Map<number, StatLine>();
    const root = all.get(this.rootPid);
    if (!root) return tree;
    tree.set(this.rootPid, root);
    for (let grew = true; grew; ) {
      grew = false;
      for (const [pid, stat] of all) {
        if (!tree.has(pid) && tree.has(stat.ppid)) {
          tree.set(pid, stat);
          grew = true;
        }
      }
    }
    return tree;
  }

  private sample(): void {
    let rss = 0;
    const byName: Record<string, number> = {};
    for (const [pid, stat] of this.tree()) {
      rss += stat.rssPages * PAGE_BYTES;
      byName[stat.name] = (byName[stat.name] ?? 0) + stat.rssPages * PAGE_BYTES;
      const usage = this.seen.get(pid) ?? { pid, name: stat.name, cpuSeconds: 0, mainThreadCpuSeconds: 0, peakRssBytes: 0 };
      usage.name = stat.name; // a forked child takes its own name when it execs
      const mainTicks = readStat(mainThreadStat(pid))?.cpuTicks;
      if (this.firstSample) this.baselineTicks.set(pid, { process: stat.cpuTicks, mainThread: mainTicks });
      const baseline = this.baselineTicks.get(pid);
      usage.cpuSeconds = (stat.cpuTicks - (baseline?.process ?? 0)) / CLOCK_TICKS_PER_SECOND;
      // A process may exit between the two reads: its main thread keeps its last figure.
      if (mainTicks !== undefined) usage.mainThreadCpuSeconds = (mainTicks - (baseline?.mainThread ?? 0)) / CLOCK_TICKS_PER_SECOND;
      const peak = readPeakRss(pid) ?? stat.rssPages * PAGE_BYTES;
      if (peak > usage.peakRssBytes) this.stepPeak(pid, peak);
      usage.peakRssBytes = Math.max(usage.peakRssBytes, peak);
      this.seen.set(pid, usage);
    }
    this.firstSample = false;
    this.peakRssBytes = Math.max(this.peakRssBytes, rss);
    const now = Date.now();
    this.cpuSteps.push({ at: now, seconds: treeCpuSeconds(this.seen.values()) });
    if (rss > 0 && now - this.lastRecordedAt >= (this.options.recordEveryMs ?? 1_000)) {
      this.rssOverTime.push({ t: (now - this.startedAt) / 1000, rssBytes: rss, byName });
      this.lastRecordedAt = now;
    }
  }

  private stepPeak(pid: number, bytes: number): void {
    const steps = this.peakSteps.get(pid) ?? [];
    steps.push({ at: Date.now(), bytes });
    this.peakSteps.set(pid, steps);
  }

  /** Takes a last sample and stops; later calls return the same result. */
  stop(): TreeUsage {
    if (this.result) return this.result;
    this.sample();
    clearInterval(this.timer);
    const processes = [...this.seen.values()];
    this.result = {
      cpuSeconds: treeCpuSeconds(processes),
      peakRssBytes: this.peakRssBytes,
      processes,
      rssOverTime: this.rssOverTime,
      peakRssAt: (pid, at) => (this.peakSteps.get(pid) ?? []).filter((step) => step.at <= at).at(-1)?.bytes ?? 0,
      cpuSecondsBetween: (from, to) => cpuSecondsAt(this.cpuSteps, to) - cpuSecondsAt(this.cpuSteps, from),
    };
    return this.result;
  }
}
