/**
 * JSON logs (pino), one logger per process, built once at start-up. Set CRAWLFLOW_LOG_LEVEL
 * to change the level; `silent` turns logging off.
 */
import pino, { type Logger } from 'pino';
import { ENV } from '../shared/names';

export type { Logger } from 'pino';

/** `defaultLevel` applies unless CRAWLFLOW_LOG_LEVEL is set: services log at info, the CLI at warn. */
export function createLogger(name: string, defaultLevel: pino.LevelWithSilent = 'info', destination: pino.DestinationStream | number = 2): Logger {
  return pino(
    {
      name,
      level: process.env[ENV.logLevel] ?? defaultLevel,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['headers.authorization', 'headers.cookie', '*.apiKey', 'apiKey'], censor: '[redacted]' },
    },
    typeof destination === 'number' ? pino.destination({ fd: destination, sync: false }) : destination,
  );
}
