/**
 * Which Temporal to use. With TEMPORAL_ADDRESS (or a TEMPORAL_PROFILE / TEMPORAL_CONFIG_FILE)
 * the SDK's environment configuration decides address, namespace, TLS and API key. Without,
 * crawlflow uses its embedded dev server on loopback, starting it when asked to.
 */
import { once } from 'node:events';
import { join } from 'node:path';
import { Client, type ClientPlugin } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { DEFAULT_NAMESPACE, ENV, InvalidEnvError } from '../shared/names';
import { isPortOpen, startDevServer } from './dev-server';
import { ClosableConnection } from './closable-connection';

export interface TemporalTarget {
  connectionOptions: NativeConnectionOptions;
  namespace: string;
  /** True when this is the embedded dev server (so crawlflow runs its own worker). */
  embedded: boolean;
  uiUrl: string | undefined;
  /**
   * True when this process started the embedded dev server: `close()` stops it, and its Web UI
   * with it, so a link printed for later would be dead once this process exits.
   */
  startedHere: boolean;
  /** Settles when the dev server this process started exits, whoever stopped it; undefined otherwise. */
  serverExited: Promise<void> | undefined;
  /** Stops the dev server if this process started it. */
  close(): Promise<void>;
}

export function usesExternalCluster(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.TEMPORAL_ADDRESS || env.TEMPORAL_PROFILE || env.TEMPORAL_CONFIG_FILE);
}

function portFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  const port = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(port) || port <= 0 || port > 65_535) throw new InvalidEnvError(`${name} must be a TCP port (1 to 65535), not ${JSON.stringify(raw)}`);
  return port;
}

/** Where the embedded dev server keeps the history of every crawl run on it (SQLite). */
export function embeddedHistoryFile(dataDir: string): string {
  return join(dataDir, 'temporal.sqlite');
}

export function embeddedServerLog(dataDir: string): string {
  return join(dataDir, 'temporal-server.log');
}

export class NoTemporalServerError extends Error {
  readonly code = 'no-temporal-server';
}

/** No connection could be made to the Temporal server: its address, where that came from, and why. */
export class TemporalUnreachableError extends Error {
  readonly code = 'temporal-unreachable';
}

/** Where an external cluster's address was set, as the user set it. */
function addressSource(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TEMPORAL_ADDRESS) return 'TEMPORAL_ADDRESS';
  if (env.TEMPORAL_PROFILE) return `TEMPORAL_PROFILE ${env.TEMPORAL_PROFILE}`;
  return `TEMPORAL_CONFIG_FILE ${env.TEMPORAL_CONFIG_FILE}`;
}

/**
 * `connect(options)`, a connection to the server `options` name. A failure comes out as a
 * TemporalUnreachableError naming the address, not as the gRPC library's bare error and stack.
 */
export async function connecting<T>(options: NativeConnectionOptions, connect: (options: NativeConnectionOptions) => Promise<T>): Promise<T> {
  try {
    return await connect(options);
  } catch (err) {
    const address = options.address ?? 'localhost:7233';
    const source = usesExternalCluster() ? ` (${addressSource()})` : '';
    throw new TemporalUnreachableError(`cannot connect to the Temporal server at ${address}${source}: ${(err as Error).message}`, { cause: err });
  }
}

export async function resolveTemporalTarget(options: { dataDir: string; startEmbedded: boolean }): Promise<TemporalTarget> {
  if (usesExternalCluster()) {
    const config = loadClientConnectConfig();
    return {
      connectionOptions: config.connectionOptions,
      namespace: config.namespace ?? DEFAULT_NAMESPACE,
      embedded: false,
      uiUrl: process.env.TEMPORAL_UI_URL,
      startedHere: false,
      serverExited: undefined,
      close: async () => undefined,
    };
  }
  const host = '127.0.0.1';
  const port = portFromEnv(ENV.devServerPort, 7233);
  const uiPort = portFromEnv(ENV.devServerUiPort, 8233);
  const embedded = { namespace: DEFAULT_NAMESPACE, embedded: true, uiUrl: `http://localhost:${uiPort}` };
  if (await isPortOpen(host, port)) {
    return { ...embedded, connectionOptions: { address: `${host}:${port}` }, startedHere: false, serverExited: undefined, close: async () => undefined };
  }
  if (!options.startEmbedded) {
    throw new NoTemporalServerError(
      `no Temporal server at ${host}:${port}: start one with \`crawlflow ui\` or \`crawlflow worker\` (they run the embedded dev server on the same data), or set TEMPORAL_ADDRESS`,
    );
  }
  const server = await startDevServer({
    host,
    port,
    uiPort,
    dbFile: embeddedHistoryFile(options.dataDir),
    logFile: embeddedServerLog(options.dataDir),
  });
  const serverExited = server.process.exitCode === null && server.process.signalCode === null ? once(server.process, 'exit').then(() => undefined) : Promise.resolve();
  return { ...embedded, connectionOptions: { address: server.address }, startedHere: true, serverExited, close: server.stop };
}

/** A client of the target's server; `connectTimeoutMs` bounds the connection's first call (the SDK's default: 10 s). */
export async function connectClient(target: Pick<TemporalTarget, 'connectionOptions' | 'namespace'>, plugins: ClientPlugin[] = [], connectTimeoutMs?: number): Promise<Client> {
  const connection = await connecting(target.connectionOptions, (options) => ClosableConnection.open({ ...options, connectTimeout: connectTimeoutMs }));
  return new Client({ connection, namespace: target.namespace, plugins });
}

export function workflowUiUrl(target: TemporalTarget, workflowId: string): string | undefined {
  return target.uiUrl && `${target.uiUrl}/namespaces/${encodeURIComponent(target.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}
