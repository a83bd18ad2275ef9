/**
 * Determinism and history size: recorded histories of released versions replay against
 * today's workflow code; a crawl long enough to be told to continue-as-new does so and
 * still fetches every page exactly once; its fresh histories replay too.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { startSyntheticSite } from '../src/sites/synthetic-site';
import { reachablePagePaths, requestedPagePaths, sortedPaths } from './helpers/fixtures';
import { projectRoot } from '../src/temporal/project-paths';
import { eventTimes, historiesOf } from './helpers/histories';
import { quietRuntime, runCrawlToEnd, startTestTemporal, uniqueQueue, type TestTemporal } from './helpers/temporal';

const workflowsPath = require.resolve('../src/workflows');
const fixturesDir = join(projectRoot, 'test', 'fixtures', 'histories');

interface RecordedHistory {
  events?: Array<{ startChildWorkflowExecutionInitiatedEventAttributes?: { workflowId?: string } }>;
}

/**
 * The workflow ID a history was recorded under, where the workflow's commands carry it: a
 * sharded crawl names its shards `<crawl ID>/shard-<n>`. Other histories replay under any ID.
 */
function recordedWorkflowId(history: RecordedHistory): string | undefined {
  const child = history.events?.find((event) => event.startChildWorkflowExecutionInitiatedEventAttributes)?.startChildWorkflowExecutionInitiatedEventAttributes;
  return child?.workflowId?.replace(/\/shard-\d+$/, '');
}

describe('workflow histories', () => {
  before(quietRuntime);

  it('every recorded history replays against the current workflow code', async () => {
    const files = readdirSync(fixturesDir).filter((file) => file.endsWith('.json'));
    assert.ok(files.length >= 5, 'recorded histories are present');
    const histories = files.map((file) => {
      const history = JSON.parse(readFileSync(join(fixturesDir, file), 'utf8')) as RecordedHistory;
      return { workflowId: recordedWorkflowId(history) ?? file, history, file };
    });
    for await (const result of Worker.runReplayHistories({ workflowsPath }, histories)) {
      const { file } = histories.find(({ workflowId }) => workflowId === result.workflowId)!;
      assert.equal(result.error, undefined, `${file} replays: ${String(result.error)}`);
    }
  });

  describe('continue-as-new', () => {
    let env: TestTemporal;
    const queue = uniqueQueue('can');
    before(async () => {
      // The server suggests continue-as-new at 4,096 events by default; 200 makes a 500-page crawl reach it.
      env = await startTestTemporal({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 200 } });
      await env.startWorker(queue);
    });
    after(async () => env?.close());

    it('a crawl continues-as-new with nothing lost or repeated, and its runs replay', async () => {
      const site = await startSyntheticSite({ pages: 500 });
      try {
        const { summary, records } = await runCrawlToEnd(env, queue, 'can-test', { seeds: [site.urlOf(0)], batchSize: 3, perHostConcurrency: 4 });
        const expected = site.graph.reachableFrom(0);
        assert.ok(summary.runs >= 3, `continued as new (${summary.runs} runs)`);
        assert.equal(summary.status, 'completed');
        assert.deepEqual(sortedPaths(records.map((record) => record.url)), reachablePagePaths(site), 'each page recorded once across runs');
        assert.deepEqual(requestedPagePaths(site), reachablePagePaths(site), 'each page requested once across runs');
        assert.equal(summary.totals.processed, expected.size, 'counters carried across runs');

        const runs = await historiesOf(env.client, 'can-test');
        assert.equal(runs.length, summary.runs);
        const events = runs.reduce((sum, run) => sum + (run.history.events?.length ?? 0), 0);
        assert.ok(runs.every((run) => (run.history.events?.length ?? 0) < 400), 'each run stays near the suggested size');
        const replays = Worker.runReplayHistories({ workflowsPath }, runs.map((run) => ({ workflowId: 'can-test', history: run.history })));
        for await (const result of replays) assert.equal(result.error, undefined, `run replays: ${String(result.error)}`);
        console.log(`continue-as-new: ${summary.runs} runs, ${events} events for ${expected.size} pages at batch size 3 (${(events / expected.size).toFixed(2)} events/page)`);
        // How long launching paused at each hand-over: from the handOver request to the next run's first batch.
        const chronological = [...runs].sort((a, b) => eventTimes(a.history, 'fetchBatch')[0] - eventTimes(b.history, 'fetchBatch')[0]);
        const pauses = chronological.slice(1).map((run, i) => eventTimes(run.history, 'fetchBatch')[0] - eventTimes(chronological[i].history, 'handOver')[0]);
        console.log(`continue-as-new: launching paused ${pauses.map((ms) => `${ms} ms`).join(', ')} at the hand-overs`);
      } finally {
        await site.close();
      }
    });
  });
});
