/**
 * One crawl, one trace: the CLI's span travels through Temporal headers, so the CLI's own
 * log lines, the workflow's and the activities' all carry the same trace_id (with their
 * own span_ids), alongside crawl ID, run ID and activity ID.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { freeServerPort } from '../src/workers/runtime';
import { runCli } from './helpers/processes';

interface LogLine {
  msg: string;
  trace_id?: string;
  span_id?: string;
  sdkComponent?: string;
  workflowId?: string;
  runId?: string;
  workflowRunId?: string;
  activityId?: string;
  crawlId?: string;
  taskToken?: string;
}

describe('trace-linked JSON logs', () => {
  let site: SyntheticSite;
  let dataDir: string;
  before(async () => {
    site = await startSyntheticSite({ pages: 60 });
    dataDir = mkdtempSync(join(tmpdir(), 'crawlflow-trace-'));
  });
  after(async () => {
    await site?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('CLI, workflow and activity lines of one crawl share one trace_id', async () => {
    const result = await runCli(['crawl', site.urlOf(0), '--id', 'traced-crawl', '--out', join(dataDir, 'out.jsonl'), '--json'], {
      TEMPORAL_ADDRESS: '',
      CRAWLFLOW_DATA_DIR: dataDir,
      CRAWLFLOW_LOG_LEVEL: 'info',
      CRAWLFLOW_DEV_SERVER_PORT: String(await freeServerPort()),
      CRAWLFLOW_DEV_SERVER_UI_PORT: String(await freeServerPort()),
    });
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine);

    const cli = lines.find((line) => line.msg === 'crawl started' && line.sdkComponent === undefined);
    assert.ok(cli?.trace_id, 'the CLI line carries a trace_id');
    const workflow = lines.filter((line) => line.sdkComponent === 'workflow' && line.workflowId === 'traced-crawl');
    const activities = lines.filter((line) => line.sdkComponent === 'activity' && line.msg === 'batch finished');
    assert.ok(workflow.some((line) => line.msg === 'crawl finished'), 'workflow lines are logged');
    assert.ok(activities.length > 0, 'activity lines are logged');

    for (const line of [...workflow, ...activities]) {
      assert.equal(line.trace_id, cli.trace_id, `${line.sdkComponent} line "${line.msg}" is in the crawl's trace`);
      assert.ok(line.span_id && line.span_id !== cli.span_id, 'each with a span of its own');
      assert.ok(line.runId ?? line.workflowRunId, `with the run ID: ${JSON.stringify(line)}`);
    }
    assert.ok(activities.every((line) => line.activityId && line.workflowId === 'traced-crawl'), 'activity lines name the crawl and the activity');
    // A task token completes or fails its activity for whoever holds it: log collectors must not.
    assert.deepEqual([...new Set(lines.flatMap((line) => (line.taskToken === undefined ? [] : [line.taskToken])))], ['[redacted]'], 'activity lines carry no task token');
  });
});
