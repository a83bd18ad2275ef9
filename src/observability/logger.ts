/**
 * JSON logs (pino), one logger per process, built once at start-up. Set CRAWLFLOW_LOG_LEVEL
 * to change the level; `silent` turns logging off.
 */
import pino, { type Logger } from 'pino';
import { ENV } from '../shared/names';
import { activeTraceIds } from './tracing';

export type { Logger } from 'pino';

/** `defaultLevel` applies unless CRAWLFLOW_LOG_LEVEL is set: services log at info, the CLI at warn. */
export function createLogger(name: string, defaultLevel: pino.LevelWithSilent = 'info', destination: pino.DestinationStream | number = 2): Logger {
  return pino(
    {
      name,
      level: process.env[ENV.logLevel] ?? defaultLevel,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // trace_id/span_id of the active span; fields of the line itself (e.g. forwarded SDK lines) win.
      mixin: activeTraceIds,
      redact: { paths: ['headers.authorization', 'headers.cookie', '*.apiKey', 'apiKey'], censor: '[redacted]' },
    },
    typeof destination === 'number' ? pino.destination({ fd: destination, sync: false }) : destination,
  );
}
