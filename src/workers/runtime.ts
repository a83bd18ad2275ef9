/**
 * The SDK's process-wide Runtime, configured once before any connection: its log lines, the
 * Rust core's included, go to our logger, and its own metrics (schedule-to-start latency,
 * slots, pollers, ...) are served in Prometheus format on a loopback port that our /metrics
 * endpoint merges in.
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

let configured: { sdkMetricsUrl: string | undefined } | undefined;

/**
 * Sets the options the SDK creates its Runtime with. The core's own lines (a call to the
 * server retried, a poll failing) would otherwise go to stdout, ANSI-coloured, among a
 * command's results and its `--json`: they are forwarded to `logger` with the SDK's other
 * lines, at the logger's level.
 *
 * The runtime is not installed here (`Runtime.install`): the SDK creates it from these options
 * when the first connection or worker needs it (`Runtime.instance()`), and shuts it down when
 * the last one closes. A forwarding runtime holds the event loop open until it is shut down
 * (the core hands its lines over through a referenced Neon channel, which only the native
 * runtime's drop releases), and it takes over SIGINT and SIGTERM: one installed up front and
 * never used (a worker whose metrics port is taken, a test process whose workers run in other
 * processes) kept its process from exiting, and from ending on a signal.
 */
export async function configureRuntime(logger: Logger, options: { sdkMetrics: boolean }): Promise<{ sdkMetricsUrl: string | undefined }> {
  if (configured) return configured;
  const forward = (entry: LogEntry): void => {
    const level = entry.level.toLowerCase() as 'trace' | 'debug' | 'info' | 'warn' | 'error';
    logger[level]({ ...entry.meta, component: 'temporal-sdk' }, entry.message);
  };
  const lowestLevel = sdkLevel(logger);
  const sdkMetricsAddress = options.sdkMetrics ? `127.0.0.1:${await freeLoopbackPort()}` : undefined;
  Runtime.defaultOptions = {
    // Workflow and activity log lines come through here too: forward at our logger's level.
    logger: new DefaultLogger(lowestLevel, forward),
    telemetryOptions: {
      // The core's crates at our level; the libraries under them (gRPC, HTTP/2) only on errors.
      logging: { forward: {}, filter: { core: lowestLevel, other: 'ERROR' } },
      metrics: sdkMetricsAddress === undefined ? undefined : { prometheus: { bindAddress: sdkMetricsAddress, useSecondsForDurations: true } },
    },
  };
  configured = { sdkMetricsUrl: sdkMetricsAddress && `http://${sdkMetricsAddress}/metrics` };
  return configured;
}
