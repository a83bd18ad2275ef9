/**
 * Tracing with OpenTelemetry through Temporal's interceptors: a span started by the client
 * travels in workflow and activity headers, so every log line of one crawl (CLI, workflow,
 * activities) carries the same `trace_id`. Installed once per process; spans themselves are
 * written as debug log lines (no collector is needed to join logs by trace).
 */
import { context, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor, type ReadableSpan, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import type { Logger } from 'pino';

/** Finished spans as debug log lines. */
class LogSpanExporter implements SpanExporter {
  constructor(private readonly logger: Logger) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    for (const span of spans) {
      const { traceId, spanId } = span.spanContext();
      this.logger.debug(
        { trace_id: traceId, span_id: spanId, parent_span_id: span.parentSpanId, span: span.name, duration_ms: span.duration[0] * 1e3 + span.duration[1] / 1e6 },
        'span',
      );
    }
    done({ code: ExportResultCode.SUCCESS });
  }

  async shutdown(): Promise<void> {}
}

export interface Tracing {
  tracer: Tracer;
  /** Client and worker plugin: interceptors for propagation, a sink for workflow spans. */
  plugin: OpenTelemetryPlugin;
}

/** Workflow interceptor modules for a prebuilt bundle (the plugin adds them when the worker bundles). */
export const WORKFLOW_TRACING_MODULES = [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')];

let installed: Tracing | undefined;

export function installTracing(logger: Logger, serviceName: string): Tracing {
  if (installed) return installed;
  const resource = new Resource({ 'service.name': serviceName });
  const spanProcessor: SpanProcessor = new SimpleSpanProcessor(new LogSpanExporter(logger));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable() });
  installed = { tracer: trace.getTracer('crawlflow'), plugin: new OpenTelemetryPlugin({ resource, spanProcessor }) };
  return installed;
}

/** trace_id / span_id of the active span, for log lines (empty outside a span). */
export function activeTraceIds(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
