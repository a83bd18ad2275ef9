/**
 * Runs one tool's process to completion under a ProcessMeter, keeping its last JSON line
 * of stdout (its own counts) and the tail of its stderr for the report.
 */
import { spawn } from 'node:child_process';
import { ProcessMeter, type TreeUsage } from './process-meter';
import type { Launch } from './tools';

export interface ProcessRun {
  /** The launched process (the root of the metered tree). */
  pid: number;
  exitCode: number | null;
  signal: string | null;
  /** Killed for running past `timeoutMs`. */
  timedOut: boolean;
  wallSeconds: number;
  /** The last stdout line that parsed as a JSON object. */
  output: Record<string, unknown> | undefined;
  stderrTail: string;
  usage: TreeUsage;
}

const STDERR_TAIL_LINES = 15;

function lastJsonLine(text: string): Record<string, unknown> | undefined {
  for (const line of text.trim().split('\n').reverse()) {
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === 'object' && value !== null) return value as Record<string, unknown>;
    } catch {
      // not JSON: a log line
    }
  }
  return undefined;
}

export async function runProcess(launch: Launch, options: { timeoutMs: number; recordEveryMs?: number }): Promise<ProcessRun> {
  const started = performance.now();
  const child = spawn(launch.command, launch.args, { env: { ...process.env, ...launch.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) {
    const error = await new Promise<Error>((resolve) => child.once('error', resolve));
    throw new Error(`could not start \`${launch.command}\`: ${error.message}`);
  }
  const meter = new ProcessMeter(child.pid, { recordEveryMs: options.recordEveryMs });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  // Keep only a bounded tail: a noisy tool must not grow the bench's memory.
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-20_000)));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, options.timeoutMs);
  const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('close', (code, sig) => resolve([code, sig])));
  clearTimeout(timer);
  return {
    pid: child.pid,
    exitCode,
    signal,
    timedOut,
    wallSeconds: (performance.now() - started) / 1000,
    output: lastJsonLine(stdout),
    stderrTail: stderr.trim().split('\n').slice(-STDERR_TAIL_LINES).join('\n'),
    usage: meter.stop(),
  };
}
