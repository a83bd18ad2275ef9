/**
 * The SDK's process-wide Runtime, installed once before any connection: its log lines go to
 * our JSON logger, and its own metrics (schedule-to-start latency, slots, pollers, ...) are
 * served in Prometheus format on a loopback port that our /metrics endpoint merges in.
 */
import { createServer } from 'node:net';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { DefaultLogger, Runtime, type LogEntry, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../observability/logger';

export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || address === null) throw new Error('could not pick a free port');
  return address.port;
}

/** The lowest port the kernel hands out for port 0 (`ip_local_port_range`), 32768 where it cannot be read. */
function ephemeralLow(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
}

const LOWEST_SERVER_PORT = 10_000;
/** Ports handed out by `freeServerPort` in this process, which their servers may not have bound yet. */
const handedOut = new Set<number>();

async function canListen(port: number): Promise<boolean> {
  const server = createServer();
  server.listen(port, '127.0.0.1');
  const listening = await Promise.race([once(server, 'listening').then(() => true), once(server, 'error').then(() => false)]);
  if (listening) await new Promise((resolve) => server.close(resolve));
  return listening;
}

/**
 * A free loopback port below the ephemeral range, for a server that is handed the number and
 * binds it later (the Temporal dev server and its Web UI). A free ephemeral port, once let go,
 * can be taken by anything that binds port 0 meanwhile, the dev server's own internal
 * services included, and the server it was meant for then fails to start.
 */
export async function freeServerPort(): Promise<number> {
  const span = ephemeralLow() - LOWEST_SERVER_PORT;
  for (let attempt = 0; attempt < 100 && span > 0; attempt += 1) {
    const port = LOWEST_SERVER_PORT + Math.floor(Math.random() * span);
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  return freeLoopbackPort();
}

function sdkLevel(logger: Logger): LogLevel {
  if (logger.isLevelEnabled('debug')) return 'DEBUG';
  if (logger.isLevelEnabled('info')) return 'INFO';
  return logger.isLevelEnabled('warn') ? 'WARN' : 'ERROR';
}

let installed: { sdkMetricsUrl: string | undefined } | undefined;

export async function installRuntime(logger: Logger, options: { sdkMetrics: boolean }): Promise<{ sdkMetricsUrl: string | undefined }> {
  if (installed) return installed;
  const forward = (entry: LogEntry): void => {
    const level = entry.level.toLowerCase() as 'trace' | 'debug' | 'info' | 'warn' | 'error';
    logger[level]({ ...entry.meta, component: 'temporal-sdk' }, entry.message);
  };
  const sdkMetricsAddress = options.sdkMetrics ? `127.0.0.1:${await freeLoopbackPort()}` : undefined;
  Runtime.install({
    // Workflow and activity log lines come through here too: forward at our logger's level.
    logger: new DefaultLogger(sdkLevel(logger), forward),
    telemetryOptions: sdkMetricsAddress
      ? { metrics: { prometheus: { bindAddress: sdkMetricsAddress, useSecondsForDurations: true } } }
      : undefined,
  });
  installed = { sdkMetricsUrl: sdkMetricsAddress && `http://${sdkMetricsAddress}/metrics` };
  return installed;
}
