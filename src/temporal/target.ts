/**
 * Which Temporal to use. With TEMPORAL_ADDRESS (or a TEMPORAL_PROFILE / TEMPORAL_CONFIG_FILE)
 * the SDK's environment configuration decides address, namespace, TLS and API key. Without,
 * crawlflow uses its embedded dev server on loopback, starting it when asked to.
 */
import { join } from 'node:path';
import { Client, Connection, type ClientPlugin } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { DEFAULT_NAMESPACE, ENV } from '../shared/names';
import { isPortOpen, startDevServer } from './dev-server';

export interface TemporalTarget {
  connectionOptions: NativeConnectionOptions;
  namespace: string;
  /** True when this is the embedded dev server (so crawlflow runs its own worker). */
  embedded: boolean;
  uiUrl: string | undefined;
  /** Stops the dev server if this process started it. */
  close(): Promise<void>;
}

export function usesExternalCluster(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.TEMPORAL_ADDRESS || env.TEMPORAL_PROFILE || env.TEMPORAL_CONFIG_FILE);
}

function portFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  const port = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(port) || port <= 0 || port > 65_535) throw new Error(`${name} must be a TCP port, got "${raw}"`);
  return port;
}

export class NoTemporalServerError extends Error {
  readonly code = 'no-temporal-server';
}

export async function resolveTemporalTarget(options: { dataDir: string; startEmbedded: boolean }): Promise<TemporalTarget> {
  if (usesExternalCluster()) {
    const config = loadClientConnectConfig();
    return {
      connectionOptions: config.connectionOptions,
      namespace: config.namespace ?? DEFAULT_NAMESPACE,
      embedded: false,
      uiUrl: process.env.TEMPORAL_UI_URL,
      close: async () => undefined,
    };
  }
  const host = '127.0.0.1';
  const port = portFromEnv(ENV.devServerPort, 7233);
  const uiPort = portFromEnv(ENV.devServerUiPort, 8233);
  const embedded = { namespace: DEFAULT_NAMESPACE, embedded: true, uiUrl: `http://localhost:${uiPort}` };
  if (await isPortOpen(host, port)) {
    return { ...embedded, connectionOptions: { address: `${host}:${port}` }, close: async () => undefined };
  }
  if (!options.startEmbedded) {
    throw new NoTemporalServerError(
      `no Temporal server at ${host}:${port}: start one with \`crawlflow worker\` (it runs the embedded dev server), or set TEMPORAL_ADDRESS`,
    );
  }
  const server = await startDevServer({
    host,
    port,
    uiPort,
    dbFile: join(options.dataDir, 'temporal.sqlite'),
    logFile: join(options.dataDir, 'temporal-server.log'),
  });
  return { ...embedded, connectionOptions: { address: server.address }, close: server.stop };
}

export async function connectClient(target: TemporalTarget, plugins: ClientPlugin[] = []): Promise<Client> {
  const connection = await Connection.connect(target.connectionOptions);
  return new Client({ connection, namespace: target.namespace, plugins });
}

export function workflowUiUrl(target: TemporalTarget, workflowId: string): string | undefined {
  return target.uiUrl && `${target.uiUrl}/namespaces/${encodeURIComponent(target.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}
