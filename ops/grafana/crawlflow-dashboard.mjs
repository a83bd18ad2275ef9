#!/usr/bin/env node
// The crawlflow Grafana dashboard as code. Writes crawlflow-dashboard.json next to this file:
//
//   node ops/grafana/crawlflow-dashboard.mjs           regenerate the JSON after editing this file
//   node ops/grafana/crawlflow-dashboard.mjs --check   exit 1 if the JSON differs (test/ops-rules.test.ts runs it)
//
// Every query is a PromQL string in a target's `expr`, so tests can evaluate each one.
// Panels and variables are described in ops/README.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const OUTPUT = fileURLToPath(new URL('./crawlflow-dashboard.json', import.meta.url));

const DS = { type: 'prometheus', uid: '${DS_PROMETHEUS}' };
const TQ = 'task_queue=~"$task_queue"';
const W = 'instance=~"$worker"';
const RI = '$__rate_interval';

const LINK_RUNNING = {
  title: 'Running crawls on ${__field.labels.task_queue} (Temporal Web UI)',
  url: '${temporal_ui}/namespaces/${namespace}/workflows?query=TaskQueue%3D%22${__field.labels.task_queue}%22%20AND%20ExecutionStatus%3D%22Running%22',
  targetBlank: true,
};
const LINK_TQ = {
  title: 'Task queue ${__field.labels.task_queue}: pollers and worker identities (Temporal Web UI)',
  url: '${temporal_ui}/namespaces/${namespace}/task-queues/${__field.labels.task_queue}',
  targetBlank: true,
};

let lastId = 0;
const nextId = () => ++lastId;
let y = 0;

function row(title, repeat) {
  const panel = { type: 'row', title, id: nextId(), collapsed: false, gridPos: { h: 1, w: 24, x: 0, y }, panels: [] };
  if (repeat) panel.repeat = repeat;
  y += 1;
  return panel;
}

/** Lays panels out left to right, wrapping at 24 columns. */
function place(panels, height = 8) {
  let x = 0;
  for (const panel of panels) {
    const { w } = panel.gridPos;
    if (x + w > 24) {
      x = 0;
      y += height;
    }
    panel.gridPos = { h: height, w, x, y };
    x += w;
  }
  y += height;
  return panels;
}

/** A panel; `targets` are [expr, legend] pairs. */
function panel(title, description, targets, { unit = 'short', links = [LINK_RUNNING], w = 8, max, kind = 'timeseries', stack = false } = {}) {
  const defaults = { unit, links };
  if (kind === 'timeseries') {
    defaults.custom = { fillOpacity: 10, lineWidth: 1, showPoints: 'never', spanNulls: false, stacking: { mode: stack ? 'normal' : 'none', group: 'A' } };
  }
  defaults.min = 0;
  if (max !== undefined) defaults.max = max;
  return {
    type: kind,
    title,
    description,
    id: nextId(),
    datasource: DS,
    fieldConfig: { defaults, overrides: [] },
    options:
      kind === 'timeseries'
        ? { legend: { displayMode: 'list', placement: 'bottom', showLegend: true }, tooltip: { mode: 'multi', sort: 'desc' } }
        : {},
    targets: targets.map(([expr, legendFormat], i) => ({ refId: String.fromCharCode(65 + i), datasource: DS, expr, legendFormat, range: true, instant: false })),
    gridPos: { h: 8, w, x: 0, y: 0 },
  };
}

const panels = [];

// ---------------------------------------------------------------- SLO
panels.push(row('SLO'));
panels.push(
  ...place([
    panel(
      'Task success rate',
      'Share of processed URLs that did not end in an error (recording rule task_queue:crawler_page_success:ratio_rate5m), and share of fetchBatch activities that did not throw (task_queue:crawler_batch_success:ratio_rate5m). Alert: CrawlflowBatchSuccessLow below 95%.',
      [
        [`task_queue:crawler_page_success:ratio_rate5m{${TQ}}`, 'pages {{task_queue}}'],
        [`task_queue:crawler_batch_success:ratio_rate5m{${TQ}}`, 'batches {{task_queue}}'],
      ],
      { unit: 'percentunit', max: 1, w: 6 },
    ),
    panel(
      'Fetch latency p50 / p95',
      'One page fetch (connect to last body byte, redirects included) from crawler_task_duration_seconds{type="fetch"}. Alert: CrawlflowFetchLatencyHigh when p95 > 10s for 15m.',
      [
        [`task_queue:crawler_fetch_duration_seconds:p50{${TQ}}`, 'p50 {{task_queue}}'],
        [`task_queue:crawler_fetch_duration_seconds:p95{${TQ}}`, 'p95 {{task_queue}}'],
      ],
      { unit: 's', w: 6 },
    ),
    panel(
      'Activity schedule-to-start p95',
      'How long batch activities wait between being scheduled by the workflow and being picked up by a worker (Temporal SDK temporal_activity_schedule_to_start_latency). High means no free worker slots. Alert: CrawlflowScheduleToStartHigh (5s warning, 60s critical).',
      [[`task_queue:temporal_activity_schedule_to_start_latency_seconds:p95{${TQ}}`, '{{task_queue}}']],
      { unit: 's', w: 6 },
    ),
    panel(
      'Workers up',
      'Scrape targets of the crawlflow-workers job that answer (up == 1). Alerts: CrawlflowWorkerDown, CrawlflowAllWorkersDown.',
      [[`sum by (task_queue) (up{job="crawlflow-workers",${TQ}})`, '{{task_queue}}']],
      { unit: 'none', w: 6, links: [LINK_TQ] },
    ),
    panel(
      'Task-queue backlog (tasks)',
      'Tasks waiting in the Temporal task queue as the server reports them (DescribeTaskQueue, src/observability/task-queue-backlog.ts), max over the workers that export it. Alert: CrawlflowTaskQueueBacklogCountHigh above 100.',
      [[`task_queue_type:temporal_task_queue_backlog_count:max{${TQ}}`, '{{task_queue}} {{task_queue_type}}']],
      { unit: 'none' },
    ),
    panel(
      'Task-queue backlog age',
      'Age of the oldest task waiting in the task queue. Alert: CrawlflowTaskQueueBacklogAgeHigh (60s warning, 5m critical).',
      [[`task_queue_type:temporal_task_queue_backlog_age_seconds:max{${TQ}}`, '{{task_queue}} {{task_queue_type}}']],
      { unit: 's' },
    ),
    panel(
      'Task-queue add vs dispatch rate',
      "Tasks/s added to and dispatched from the task queue (server's 30 s averages). Add above dispatch means the backlog grows. Failed stats polls/s above 0: the backlog panels and alerts are blind (alert CrawlflowTaskQueueStatsUnavailable).",
      [
        [`max by (task_queue, task_queue_type) (temporal_task_queue_add_rate{${TQ}})`, 'added {{task_queue}} {{task_queue_type}}'],
        [`max by (task_queue, task_queue_type) (temporal_task_queue_dispatch_rate{${TQ}})`, 'dispatched {{task_queue}} {{task_queue_type}}'],
        [`max by (task_queue, task_queue_type) (rate(temporal_task_queue_describe_errors_total{${TQ}}[${RI}]))`, 'failed stats polls {{task_queue}} {{task_queue_type}}'],
      ],
      { unit: 'ops' },
    ),
  ]),
);

// ---------------------------------------------------------------- throughput
panels.push(row('Throughput'));
panels.push(
  ...place([
    panel(
      'Pages/s by outcome',
      'URLs processed per second: fetched (any HTTP status), error (gave up after retries) or skipped (robots.txt, redirect out of scope), split by HTTP status class.',
      [[`sum by (outcome, status_class) (rate(crawler_pages_total{${TQ}}[${RI}]))`, '{{outcome}} {{status_class}}']],
      { unit: 'ops', stack: true },
    ),
    panel('Bytes/s', 'Response body bytes received on the wire (before decompression).', [[`sum by (task_queue) (rate(crawler_bytes_total{${TQ}}[${RI}]))`, '{{task_queue}}']], {
      unit: 'Bps',
    }),
    panel(
      'Fetch attempts/s by status',
      "Every fetch attempt (retries included) by HTTP status class, or 'error' for network-level failures.",
      [[`sum by (status) (rate(crawler_task_duration_seconds_count{type="fetch",${TQ}}[${RI}]))`, '{{status}}']],
      { unit: 'ops', stack: true },
    ),
    panel(
      'Batches/s by result',
      'fetchBatch activities finished per second: completed, deferred (host handed back to the workflow), cancelled, failed.',
      [[`sum by (status) (rate(crawler_task_duration_seconds_count{type="batch",${TQ}}[${RI}]))`, '{{status}}']],
      { unit: 'ops', stack: true },
    ),
    panel(
      'Batch duration p95',
      'How long one fetchBatch activity runs (claim to last record).',
      [[`histogram_quantile(0.95, sum by (task_queue, le) (rate(crawler_task_duration_seconds_bucket{type="batch",${TQ}}[${RI}])))`, '{{task_queue}}']],
      { unit: 's' },
    ),
    panel(
      'Crawls completed/s',
      'crawlSession workflows completed (Temporal SDK), by task queue.',
      [[`sum by (task_queue) (rate(temporal_workflow_completed{${TQ}}[${RI}]))`, '{{task_queue}}']],
      { unit: 'ops' },
    ),
  ]),
);

// ---------------------------------------------------------------- errors
panels.push(row('Errors'));
panels.push(
  ...place([
    panel(
      'Fetch failure ratio',
      'Share of fetch attempts that ended in a network error or HTTP 5xx (task_queue:crawler_fetch_failures:ratio_rate5m). Alert: CrawlflowFetchErrorRatioHigh (10% warning, 50% critical).',
      [[`task_queue:crawler_fetch_failures:ratio_rate5m{${TQ}}`, '{{task_queue}}']],
      { unit: 'percentunit', max: 1 },
    ),
    panel(
      'Fetch errors/s by code',
      'Failed fetch attempts by error code (timeout, dns, connect, reset, truncated, too-large, ...). Empty while nothing fails.',
      [[`sum by (code) (rate(crawler_fetch_errors_total{${TQ}}[${RI}]))`, '{{code}}']],
      { unit: 'ops', stack: true },
    ),
    panel(
      'Fetch error ratio by code',
      'Share of fetch attempts failing with each code (task_queue_code:crawler_fetch_errors:ratio_rate5m). Empty while nothing fails.',
      [[`task_queue_code:crawler_fetch_errors:ratio_rate5m{${TQ}}`, '{{task_queue}} {{code}}']],
      { unit: 'percentunit' },
    ),
    panel(
      'Pages/s by status class',
      "Processed URLs by final HTTP status class ('none' when there was no response: errors and skips).",
      [[`sum by (status_class) (rate(crawler_pages_total{${TQ}}[${RI}]))`, '{{status_class}}']],
      { unit: 'ops', stack: true },
    ),
    panel(
      'Retries, resumes, deferrals',
      'Fetch retries/s; batches resumed from heartbeat details (a worker died: alert CrawlflowBatchResumes); hosts handed back to the workflow for a long wait (alert CrawlflowHostDeferralsHigh).',
      [
        [`sum by (task_queue) (rate(crawler_fetch_retries_total{${TQ}}[${RI}]))`, 'retries/s {{task_queue}}'],
        [`sum by (task_queue) (rate(crawler_batch_resumes_total{${TQ}}[${RI}]))`, 'batch resumes/s {{task_queue}}'],
        [`sum by (task_queue) (rate(crawler_host_deferrals_total{${TQ}}[${RI}]))`, 'host deferrals/s {{task_queue}}'],
      ],
      { unit: 'ops' },
    ),
    panel(
      'Store waits',
      'Store calls waiting for the frontier store now, and seconds waited per second. Above 0: a store outage, the crawls show waiting-for-store and resume by themselves (alert CrawlflowStoreUnavailable).',
      [
        [`sum by (task_queue) (crawler_store_waiting_calls{${TQ}})`, 'waiting calls {{task_queue}}'],
        [`sum by (task_queue) (rate(crawler_store_wait_seconds_total{${TQ}}[${RI}]))`, 'waited s/s {{task_queue}}'],
      ],
      { unit: 'none' },
    ),
    panel(
      'Activity and workflow task failures/s',
      'Temporal SDK: activity executions that threw and workflow tasks that failed. Empty while nothing fails.',
      [
        [`sum by (task_queue, activity_type) (rate(temporal_activity_execution_failed{${TQ}}[${RI}]))`, 'activity {{activity_type}}'],
        [`sum by (task_queue, workflow_type) (rate(temporal_workflow_task_execution_failed{${TQ}}[${RI}]))`, 'workflow task {{workflow_type}}'],
      ],
      { unit: 'ops' },
    ),
  ]),
);

// ---------------------------------------------------------------- capacity
panels.push(row('Worker capacity'));
const workersTable = panel(
  'Workers: instance → worker identity',
  'Maps each scrape target (instance) to the worker identity (pid@host) that the Temporal Web UI shows as poller and as the last worker of an activity.',
  [[`max by (task_queue, instance, worker_id) (worker_queue_length{${TQ}})`, '']],
  { unit: 'none', links: [LINK_TQ], kind: 'table' },
);
Object.assign(workersTable.targets[0], { format: 'table', instant: true, range: false });
panels.push(
  ...place([
    panel(
      'Activity slots available / used',
      'Batch slots per worker (maxConcurrentBatches, 64 by default). Alert: CrawlflowNoFreeActivitySlots when a worker (warning) or every worker (critical) has none free for 10m.',
      [
        [`temporal_worker_task_slots_available{worker_type="ActivityWorker",${TQ},${W}}`, 'available {{instance}}'],
        [`temporal_worker_task_slots_used{worker_type="ActivityWorker",${TQ},${W}}`, 'used {{instance}}'],
      ],
      { unit: 'none', links: [LINK_TQ] },
    ),
    panel('Pollers', 'Long-poll requests each worker keeps open, by poller type.', [[`temporal_num_pollers{${TQ},${W}}`, '{{instance}} {{poller_type}}']], {
      unit: 'none',
      links: [LINK_TQ],
    }),
    panel(
      'Queue length per worker',
      'URLs claimed by the batches running on each worker and not processed yet (worker_queue_length).',
      [[`worker_queue_length{${TQ},${W}}`, '{{instance}} ({{worker_id}})']],
      { unit: 'none', links: [LINK_TQ] },
    ),
    panel(
      'Politeness wait (mean)',
      'Mean time a request waited for its host slot (--delay-ms, Crawl-delay, Retry-After). Alert (info): CrawlflowPolitenessWaitsHigh above 2s.',
      [[`task_queue:crawler_politeness_wait_seconds:mean_rate10m{${TQ}}`, '{{task_queue}}']],
      { unit: 's' },
    ),
    panel(
      'Workflow slots and sticky cache',
      'Workflow task slots in use and crawlSession workflows cached per worker.',
      [
        [`temporal_worker_task_slots_used{worker_type="WorkflowWorker",${TQ},${W}}`, 'workflow slots used {{instance}}'],
        [`temporal_sticky_cache_size{${TQ},${W}}`, 'sticky cache {{instance}}'],
      ],
      { unit: 'none', links: [LINK_TQ] },
    ),
    workersTable,
  ]),
);

// ---------------------------------------------------------------- per worker
panels.push(row('Worker $worker', 'worker'));
panels.push(
  ...place(
    [
      panel('Pages/s', 'URLs this worker processed per second, by outcome.', [[`sum by (instance, outcome) (rate(crawler_pages_total{${W}}[${RI}]))`, '{{outcome}}']], {
        unit: 'ops',
        w: 6,
        links: [LINK_RUNNING, LINK_TQ],
      }),
      panel(
        'Fetch latency p95',
        "This worker's page fetch p95.",
        [[`histogram_quantile(0.95, sum by (instance, le) (rate(crawler_task_duration_seconds_bucket{type="fetch",${W}}[${RI}])))`, 'p95']],
        { unit: 's', w: 6, links: [LINK_RUNNING, LINK_TQ] },
      ),
      panel(
        'Activity execution p95',
        "Temporal SDK: how long this worker's activities run, by activity type.",
        [[`histogram_quantile(0.95, sum by (instance, activity_type, le) (rate(temporal_activity_execution_latency_bucket{${W}}[${RI}])))`, '{{activity_type}}']],
        { unit: 's', w: 6, links: [LINK_RUNNING, LINK_TQ] },
      ),
      panel(
        'Temporal requests/s and failures/s',
        'Temporal SDK client RPCs from this worker; failures are empty while none fail.',
        [
          [`sum by (instance, operation) (rate(temporal_request{${W}}[${RI}]))`, '{{operation}}'],
          [`sum by (instance, operation) (rate(temporal_request_failure{${W}}[${RI}]))`, 'failed {{operation}}'],
        ],
        { unit: 'ops', w: 6, links: [LINK_TQ] },
      ),
      panel('CPU', 'Process CPU seconds per second.', [[`rate(process_cpu_seconds_total{job="crawlflow-workers",${W}}[${RI}])`, 'cpu']], {
        unit: 'percentunit',
        w: 6,
        links: [],
      }),
      panel(
        'Memory',
        'Resident set size and V8 heap used.',
        [
          [`process_resident_memory_bytes{job="crawlflow-workers",${W}}`, 'rss'],
          [`nodejs_heap_size_used_bytes{job="crawlflow-workers",${W}}`, 'heap used'],
        ],
        { unit: 'bytes', w: 6, links: [] },
      ),
      panel(
        'Event loop lag p99',
        'Node.js event loop lag: a busy loop delays heartbeats and every batch on the worker.',
        [[`nodejs_eventloop_lag_p99_seconds{job="crawlflow-workers",${W}}`, 'p99']],
        { unit: 's', w: 6, links: [] },
      ),
      panel(
        'Up and restarts',
        '1 while Prometheus can scrape this worker; process start time changes on a restart.',
        [
          [`up{job="crawlflow-workers",${W}}`, 'up'],
          [`changes(process_start_time_seconds{job="crawlflow-workers",${W}}[15m])`, 'restarts in 15m'],
        ],
        { unit: 'none', w: 6, links: [] },
      ),
    ],
    7,
  ),
);

function queryVariable(name, label, query) {
  return {
    type: 'query',
    name,
    label,
    datasource: DS,
    definition: query,
    query,
    refresh: 2,
    sort: 1,
    multi: true,
    includeAll: true,
    allValue: '.+',
    current: { selected: true, text: ['All'], value: ['$__all'] },
    options: [],
    hide: 0,
    regex: '',
    skipUrlSync: false,
  };
}

function textbox(name, label, value, description) {
  return {
    type: 'textbox',
    name,
    label,
    description,
    query: value,
    current: { selected: false, text: value, value },
    options: [{ selected: true, text: value, value }],
    hide: 0,
    skipUrlSync: false,
  };
}

const dashboard = {
  __inputs: [
    {
      name: 'DS_PROMETHEUS',
      label: 'Prometheus',
      description: 'The Prometheus that scrapes the crawlflow workers (ops/prometheus/prometheus.yml)',
      type: 'datasource',
      pluginId: 'prometheus',
      pluginName: 'Prometheus',
    },
  ],
  __elements: {},
  __requires: [
    { type: 'grafana', id: 'grafana', name: 'Grafana', version: '10.4.0' },
    { type: 'datasource', id: 'prometheus', name: 'Prometheus', version: '1.0.0' },
    { type: 'panel', id: 'timeseries', name: 'Time series', version: '' },
    { type: 'panel', id: 'table', name: 'Table', version: '' },
  ],
  annotations: {
    list: [
      {
        builtIn: 1,
        datasource: { type: 'grafana', uid: '-- Grafana --' },
        enable: true,
        hide: true,
        iconColor: 'rgba(0, 211, 255, 1)',
        name: 'Annotations & Alerts',
        type: 'dashboard',
      },
      {
        name: 'crawlflow alerts firing',
        datasource: DS,
        enable: true,
        iconColor: 'red',
        expr: 'ALERTS{service="crawlflow",alertstate="firing",task_queue=~"$task_queue"}',
        step: '60s',
        titleFormat: '{{alertname}} ({{severity}})',
        textFormat: '{{task_queue}} {{instance}}',
        useValueForTime: false,
      },
      {
        name: 'worker restarts',
        datasource: DS,
        enable: true,
        iconColor: 'orange',
        expr: 'changes(process_start_time_seconds{job="crawlflow-workers",task_queue=~"$task_queue"}[2m]) > 0',
        step: '60s',
        titleFormat: 'worker restarted',
        textFormat: '{{instance}}',
        useValueForTime: false,
      },
    ],
  },
  description: 'crawlflow: crawl SLOs, throughput, errors, worker capacity and per-worker drill-down. Panels and alerts are described in ops/README.md.',
  editable: true,
  fiscalYearStartMonth: 0,
  graphTooltip: 1,
  id: null,
  links: [
    {
      title: 'Temporal Web UI: crawls',
      type: 'link',
      icon: 'external link',
      targetBlank: true,
      tooltip: 'Workflows of the selected namespace',
      url: '${temporal_ui}/namespaces/${namespace}/workflows',
      asDropdown: false,
      includeVars: false,
      keepTime: false,
      tags: [],
    },
  ],
  panels,
  refresh: '30s',
  schemaVersion: 39,
  tags: ['crawlflow', 'temporal'],
  templating: {
    list: [
      queryVariable('task_queue', 'Task queue', 'label_values(up{job="crawlflow-workers"}, task_queue)'),
      queryVariable('worker', 'Worker (instance)', 'label_values(up{job="crawlflow-workers",task_queue=~"$task_queue"}, instance)'),
      textbox('namespace', 'Temporal namespace', 'default', 'Namespace of the crawls, used in links to the Temporal Web UI'),
      textbox(
        'temporal_ui',
        'Temporal Web UI',
        'http://localhost:8233',
        'Base URL of the Temporal Web UI (the dev server serves it on :8233); data links open crawls and task queues there',
      ),
    ],
  },
  time: { from: 'now-1h', to: 'now' },
  timepicker: {},
  timezone: '',
  title: 'crawlflow',
  uid: 'crawlflow',
  version: 1,
  weekStart: '',
};

const json = `${JSON.stringify(dashboard, null, 2)}\n`;
if (process.argv.includes('--check')) {
  if (readFileSync(OUTPUT, 'utf8') !== json) {
    console.error(`${OUTPUT} is out of date: run node ops/grafana/crawlflow-dashboard.mjs`);
    process.exit(1);
  }
} else {
  writeFileSync(OUTPUT, json);
}
