/** The CLI process's logger and tracing, set up once when the CLI starts. */
import type { LevelWithSilent } from 'pino';
import { createLogger, type Logger } from '../observability/logger';
import { InvalidEnvError } from '../shared/names';
import { EXIT_USAGE } from './crawl-options';
import { installTracing } from '../observability/tracing';

/**
 * The logger is made when the CLI is loaded, before main() can turn errors into exit codes: a
 * log variable it cannot use ends the process here, the way main() ends a usage error.
 */
function cliLogger(defaultLevel: LevelWithSilent): Logger {
  try {
    return createLogger('crawlflow', defaultLevel);
  } catch (err) {
    if (!(err instanceof InvalidEnvError)) throw err;
    process.stderr.write(`crawlflow: ${err.message}\n`);
    process.exit(EXIT_USAGE);
  }
}

/** The commands that run as services, until stopped: they log at info; the other commands only warn. */
const SERVICES: ReadonlySet<string | undefined> = new Set(['worker', 'render-worker']);

export const logger = cliLogger(SERVICES.has(process.argv[2]) ? 'info' : 'warn');
export const tracing = installTracing(logger, 'crawlflow');

/** Runs a command inside a span, so its log lines and the crawl it starts share one trace. */
export function traced<T>(name: string, action: () => Promise<T>): Promise<T> {
  return tracing.tracer.startActiveSpan(name, async (span) => {
    try {
      return await action();
    } finally {
      span.end();
    }
  });
}
