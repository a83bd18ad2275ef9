/** The CLI process's logger and tracing, set up once when the CLI starts. */
import { createLogger } from '../observability/logger';
import { installTracing } from '../observability/tracing';

/** `crawlflow worker` is a service and logs at info; the other commands only warn. */
export const logger = createLogger('crawlflow', process.argv[2] === 'worker' ? 'info' : 'warn');
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
