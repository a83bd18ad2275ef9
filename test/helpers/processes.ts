/** Worker and CLI processes for tests that need real processes (signals, exit codes). */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { projectRoot } from '../../src/temporal/project-paths';
import { freeServerPort } from '../../src/workers/runtime';

export const CLI = join(projectRoot, 'dist', 'src', 'cli', 'main.js');

export interface WorkerProcess {
  child: ChildProcess;
  /** Resolves once the worker logged that it is polling. */
  ready: Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export function spawnWorker(options: {
  /** `crawlflow worker` (the default) or `crawlflow render-worker`. */
  command?: 'worker' | 'render-worker';
  /** Whose `crawlflow`: this checkout's (the default), or an old release's (test/helpers/releases.ts). */
  cli?: string;
  address: string;
  taskQueue: string;
  dataDir: string;
  /** A postgres:// frontier store; SQLite files under dataDir without one. */
  storeUrl?: string;
  metricsAddress?: string;
  logFile: string;
  /** More environment for the worker (NODE_EXTRA_CA_CERTS, ...), over the test's own. */
  env?: NodeJS.ProcessEnv;
}): WorkerProcess {
  const command = options.command ?? 'worker';
  const child = spawn(process.execPath, [options.cli ?? CLI, command, '--task-queue', options.taskQueue, '--metrics-address', options.metricsAddress ?? 'off'], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: options.address,
      CRAWLFLOW_DATA_DIR: options.dataDir,
      CRAWLFLOW_STORE_URL: options.storeUrl ?? '',
      CRAWLFLOW_LOG_LEVEL: 'info',
      ...options.env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const log = createWriteStream(options.logFile, { flags: 'a' });
  child.stderr?.pipe(log);
  const ready = new Promise<void>((resolve, reject) => {
    // The log's last lines only: enough to find the ready line in, and to say why a worker died.
    let lastLines = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      lastLines = (lastLines + chunk.toString()).slice(-2000);
      if (lastLines.includes('"msg":"worker ready"')) resolve();
    });
    // They go into the error because a CI run keeps the test's output, not its temp files.
    child.once('close', (code) => reject(new Error(`${command} exited (${code}) before it was ready; ${options.logFile} ends:\n${lastLines}`)));
  });
  ready.catch(() => undefined);
  return {
    child,
    ready,
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill(signal);
      await exited;
    },
  };
}

/** The environment of CLI runs that start the embedded dev server (no TEMPORAL_ADDRESS) in `dataDir`, on free loopback ports. */
export async function embeddedServerEnv(dataDir: string): Promise<NodeJS.ProcessEnv> {
  return {
    TEMPORAL_ADDRESS: '',
    CRAWLFLOW_DATA_DIR: dataDir,
    CRAWLFLOW_DEV_SERVER_PORT: String(await freeServerPort()),
    CRAWLFLOW_DEV_SERVER_UI_PORT: String(await freeServerPort()),
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `crawlflow <args>` to its end; `cwd` is its working directory (default: the test's). `stdoutFd`:
 * a file descriptor its stdout goes to instead of the pipe read into `stdout`.
 */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 120_000, cwd?: string, stdoutFd?: number): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', stdoutFd ?? 'pipe', 'pipe'], cwd });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

export interface CliProcess {
  /** Settles with the exit code and signal. */
  exited: Promise<[number | null, NodeJS.Signals | null]>;
  running(): boolean;
  stdout(): string;
  stderr(): string;
  /** A signal to the command's process alone, as a supervisor sends it. */
  signal(signal: NodeJS.Signals): void;
  /** What a terminal sends its foreground process group: SIGINT for Ctrl-C, SIGHUP when it closes. */
  signalGroup(signal: NodeJS.Signals): void;
}

/** `crawlflow <args>` running in the background, in a process group of its own, as a shell runs a command in a terminal. */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return {
    exited,
    running: () => child.exitCode === null && child.signalCode === null,
    stdout: () => stdout,
    stderr: () => stderr,
    signal: (signal) => child.kill(signal),
    signalGroup: (signal) => process.kill(-child.pid!, signal),
  };
}
