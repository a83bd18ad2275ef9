/**
 * Logs (pino), one logger per process, built once at start-up, on stderr: readable lines
 * (pino-pretty) when stderr is a terminal, JSON lines otherwise, for log collectors.
 * CRAWLFLOW_LOG_FORMAT=json or =pretty chooses either way. Set CRAWLFLOW_LOG_LEVEL to change
 * the level; `silent` turns logging off.
 */
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { ENV, InvalidEnvError } from '../shared/names';
import { activeTraceIds } from './tracing';

export type { Logger } from 'pino';

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** The format asked for in the environment, else pretty for a person at a terminal and JSON for anything else. */
export function logFormat(env: NodeJS.ProcessEnv = process.env, stderrIsTty = process.stderr.isTTY === true): LogFormat {
  const asked = env[ENV.logFormat];
  if (asked === undefined || asked === '') return stderrIsTty ? 'pretty' : 'json';
  return oneOf(ENV.logFormat, asked, LOG_FORMATS);
}

/** pino's levels; `silent` turns logging off. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The level asked for in the environment, else `defaultLevel`. */
export function logLevel(defaultLevel: pino.LevelWithSilent, env: NodeJS.ProcessEnv = process.env): pino.LevelWithSilent {
  const asked = env[ENV.logLevel];
  return asked === undefined || asked === '' ? defaultLevel : oneOf(ENV.logLevel, asked, LOG_LEVELS);
}

/** `value` of the variable `name` when it is one of `allowed`; InvalidEnvError otherwise (pino would throw its own error with a stack). */
function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new InvalidEnvError(`${name} must be one of ${allowed.join(', ')}, not ${JSON.stringify(value)}`);
  return value as T;
}

/** `defaultLevel` applies unless CRAWLFLOW_LOG_LEVEL is set: services log at info, the CLI at warn. */
export function createLogger(name: string, defaultLevel: pino.LevelWithSilent = 'info'): Logger {
  const destination =
    logFormat() === 'pretty' ? pretty({ destination: 2, translateTime: 'SYS:HH:MM:ss.l' }) : pino.destination({ fd: 2, sync: false });
  return pino(
    {
      name,
      level: logLevel(defaultLevel),
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // trace_id/span_id of the active span; fields of the line itself (e.g. forwarded SDK lines) win.
      mixin: activeTraceIds,
      // `taskToken`: the SDK's activity lines carry it, and it completes or fails the activity for whoever holds it.
      redact: { paths: ['headers.authorization', 'headers.cookie', '*.apiKey', 'apiKey', 'taskToken'], censor: '[redacted]' },
    },
    destination,
  );
}
