/**
 * Logs (pino), one logger per process, built once at start-up: JSON lines on stderr, or a
 * human-readable format for terminals with CRAWLFLOW_LOG_FORMAT=pretty. Set
 * CRAWLFLOW_LOG_LEVEL to change the level; `silent` turns logging off.
 */
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { ENV } from '../shared/names';
import { activeTraceIds } from './tracing';

export type { Logger } from 'pino';

/** `defaultLevel` applies unless CRAWLFLOW_LOG_LEVEL is set: services log at info, the CLI at warn. */
export function createLogger(name: string, defaultLevel: pino.LevelWithSilent = 'info'): Logger {
  const destination =
    process.env[ENV.logFormat] === 'pretty' ? pretty({ destination: 2, translateTime: 'SYS:HH:MM:ss.l' }) : pino.destination({ fd: 2, sync: false });
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
    destination,
  );
}
