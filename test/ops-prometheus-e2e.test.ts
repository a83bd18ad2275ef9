/**
 * ops/ against the real thing: a Temporal dev server, a worker host serving /metrics, the
 * task-queue backlog exporter, and a real Prometheus scraping both every second with the
 * rule files of ops/prometheus/rules loaded. A crawl of a synthetic site (with some 503s and
 * connection resets) runs for more than 10 s of scrapes; then every PromQL expression of the
 * Grafana dashboard and every recording and alerting rule is evaluated through
 * /api/v1/query. None may fail, and every one that should have data must return series.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NativeConnection } from '@temporalio/worker';
import { Registry } from 'prom-client';
import { startCrawl } from '../src/client/crawl-client';
import { createLogger } from '../src/observability/logger';
import { serveMetrics, type MetricsEndpoint } from '../src/observability/metrics-server';
import { TaskQueueBacklog } from '../src/observability/task-queue-backlog';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import type { WorkerHost } from '../src/workers/worker-host';
import { sleep, waitFor } from './helpers/fixtures';
import { dashboardExpressions, OPS_DIR, opsFiles, startPrometheus, toPromQL, type PrometheusServer, type PromSample, type QueryResult } from './helpers/prometheus';
import { readRecords, startMeteredWorkerHost, uniqueQueue, type TestTemporal } from './helpers/temporal';

/**
 * Dashboard expressions that legitimately return nothing in a healthy crawl. They must still
 * evaluate without error.
 */
const EMPTY_WHEN_HEALTHY: Record<string, string> = {
  'panel "Activity and workflow task failures/s" A': 'temporal_activity_execution_failed only exists after an activity threw',
  'panel "Activity and workflow task failures/s" B': 'temporal_workflow_task_execution_failed only exists after a workflow task failed',
  'panel "Temporal requests/s and failures/s" B': 'temporal_request_failure only exists after a failed RPC',
  'annotation "crawlflow alerts firing"': 'ALERTS has series only while an alert is pending or firing',
  'annotation "worker restarts"': 'only after a worker restarted within 2 minutes',
};

interface RulesResponse {
  status: string;
  data: {
    groups: { name: string; lastEvaluation: string; rules: { name: string; query: string; type: 'recording' | 'alerting'; health: string; lastError?: string }[] }[];
  };
}

interface TargetsResponse {
  data: { activeTargets: { scrapeUrl: string; health: string; lastError: string; labels: Record<string, string> }[] };
}

function vector(result: QueryResult): PromSample[] {
  return result.status === 'success' && result.data?.resultType === 'vector' ? (result.data.result as PromSample[]) : [];
}

async function cleanup(steps: (() => Promise<unknown> | undefined)[]): Promise<void> {
  const errors: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length > 0) throw errors[0];
}

describe('Prometheus scraping a real worker: every dashboard and rule expression evaluates', () => {
  const taskQueue = uniqueQueue('ops-e2e');
  let env: TestTemporal;
  let host: WorkerHost;
  let connection: NativeConnection;
  let backlog: TaskQueueBacklog;
  let backlogEndpoint: MetricsEndpoint;
  let prometheus: PrometheusServer;
  let site: SyntheticSite | undefined;
  let workerInstance: string;
  let crawlSeconds = 0;

  before(async () => {
    ({ env, host } = await startMeteredWorkerHost('ops-e2e', taskQueue));
    workerInstance = new URL(host.metricsUrl!).host;

    // The backlog exporter as a worker would run it (on a NativeConnection), served from its
    // own /metrics because WorkerHost does not expose its registry.
    connection = await NativeConnection.connect({ address: env.address });
    const registry = new Registry();
    backlog = new TaskQueueBacklog({ service: connection, namespace: 'default', taskQueue, registry, intervalMs: 1_000, logger: createLogger('ops-e2e-backlog', 'warn') });
    await backlog.start();
    backlogEndpoint = await serveMetrics(registry, '127.0.0.1:0');

    prometheus = await startPrometheus((dir) => {
      // The same job as ops/prometheus/prometheus.yml (name, honor_labels, file_sd with the
      // service and task_queue target labels), scraped and evaluated every second.
      const targetsFile = join(dir, 'targets.json');
      const targets = [{ targets: [workerInstance, new URL(backlogEndpoint.url).host], labels: { service: 'crawlflow', task_queue: taskQueue } }];
      writeFileSync(targetsFile, JSON.stringify(targets));
      return {
        global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
        rule_files: opsFiles('prometheus/rules'),
        scrape_configs: [
          { job_name: 'crawlflow-workers', honor_labels: true, metrics_path: '/metrics', file_sd_configs: [{ files: [targetsFile], refresh_interval: '1s' }] },
        ],
      };
    });
  });

  after(() =>
    cleanup([
      () => prometheus?.close(),
      () => backlog?.stop(),
      () => backlogEndpoint?.close(),
      () => connection?.close(),
      () => site?.close(),
      () => host?.stop(),
      () => env?.close(),
    ]),
  );

  it('scrapes the worker and the backlog exporter', async () => {
    const deadline = Date.now() + 15_000;
    let targets: TargetsResponse['data']['activeTargets'] = [];
    while (Date.now() < deadline) {
      targets = (await prometheus.api<TargetsResponse>('/api/v1/targets')).data.activeTargets;
      if (targets.length === 2 && targets.every((target) => target.health === 'up')) break;
      await sleep(250);
    }
    assert.deepEqual(
      targets.map((target) => [target.scrapeUrl, target.health, target.labels.task_queue]).sort(),
      [host.metricsUrl!, backlogEndpoint.url].sort().map((url) => [url, 'up', taskQueue]),
      JSON.stringify(targets),
    );
  });

  it('a crawl spanning more than 10 s of scrapes is what Prometheus recorded', async (t) => {
    const reset = (req: IncomingMessage): void => {
      req.socket.destroy();
    };
    const unavailable = (_req: IncomingMessage, res: ServerResponse): void => {
      res.writeHead(503, { 'content-type': 'text/html' }).end('<title>busy</title>');
    };
    site = await startSyntheticSite({ pages: 600, latencyMs: 50, routes: { '/page/7': unavailable, '/page/13': reset, '/page/27': reset } });
    const started = Date.now();
    const handle = await startCrawl(env.client, 'ops-e2e-crawl', { seeds: [site.urlOf(0)], batchSize: 10, concurrency: 4, perHostConcurrency: 2 }, taskQueue);
    await handle.result();
    crawlSeconds = (Date.now() - started) / 1000;
    const records = await readRecords(env.dataDir, 'ops-e2e-crawl');
    assert.ok(crawlSeconds > 10, `the crawl took ${crawlSeconds.toFixed(1)} s`);
    assert.ok(records.length > 400, `${records.length} pages`);
    t.diagnostic(`crawl: ${records.length} pages in ${crawlSeconds.toFixed(1)} s`);

    // Wait for the scrapes after the crawl, then for the rules evaluated on them.
    const total = `sum(crawler_pages_total{task_queue="${taskQueue}"})`;
    const deadline = Date.now() + 15_000;
    let recorded = NaN;
    while (Date.now() < deadline) {
      recorded = Number(vector(await prometheus.query(total))[0]?.value?.[1]);
      if (recorded === records.length) break;
      await sleep(250);
    }
    assert.equal(recorded, records.length, 'Prometheus counted every processed URL');
    // The rules (evaluated every second here) must have run on those scrapes, twice, so rates
    // over them have two points: every group evaluated at least 2 s after the count.
    const countedAt = Date.now();
    await waitFor(
      async () => (await prometheus.api<RulesResponse>('/api/v1/rules')).data.groups.every((group) => Date.parse(group.lastEvaluation) >= countedAt + 2_000),
      15_000,
      'every rule group evaluated twice on the scrapes after the crawl',
    );

    const scrapes = vector(await prometheus.query(`count_over_time(crawler_bytes_total{instance="${workerInstance}"}[${Math.ceil(crawlSeconds)}s])`));
    assert.ok(Number(scrapes[0]?.value?.[1]) >= 10, `scrapes during the crawl: ${JSON.stringify(scrapes)}`);
    const errors = vector(await prometheus.query(`sum by (code) (crawler_fetch_errors_total{task_queue="${taskQueue}"})`));
    assert.ok(errors.length >= 1, 'the resets were counted as fetch errors');
    // (Once worker-host.ts runs an exporter too, the worker's instance reports the same series.)
    const backlogInstance = new URL(backlogEndpoint.url).host;
    const backlogSeries = vector(await prometheus.query(`temporal_task_queue_backlog_count{task_queue="${taskQueue}",instance="${backlogInstance}"}`));
    assert.deepEqual(backlogSeries.map((sample) => sample.metric.task_queue_type).sort(), ['activity', 'workflow'], 'backlog exporter scraped');
  });

  it('the backlog exporter also works on a @temporalio/client Client', async () => {
    const registry = new Registry();
    const exporter = new TaskQueueBacklog({ service: env.client, namespace: 'default', taskQueue, registry });
    await exporter.poll();
    const count = await registry.getSingleMetric('temporal_task_queue_backlog_count')?.get();
    assert.deepEqual(count?.values.map((sample) => sample.labels.task_queue_type).sort(), ['activity', 'workflow']);
    const errorsTotal = await registry.getSingleMetric('temporal_task_queue_describe_errors_total')?.get();
    assert.ok(errorsTotal?.values.every((sample) => sample.value === 0));
    await exporter.stop();
  });

  it('every recording and alerting rule is healthy and evaluates; every recording has series for the queue', async (t) => {
    const rules = await prometheus.api<RulesResponse>('/api/v1/rules');
    assert.equal(rules.status, 'success');
    const all = rules.data.groups.flatMap((group) => group.rules);
    const fileText = opsFiles('prometheus/rules').map((file) => readFileSync(file, 'utf8')).join('\n');
    const declared = (fileText.match(/^\s*- (record|alert):/gm) ?? []).length;
    assert.equal(all.length, declared, 'Prometheus loaded every rule of ops/prometheus/rules');

    const problems: string[] = [];
    for (const rule of all) {
      if (rule.health !== 'ok' || rule.lastError) problems.push(`${rule.type} ${rule.name}: health ${rule.health} ${rule.lastError ?? ''}`);
      const result = await prometheus.query(rule.query);
      if (result.status !== 'success') {
        problems.push(`${rule.type} ${rule.name}: ${result.errorType}: ${result.error}\n  ${rule.query}`);
        continue;
      }
      if (rule.type === 'recording') {
        if (vector(result).length === 0) problems.push(`record ${rule.name}: no series\n  ${rule.query}`);
        const stored = vector(await prometheus.query(`${rule.name}{task_queue="${taskQueue}"}`));
        if (stored.length === 0) problems.push(`record ${rule.name}: nothing recorded for task_queue="${taskQueue}"`);
      }
    }
    assert.deepEqual(problems, []);
    t.diagnostic(`${all.filter((rule) => rule.type === 'recording').length} recording and ${all.filter((rule) => rule.type === 'alerting').length} alerting rules evaluated`);

    const firing = vector(await prometheus.query(`ALERTS{alertstate="firing"}`));
    assert.deepEqual(
      firing.map((sample) => sample.metric.alertname),
      [],
      `a healthy crawl fires no alert (pending: ${JSON.stringify(vector(await prometheus.query('ALERTS{alertstate="pending"}')).map((s) => s.metric))})`,
    );
  });

  it('every dashboard expression evaluates and returns series unless documented as error-only', async (t) => {
    const dashboard = JSON.parse(readFileSync(join(OPS_DIR, 'grafana', 'crawlflow-dashboard.json'), 'utf8')) as Parameters<typeof dashboardExpressions>[0];
    const expressions = dashboardExpressions(dashboard);
    assert.ok(expressions.length >= 40, `${expressions.length} expressions`);
    for (const where of Object.keys(EMPTY_WHEN_HEALTHY)) {
      assert.ok(expressions.some((expression) => expression.where === where), `EMPTY_WHEN_HEALTHY names a real expression: ${where}`);
    }
    const variables = { task_queue: taskQueue, worker: workerInstance, namespace: 'default', temporal_ui: 'http://127.0.0.1:8233' };
    const problems: string[] = [];
    const empty: string[] = [];
    for (const { where, expr } of expressions) {
      const promql = toPromQL(expr, variables, '1m');
      const result = await prometheus.query(promql);
      if (result.status !== 'success') problems.push(`${where}: ${result.errorType}: ${result.error}\n  ${promql}`);
      else if (vector(result).length === 0) {
        if (where in EMPTY_WHEN_HEALTHY) empty.push(where);
        else problems.push(`${where}: no series\n  ${promql}`);
      }
    }
    assert.deepEqual(problems, []);
    // Each documented exception really is empty in this healthy crawl: one that returns series
    // here is not error-only, and its entry would hide a panel that went blank for good.
    assert.deepEqual(empty.sort(), Object.keys(EMPTY_WHEN_HEALTHY).sort(), 'the expressions empty in a healthy crawl are exactly those documented');
    t.diagnostic(`${expressions.length} dashboard expressions evaluated; empty as documented: ${empty.join(', ') || 'none'}`);
  });
});
