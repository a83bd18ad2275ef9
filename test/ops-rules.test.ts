/**
 * The ops/ configuration is valid for the real tools, and behaves: promtool checks the rules
 * and the Prometheus config and runs the rule unit tests (every alert fires on a bad series
 * and stays quiet on a healthy one); amtool checks the Alertmanager config and its routing;
 * a real Alertmanager applies the inhibition rules and the maintenance silence that
 * ops/README.md documents.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { dashboardExpressions, findBinary, formatRun, OPS_DIR, opsFiles, run, startAlertmanager, type LoopbackServer } from './helpers/prometheus';

const ruleFiles = opsFiles('prometheus/rules');
const ruleTestFiles = opsFiles('prometheus/tests');
const alertmanagerConfig = join(OPS_DIR, 'alertmanager', 'alertmanager.yml');

/** Alert names in the rule files (`- alert: Name` lines; a name may appear once per tier). */
function alertNames(): string[] {
  const names = new Set<string>();
  for (const file of ruleFiles) {
    for (const match of readFileSync(file, 'utf8').matchAll(/^\s*- alert:\s*(\S+)\s*$/gm)) names.add(match[1]);
  }
  return [...names].sort();
}

/** A metric an expression reads: its name, a histogram's without `_bucket`/`_count`/`_sum`. */
const METRIC = /\b(?:crawler_\w+|temporal_\w+|worker_queue_length|process_\w+|nodejs_\w+|up)\b(?=\s*[{[)])|\b[a-z_]+:[a-z0-9_:]+\b/g;

/**
 * The raw metrics `expr` reads, recording rules (`level:metric:operation` names) replaced by
 * what their own expressions read.
 */
function metricsRead(expr: string, recordings: ReadonlyMap<string, string>): Set<string> {
  const read = new Set<string>();
  for (const [name] of expr.matchAll(METRIC)) {
    const recorded = recordings.get(name);
    if (recorded !== undefined) for (const inner of metricsRead(recorded, recordings)) read.add(inner);
    else if (!name.includes(':')) read.add(name.replace(/_(bucket|count|sum)$/, ''));
  }
  return read;
}

/** Each rule of the rule files: `record` or `alert`, its name, and its expression. */
function rules(): { kind: 'record' | 'alert'; name: string; expr: string }[] {
  return ruleFiles.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split(/^\s*- (?=alert:|record:)/m)
      .flatMap((block) => {
        const head = /^(record|alert):\s*(\S+)\s*\n\s*expr:([\s\S]*?)(?=^\s*(?:for|labels):|$(?![\s\S]))/m.exec(block);
        return head ? [{ kind: head[1] as 'record' | 'alert', name: head[2], expr: head[3] }] : [];
      }),
  );
}

/**
 * For each alert name, whether the promtool tests expect it firing (a non-empty exp_alerts)
 * and quiet (`exp_alerts: []`) somewhere. Reads the two layouts used in ops/prometheus/tests:
 * block style (`alertname:` line, then `exp_alerts:` line) and flow style on one line.
 */
function alertExpectations(): Map<string, { fires: boolean; quiet: boolean }> {
  const seen = new Map<string, { fires: boolean; quiet: boolean }>();
  const mark = (name: string, quiet: boolean): void => {
    const entry = seen.get(name) ?? { fires: false, quiet: false };
    if (quiet) entry.quiet = true;
    else entry.fires = true;
    seen.set(name, entry);
  };
  for (const file of ruleTestFiles) {
    let current: string | undefined;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const flow = /alertname:\s*(\w+),\s*exp_alerts:\s*(\[\s*\])?/.exec(line);
      if (flow) {
        mark(flow[1], flow[2] !== undefined);
        continue;
      }
      const name = /^\s*alertname:\s*(\w+)/.exec(line);
      if (name) current = name[1];
      const expected = /^\s*exp_alerts:\s*(\[\s*\])?\s*(#.*)?$/.exec(line);
      if (expected && current) {
        mark(current, expected[1] !== undefined);
        current = undefined;
      }
    }
  }
  return seen;
}

describe('ops: Prometheus rules and config, Alertmanager config', () => {
  it('promtool check rules: every rule file is valid', async () => {
    assert.ok(ruleFiles.length >= 2, `rule files in ops/prometheus/rules: ${ruleFiles.join(', ')}`);
    const result = await run(findBinary('promtool'), ['check', 'rules', ...ruleFiles]);
    assert.equal(result.code, 0, formatRun('promtool check rules', result));
  });

  it('promtool check config: ops/prometheus/prometheus.yml (with its rule files and file_sd targets)', async () => {
    const result = await run(findBinary('promtool'), ['check', 'config', join(OPS_DIR, 'prometheus', 'prometheus.yml')]);
    assert.equal(result.code, 0, formatRun('promtool check config', result));
    assert.match(result.stdout + result.stderr, new RegExp(`SUCCESS: ${ruleFiles.length} rule files found`));
  });

  it('promtool test rules: the unit tests pass', async () => {
    assert.ok(ruleTestFiles.length >= 1);
    const result = await run(findBinary('promtool'), ['test', 'rules', ...ruleTestFiles]);
    assert.equal(result.code, 0, formatRun('promtool test rules', result));
    assert.doesNotMatch(result.stdout + result.stderr, /FAILED/);
  });

  it('every alert has a promtool test where it fires and one where it stays quiet', () => {
    const names = alertNames();
    assert.ok(names.length >= 10, `alerts: ${names.join(', ')}`);
    const expectations = alertExpectations();
    const missing = names.flatMap((name) => {
      const entry = expectations.get(name);
      return [...(entry?.fires ? [] : [`${name} never expected firing`]), ...(entry?.quiet ? [] : [`${name} never expected quiet`])];
    });
    assert.deepEqual(missing, []);
    const unknown = [...expectations.keys()].filter((name) => !names.includes(name));
    assert.deepEqual(unknown, [], 'tests name alerts that do not exist');
  });

  it('every alert carries severity, team, service and runbook/summary/description', () => {
    const readme = readFileSync(join(OPS_DIR, 'README.md'), 'utf8');
    const anchors = readme
      .split('\n')
      .filter((line) => /^#{2,4} /.test(line))
      .map((line) => line.replace(/^#+ /, '').toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-'));
    for (const file of ruleFiles) {
      const text = readFileSync(file, 'utf8');
      const blocks = text.split(/^\s*- (?=alert:|record:)/m).filter((block) => block.startsWith('alert:'));
      for (const block of blocks) {
        const name = /^alert:\s*(\S+)/.exec(block)?.[1];
        for (const key of ['severity: (critical|warning|info)', 'team: \\S+', 'service: crawlflow', 'summary: ', 'description: ', 'runbook: ']) {
          assert.match(block, new RegExp(key, 'm'), `${name} in ${file}: ${key}`);
        }
        const runbook = /runbook: '([^']+)'/.exec(block)?.[1] ?? '';
        const anchor = runbook.split('#')[1] ?? '';
        assert.ok(anchors.includes(anchor), `${name}: ops/README.md has a heading for #${anchor}`);
      }
    }
  });

  it('amtool check-config: ops/alertmanager/alertmanager.yml', async () => {
    const result = await run(findBinary('amtool'), ['check-config', alertmanagerConfig]);
    assert.equal(result.code, 0, formatRun('amtool check-config', result));
    assert.match(result.stdout, /SUCCESS/);
  });

  it('amtool config routes test: severity decides the receiver', async () => {
    const cases: [string[], string][] = [
      [['service=crawlflow', 'severity=critical', 'alertname=CrawlflowNoPagesFetched', 'task_queue=crawlflow'], 'oncall'],
      [['service=crawlflow', 'severity=warning', 'alertname=CrawlflowWorkerDown', 'task_queue=crawlflow'], 'crawl-team'],
      [['service=crawlflow', 'severity=info', 'alertname=CrawlflowHostDeferralsHigh', 'task_queue=crawlflow'], 'null'],
      [['service=other', 'severity=critical'], 'null'],
    ];
    for (const [labels, receiver] of cases) {
      const result = await run(findBinary('amtool'), ['config', 'routes', 'test', `--config.file=${alertmanagerConfig}`, `--verify.receivers=${receiver}`, ...labels]);
      assert.equal(result.code, 0, formatRun(`routes test ${labels.join(' ')} -> ${receiver}`, result));
      assert.equal(result.stdout.trim(), receiver);
    }
  });
});

interface GrafanaPanel {
  id: number;
  type: string;
  title: string;
  repeat?: string;
  datasource?: { uid?: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: { expr?: string; datasource?: { uid?: string } }[];
  fieldConfig?: { defaults?: { links?: { url: string }[] } };
}

describe('ops: the Grafana dashboard JSON', () => {
  const dashboard = JSON.parse(readFileSync(join(OPS_DIR, 'grafana', 'crawlflow-dashboard.json'), 'utf8')) as {
    uid: string;
    schemaVersion: number;
    __inputs: { name: string; pluginId: string }[];
    panels: GrafanaPanel[];
    templating: { list: { name: string; type: string; query?: string; datasource?: { uid?: string } }[] };
    links: { url: string }[];
  };
  const panels = dashboard.panels.filter((panel) => panel.type !== 'row');
  const rows = dashboard.panels.filter((panel) => panel.type === 'row');

  it('is what ops/grafana/crawlflow-dashboard.mjs generates', async () => {
    const result = await run(process.execPath, [join(OPS_DIR, 'grafana', 'crawlflow-dashboard.mjs'), '--check']);
    assert.equal(result.code, 0, formatRun('node ops/grafana/crawlflow-dashboard.mjs --check', result));
  });

  it('is an importable schema-39 dashboard with the Prometheus datasource as the DS_PROMETHEUS input', () => {
    assert.equal(dashboard.uid, 'crawlflow');
    assert.equal(dashboard.schemaVersion, 39);
    assert.deepEqual(dashboard.__inputs.map((input) => [input.name, input.pluginId]), [['DS_PROMETHEUS', 'prometheus']]);
    const ids = dashboard.panels.map((panel) => panel.id);
    assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
    for (const panel of panels) {
      assert.equal(panel.datasource?.uid, '${DS_PROMETHEUS}', `${panel.title}: datasource`);
      assert.ok(panel.targets?.length, `${panel.title}: has queries`);
      for (const target of panel.targets ?? []) {
        assert.equal(target.datasource?.uid, '${DS_PROMETHEUS}', `${panel.title}: target datasource`);
        assert.ok(target.expr?.trim(), `${panel.title}: every target has a PromQL expr`);
      }
      assert.ok(panel.gridPos.x + panel.gridPos.w <= 24, `${panel.title}: fits the grid`);
    }
  });

  it('has the SLO, throughput, errors, capacity and per-worker rows, and the variables', () => {
    assert.deepEqual(rows.map((row) => row.title), ['SLO', 'Throughput', 'Errors', 'Worker capacity', 'Worker $worker']);
    assert.equal(rows.at(-1)?.repeat, 'worker', 'the drill-down row repeats per selected worker');
    const variables = Object.fromEntries(dashboard.templating.list.map((variable) => [variable.name, variable]));
    assert.deepEqual(Object.keys(variables).sort(), ['namespace', 'task_queue', 'temporal_ui', 'worker']);
    assert.match(variables.worker.query ?? '', /label_values\(.*, instance\)/);
    assert.equal(variables.temporal_ui.type, 'textbox');
    assert.equal(variables.temporal_ui.query, 'http://localhost:8233');
  });

  it('shows on a panel every metric an alert reads, so the on-call sees what fired', () => {
    const all = rules();
    const recordings = new Map(all.filter((rule) => rule.kind === 'record').map((rule) => [rule.name, rule.expr]));
    const alerts = all.filter((rule) => rule.kind === 'alert');
    assert.ok(alerts.length >= 15 && recordings.size >= 15, `${alerts.length} alerts, ${recordings.size} recording rules`);
    const shown = new Set(dashboardExpressions(dashboard as Parameters<typeof dashboardExpressions>[0]).flatMap(({ expr }) => [...metricsRead(expr, recordings)]));
    const unseen = alerts.flatMap(({ name, expr }) => [...metricsRead(expr, recordings)].filter((metric) => !shown.has(metric)).map((metric) => `${name}: ${metric}`));
    assert.deepEqual([...new Set(unseen)], []);
  });

  it('links task-queue panels to the Temporal Web UI through the temporal_ui variable', () => {
    const links = [...dashboard.links.map((link) => link.url), ...panels.flatMap((panel) => panel.fieldConfig?.defaults?.links?.map((link) => link.url) ?? [])];
    assert.ok(links.length >= 20, `${links.length} links`);
    for (const url of links) assert.match(url, /^\$\{temporal_ui\}\/namespaces\/\$\{namespace\}\//);
    const linked = panels.filter((panel) => panel.fieldConfig?.defaults?.links?.length);
    const byQueue = panels.filter((panel) => panel.targets?.some((target) => target.expr?.includes('task_queue')));
    assert.deepEqual(
      byQueue.filter((panel) => !linked.includes(panel)).map((panel) => panel.title),
      [],
      'every panel with per-queue series has a data link',
    );
  });
});

interface AmAlert {
  labels: Record<string, string>;
  status: { state: string; inhibitedBy: string[]; silencedBy: string[] };
}

describe('ops: a real Alertmanager with ops/alertmanager/alertmanager.yml', () => {
  let am: LoopbackServer;
  before(async () => {
    am = await startAlertmanager(alertmanagerConfig);
  });
  after(async () => {
    await am?.close();
  });

  const base = { service: 'crawlflow', team: 'crawl-platform' };
  const post = async (alerts: Record<string, string>[]): Promise<void> => {
    const endsAt = new Date(Date.now() + 10 * 60_000).toISOString();
    const response = await request(`${am.url}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(alerts.map((labels) => ({ labels: { ...base, ...labels }, annotations: { summary: 'test' }, endsAt }))),
    });
    assert.equal(response.statusCode, 200, await response.body.text());
  };
  const alerts = async (): Promise<AmAlert[]> => {
    const response = await request(`${am.url}/api/v2/alerts?inhibited=true&silenced=true&active=true`);
    return (await response.body.json()) as AmAlert[];
  };
  const find = (list: AmAlert[], labels: Record<string, string>): AmAlert | undefined =>
    list.find((alert) => Object.entries(labels).every(([key, value]) => alert.labels[key] === value));
  const waitForState = async (labels: Record<string, string>, state: string): Promise<AmAlert> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const alert = find(await alerts(), labels);
      if (alert?.status.state === state || Date.now() > deadline) {
        assert.equal(alert?.status.state, state, `${JSON.stringify(labels)}: ${JSON.stringify(alert?.status)}`);
        return alert!;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  it('inhibits a warning by the critical tier of the same alert and queue, not on other queues', async () => {
    await post([
      { alertname: 'CrawlflowScheduleToStartHigh', severity: 'warning', task_queue: 'q1' },
      { alertname: 'CrawlflowScheduleToStartHigh', severity: 'critical', task_queue: 'q1' },
      { alertname: 'CrawlflowScheduleToStartHigh', severity: 'warning', task_queue: 'q2' },
    ]);
    await waitForState({ alertname: 'CrawlflowScheduleToStartHigh', severity: 'warning', task_queue: 'q1' }, 'suppressed');
    const list = await alerts();
    assert.equal(find(list, { alertname: 'CrawlflowScheduleToStartHigh', severity: 'critical', task_queue: 'q1' })?.status.state, 'active');
    assert.equal(find(list, { alertname: 'CrawlflowScheduleToStartHigh', severity: 'warning', task_queue: 'q2' })?.status.state, 'active');
  });

  it('CrawlflowAllWorkersDown silences the other alerts of its queue', async () => {
    await post([
      { alertname: 'CrawlflowAllWorkersDown', severity: 'critical', task_queue: 'q3' },
      { alertname: 'CrawlflowWorkerDown', severity: 'warning', task_queue: 'q3', instance: 'w1:9464' },
      { alertname: 'CrawlflowNoPagesFetched', severity: 'critical', task_queue: 'q3' },
    ]);
    await waitForState({ alertname: 'CrawlflowWorkerDown', task_queue: 'q3' }, 'suppressed');
    await waitForState({ alertname: 'CrawlflowNoPagesFetched', task_queue: 'q3' }, 'suppressed');
    await waitForState({ alertname: 'CrawlflowAllWorkersDown', task_queue: 'q3' }, 'active');
  });

  it('the maintenance silence from ops/README.md silences every alert of the queue', async () => {
    await post([{ alertname: 'CrawlflowFetchErrorRatioHigh', severity: 'warning', task_queue: 'maint' }]);
    await waitForState({ alertname: 'CrawlflowFetchErrorRatioHigh', task_queue: 'maint' }, 'active');
    // The command as documented in ops/README.md, with this Alertmanager's URL and queue.
    const readme = readFileSync(join(OPS_DIR, 'README.md'), 'utf8');
    const documented = /^amtool --alertmanager\.url=\S+ silence add .*$/m.exec(readme)?.[0];
    assert.ok(documented, 'ops/README.md documents `amtool --alertmanager.url=... silence add ...` on one line');
    // Split like a POSIX shell would (words, with '...' and "..." quoting inside them).
    const args = [...documented.matchAll(/(?:[^\s'"]+|'[^']*'|"[^"]*")+/g)]
      .map((match) => match[0].replace(/'([^']*)'|"([^"]*)"/g, '$1$2'))
      .slice(1)
      .map((arg) => arg.replace(/^--alertmanager\.url=.*/, `--alertmanager.url=${am.url}`).replace(/^task_queue=.*/, 'task_queue=maint'));
    const added = await run(findBinary('amtool'), args);
    assert.equal(added.code, 0, formatRun('amtool silence add', added));
    const silenceId = added.stdout.trim();
    assert.match(silenceId, /^[0-9a-f-]{36}$/);
    const silenced = await waitForState({ alertname: 'CrawlflowFetchErrorRatioHigh', task_queue: 'maint' }, 'suppressed');
    assert.deepEqual(silenced.status.silencedBy, [silenceId]);

    const expire = await run(findBinary('amtool'), [`--alertmanager.url=${am.url}`, 'silence', 'expire', silenceId]);
    assert.equal(expire.code, 0, formatRun('amtool silence expire', expire));
    await waitForState({ alertname: 'CrawlflowFetchErrorRatioHigh', task_queue: 'maint' }, 'active');
  });
});
