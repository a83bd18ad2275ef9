/**
 * The SDK's process-wide Runtime, installed once before any connection: its log lines go to
 * our JSON logger, and its own metrics (schedule-to-start latency, slots, pollers, ...) are
 * served in Prometheus format on a loopback port that our /metrics endpoint merges in.
 */
import { createServer } from 'node:net';
import { once } from 'node:events';
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
