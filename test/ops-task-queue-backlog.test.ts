/**
 * TaskQueueBacklog against a scripted `describeTaskQueue`: what it asks the server, the gauges
 * it sets from the response (Long counts, Durations, fields proto3 leaves out), what a failed
 * poll does, several queues on one registry, and stop(). The real server is exercised by
 * ops-prometheus-e2e.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { waitFor } from './helpers/fixtures';
import {
  statsSample,
  TaskQueueBacklog,
  type DescribeTaskQueueRequest,
  type DescribeTaskQueueResponse,
  type TaskQueueStatsService,
} from '../src/observability/task-queue-backlog';

/** protobufjs decodes int64 as Long; only toNumber() is used. */
const long = (value: number): never => ({ toNumber: () => value, toString: () => String(value) }) as never;

type Script = (request: DescribeTaskQueueRequest) => DescribeTaskQueueResponse | Promise<DescribeTaskQueueResponse>;

function fakeService(script: Script): TaskQueueStatsService & { requests: DescribeTaskQueueRequest[] } {
  const requests: DescribeTaskQueueRequest[] = [];
  return {
    requests,
    describeTaskQueue: async (request) => {
      requests.push(request);
      return script(request);
    },
  };
}

const response = (stats: Record<string, unknown> | undefined): DescribeTaskQueueResponse => ({ stats }) as unknown as DescribeTaskQueueResponse;

async function value(registry: Registry, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = await registry.getSingleMetric(name)?.get();
  const sample = metric?.values.find((entry) => Object.entries(labels).every(([key, expected]) => entry.labels[key] === expected));
  return sample?.value;
}

describe('TaskQueueBacklog', () => {
  it('asks for the normal queue with stats, once per type, and exports the four gauges', async () => {
    const service = fakeService((request) =>
      request.taskQueueType === 2
        ? response({ approximateBacklogCount: long(42), approximateBacklogAge: { seconds: long(75), nanos: 500_000_000 }, tasksAddRate: 3.5, tasksDispatchRate: 2.25 })
        : response({ approximateBacklogAge: {}, tasksAddRate: 0.2, tasksDispatchRate: 0.2 }),
    );
    const registry = new Registry();
    const exporter = new TaskQueueBacklog({ service: { workflowService: service }, namespace: 'ns', taskQueue: 'crawlflow', registry, intervalMs: 60_000 });
    await exporter.start();
    try {
      assert.deepEqual(
        service.requests.map((request) => ({ ...request })).sort((a, b) => Number(a.taskQueueType) - Number(b.taskQueueType)),
        [
          { namespace: 'ns', taskQueue: { name: 'crawlflow', kind: 1 }, taskQueueType: 1, reportStats: true },
          { namespace: 'ns', taskQueue: { name: 'crawlflow', kind: 1 }, taskQueueType: 2, reportStats: true },
        ],
      );
      const activity = { task_queue: 'crawlflow', task_queue_type: 'activity' };
      const workflow = { task_queue: 'crawlflow', task_queue_type: 'workflow' };
      assert.equal(await value(registry, 'temporal_task_queue_backlog_count', activity), 42);
      assert.equal(await value(registry, 'temporal_task_queue_backlog_age_seconds', activity), 75.5);
      assert.equal(await value(registry, 'temporal_task_queue_add_rate', activity), 3.5);
      assert.equal(await value(registry, 'temporal_task_queue_dispatch_rate', activity), 2.25);
      assert.equal(await value(registry, 'temporal_task_queue_backlog_count', workflow), 0, 'a count proto3 left out is 0');
      assert.equal(await value(registry, 'temporal_task_queue_backlog_age_seconds', workflow), 0);
      assert.equal(await value(registry, 'temporal_task_queue_describe_errors_total', workflow), 0, 'the error counter exists from the start');
      const text = await registry.metrics();
      assert.match(text, /^temporal_task_queue_backlog_count\{task_queue="crawlflow",task_queue_type="activity"\} 42$/m);
    } finally {
      await exporter.stop();
    }
  });

  it('a failed or stat-less poll removes that type\'s gauges and counts an error; the next success restores them', async () => {
    let fail = false;
    const service = fakeService((request) => {
      if (fail && request.taskQueueType === 2) throw new Error('UNAVAILABLE');
      return response({ approximateBacklogCount: long(5), tasksAddRate: 1, tasksDispatchRate: 1 });
    });
    const registry = new Registry();
    const exporter = new TaskQueueBacklog({ service, namespace: 'default', taskQueue: 'q', registry, intervalMs: 60_000 });
    const activity = { task_queue: 'q', task_queue_type: 'activity' };
    const workflow = { task_queue: 'q', task_queue_type: 'workflow' };
    await exporter.poll();
    assert.equal(await value(registry, 'temporal_task_queue_backlog_count', activity), 5);

    fail = true;
    await exporter.poll();
    assert.equal(await value(registry, 'temporal_task_queue_backlog_count', activity), undefined, 'no stale value');
    assert.equal(await value(registry, 'temporal_task_queue_backlog_age_seconds', activity), undefined);
    assert.equal(await value(registry, 'temporal_task_queue_describe_errors_total', activity), 1);
    assert.equal(await value(registry, 'temporal_task_queue_backlog_count', workflow), 5, 'the other type is unaffected');

    fail = false;
    await exporter.poll();
    assert.equal(await value(registry, 'temporal_task_queue_backlog_count', activity), 5);

    const statless = new TaskQueueBacklog({ service: fakeService(() => response(undefined)), namespace: 'default', taskQueue: 'old', registry, types: ['activity'] });
    await statless.poll();
    assert.equal(await value(registry, 'temporal_task_queue_describe_errors_total', { task_queue: 'old', task_queue_type: 'activity' }), 1);
    assert.equal(await value(registry, 'temporal_task_queue_backlog_count', { task_queue: 'old' }), undefined);
  });

  it('a hanging RPC times out instead of stalling the exporter, and polls never overlap', async () => {
    // Never settles; its timer keeps the event loop alive the way a real gRPC call would.
    const service = fakeService(() => new Promise<never>(() => setTimeout(() => undefined, 1_000)));
    const registry = new Registry();
    const exporter = new TaskQueueBacklog({ service, namespace: 'default', taskQueue: 'slow', registry, timeoutMs: 50, types: ['activity'] });
    const first = exporter.poll();
    const second = exporter.poll();
    assert.equal(first, second, 'a poll in flight is shared');
    await first;
    assert.equal(service.requests.length, 1);
    assert.equal(await value(registry, 'temporal_task_queue_describe_errors_total', { task_queue: 'slow' }), 1);
  });

  it('several task queues share one registry; stop() removes only its own series', async () => {
    const registry = new Registry();
    const make = (taskQueue: string, count: number): TaskQueueBacklog =>
      new TaskQueueBacklog({ service: fakeService(() => response({ approximateBacklogCount: long(count) })), namespace: 'default', taskQueue, registry, intervalMs: 60_000 });
    const a = make('a', 1);
    const b = make('b', 2);
    await Promise.all([a.start(), b.start()]);
    assert.equal(await value(registry, 'temporal_task_queue_backlog_count', { task_queue: 'a', task_queue_type: 'activity' }), 1);
    assert.equal(await value(registry, 'temporal_task_queue_backlog_count', { task_queue: 'b', task_queue_type: 'activity' }), 2);
    await a.stop();
    assert.equal(await value(registry, 'temporal_task_queue_backlog_count', { task_queue: 'a' }), undefined);
    assert.equal(await value(registry, 'temporal_task_queue_backlog_count', { task_queue: 'b', task_queue_type: 'activity' }), 2);
    await b.stop();
  });

  it('polls on its interval until stopped', async () => {
    const service = fakeService(() => response({}));
    const exporter = new TaskQueueBacklog({ service, namespace: 'default', taskQueue: 'tick', registry: new Registry(), intervalMs: 30, types: ['activity'] });
    await exporter.start();
    await waitFor(() => service.requests.length >= 3, 5_000, 'three polls at a 30 ms interval');
    await exporter.stop();
    const polled = service.requests.length;
    // A quiet spell of three intervals: a poll after stop() would show up in it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(service.requests.length, polled, 'no poll after stop()');
  });

  it('statsSample reads Long, number and string counts and Duration ages', () => {
    assert.deepEqual(statsSample(response({ approximateBacklogCount: long(7), approximateBacklogAge: { seconds: long(2), nanos: 250_000_000 } })), {
      backlogCount: 7,
      backlogAgeSeconds: 2.25,
      addRate: 0,
      dispatchRate: 0,
    });
    assert.equal(statsSample(response({ approximateBacklogCount: 9 }))?.backlogCount, 9);
    assert.equal(statsSample(response({ approximateBacklogCount: '11' }))?.backlogCount, 11);
    assert.equal(statsSample(response(undefined)), undefined);
  });
});
