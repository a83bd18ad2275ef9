/**
 * The task queue's backlog as the Temporal server sees it, exported as Prometheus gauges.
 *
 * The SDK's own metrics only show what one worker saw (schedule-to-start latency, slots).
 * They cannot show tasks that no worker has polled yet. This exporter polls
 * `DescribeTaskQueue` with `reportStats` every few seconds, for the workflow and the activity
 * queue, and sets:
 *
 *   temporal_task_queue_backlog_count{task_queue, task_queue_type}        tasks waiting (approximate)
 *   temporal_task_queue_backlog_age_seconds{task_queue, task_queue_type}  age of the oldest waiting task
 *   temporal_task_queue_add_rate{task_queue, task_queue_type}             tasks/s added (server's 30 s average)
 *   temporal_task_queue_dispatch_rate{task_queue, task_queue_type}        tasks/s dispatched (server's 30 s average)
 *   temporal_task_queue_describe_errors_total{task_queue, task_queue_type} failed polls
 *
 * `task_queue_type` is `workflow` or `activity`. When a poll fails, that type's gauges are
 * removed rather than left at stale values, and the error counter goes up. The server caches
 * these stats for a few seconds, so polling faster than every 5 s gains nothing.
 *
 * Every worker that runs an exporter reports the same numbers for its queue. Aggregate with
 * `max without (instance)` (the recording rules in ops/prometheus do).
 */
import type { WorkflowService } from '@temporalio/client';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from './logger';

export type DescribeTaskQueueRequest = Parameters<WorkflowService['describeTaskQueue']>[0];
export type DescribeTaskQueueResponse = Awaited<ReturnType<WorkflowService['describeTaskQueue']>>;

/** Anything with the DescribeTaskQueue RPC: a client Connection's or NativeConnection's `workflowService`. */
export interface TaskQueueStatsService {
  describeTaskQueue(request: DescribeTaskQueueRequest): Promise<DescribeTaskQueueResponse>;
}

export type TaskQueueTypeName = 'workflow' | 'activity';

/** temporal.api.enums.v1.TaskQueueType values. */
const TASK_QUEUE_TYPE: Record<TaskQueueTypeName, 1 | 2> = { workflow: 1, activity: 2 };
/** temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL */
const TASK_QUEUE_KIND_NORMAL = 1;

export interface TaskQueueBacklogOptions {
  /** A @temporalio/client `Client` or `Connection`, a worker's `NativeConnection`, or a `workflowService` itself. */
  service: TaskQueueStatsService | { workflowService: TaskQueueStatsService };
  namespace: string;
  taskQueue: string;
  registry: Registry;
  /** Poll period; default 10 s. */
  intervalMs?: number;
  /** One poll's time limit; default the poll period. */
  timeoutMs?: number;
  /** Default both. */
  types?: readonly TaskQueueTypeName[];
  logger?: Logger;
}

export interface TaskQueueStatsSample {
  backlogCount: number;
  backlogAgeSeconds: number;
  addRate: number;
  dispatchRate: number;
}

type LongLike = number | string | { toNumber(): number } | null | undefined;
type LabelName = 'task_queue' | 'task_queue_type';

function toNumber(value: LongLike): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Number(value);
  return value.toNumber();
}

/** The stats of one DescribeTaskQueue response; zeros for fields the server left out (proto3 defaults). */
export function statsSample(response: DescribeTaskQueueResponse): TaskQueueStatsSample | undefined {
  const stats = response.stats;
  if (!stats) return undefined;
  const age = stats.approximateBacklogAge;
  return {
    backlogCount: toNumber(stats.approximateBacklogCount as LongLike),
    backlogAgeSeconds: age ? toNumber(age.seconds as LongLike) + (age.nanos ?? 0) / 1e9 : 0,
    addRate: stats.tasksAddRate ?? 0,
    dispatchRate: stats.tasksDispatchRate ?? 0,
  };
}

/** One gauge or counter per registry, shared by every exporter registered on it (one per task queue). */
function gauge(registry: Registry, name: string, help: string): Gauge<LabelName> {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Gauge) return existing as Gauge<LabelName>;
  return new Gauge({ name, help, labelNames: ['task_queue', 'task_queue_type'], registers: [registry] });
}

function counter(registry: Registry, name: string, help: string): Counter<LabelName> {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Counter) return existing as Counter<LabelName>;
  return new Counter({ name, help, labelNames: ['task_queue', 'task_queue_type'], registers: [registry] });
}

export class TaskQueueBacklog {
  private readonly service: TaskQueueStatsService;
  private readonly namespace: string;
  private readonly taskQueue: string;
  private readonly intervalMs: number;
  private readonly timeoutMs: number;
  private readonly types: readonly TaskQueueTypeName[];
  private readonly logger: Logger | undefined;
  private readonly backlogCount: Gauge<LabelName>;
  private readonly backlogAge: Gauge<LabelName>;
  private readonly addRate: Gauge<LabelName>;
  private readonly dispatchRate: Gauge<LabelName>;
  private readonly errors: Counter<LabelName>;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;

  constructor(options: TaskQueueBacklogOptions) {
    this.service = 'workflowService' in options.service ? options.service.workflowService : options.service;
    this.namespace = options.namespace;
    this.taskQueue = options.taskQueue;
    this.intervalMs = options.intervalMs ?? 10_000;
    this.timeoutMs = options.timeoutMs ?? this.intervalMs;
    this.types = options.types ?? ['workflow', 'activity'];
    this.logger = options.logger;
    const { registry } = options;
    this.backlogCount = gauge(registry, 'temporal_task_queue_backlog_count', 'Tasks waiting in the task queue (server-side, approximate; sticky workflow tasks excluded).');
    this.backlogAge = gauge(registry, 'temporal_task_queue_backlog_age_seconds', 'Age of the oldest task waiting in the task queue (0 when empty).');
    this.addRate = gauge(registry, 'temporal_task_queue_add_rate', 'Tasks per second added to the task queue (server 30 s average).');
    this.dispatchRate = gauge(registry, 'temporal_task_queue_dispatch_rate', 'Tasks per second dispatched from the task queue (server 30 s average).');
    this.errors = counter(registry, 'temporal_task_queue_describe_errors_total', 'DescribeTaskQueue polls that failed; the gauges of that queue type are absent until the next success.');
    for (const type of this.types) this.errors.inc(this.labels(type), 0);
  }

  /** Polls once now, then every `intervalMs`; the timer does not keep the process alive. */
  start(): Promise<void> {
    if (this.timer) return this.inFlight ?? Promise.resolve();
    this.timer = setInterval(() => void this.poll(), this.intervalMs);
    this.timer.unref();
    return this.poll();
  }

  /** Stops polling, waits for a poll in flight, and removes this queue's gauges. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.inFlight;
    for (const type of this.types) this.clear(type);
  }

  /** One poll of every queue type; a poll still running is awaited instead of overlapped. Never rejects. */
  poll(): Promise<void> {
    this.inFlight ??= Promise.all(this.types.map((type) => this.pollType(type))).then(
      () => undefined,
    ).finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private labels(type: TaskQueueTypeName): Record<LabelName, string> {
    return { task_queue: this.taskQueue, task_queue_type: type };
  }

  private clear(type: TaskQueueTypeName): void {
    const labels = this.labels(type);
    for (const metric of [this.backlogCount, this.backlogAge, this.addRate, this.dispatchRate]) metric.remove(labels);
  }

  private async pollType(type: TaskQueueTypeName): Promise<void> {
    const labels = this.labels(type);
    let timeout: NodeJS.Timeout | undefined;
    try {
      const response = await Promise.race([
        this.service.describeTaskQueue({
          namespace: this.namespace,
          taskQueue: { name: this.taskQueue, kind: TASK_QUEUE_KIND_NORMAL },
          taskQueueType: TASK_QUEUE_TYPE[type],
          reportStats: true,
        }),
        new Promise<never>((_, reject) => {
          timeout = setTimeout(() => reject(new Error(`DescribeTaskQueue took longer than ${this.timeoutMs} ms`)), this.timeoutMs);
          timeout.unref();
        }),
      ]);
      const sample = statsSample(response);
      if (!sample) throw new Error('DescribeTaskQueue returned no stats (server too old for reportStats?)');
      this.backlogCount.set(labels, sample.backlogCount);
      this.backlogAge.set(labels, sample.backlogAgeSeconds);
      this.addRate.set(labels, sample.addRate);
      this.dispatchRate.set(labels, sample.dispatchRate);
    } catch (err) {
      this.errors.inc(labels);
      this.clear(type);
      this.logger?.warn({ err, taskQueue: this.taskQueue, taskQueueType: type }, 'task queue stats unavailable');
    } finally {
      clearTimeout(timeout);
    }
  }
}
