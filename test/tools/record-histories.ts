/**
 * Records workflow histories of this release into test/fixtures/histories, for the replay
 * test that keeps later workflow changes compatible with crawls already running.
 * Run with `npm run record-histories` when the workflow changes shape on purpose (and keep
 * the old files: crawls started by the previous release must still replay);
 * `npm run record-histories -- seeds-file` records only the scenarios named.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCrawl } from '../../src/client/crawl-client';
import { addSeedsUpdate, pauseSignal, resumeSignal, setLimitsUpdate, stopUpdate } from '../../src/shared/messages';
import { startSyntheticSite } from '../../src/sites/synthetic-site';
import { projectRoot } from '../../src/temporal/project-paths';
import { historiesOf, writeHistoryFile } from '../helpers/histories';
import { startTestTemporal, uniqueQueue } from '../helpers/temporal';

const { version } = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string };
const outDir = join(projectRoot, 'test', 'fixtures', 'histories');

async function main(): Promise<void> {
  const env = await startTestTemporal({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 150 } });
  const queue = uniqueQueue('record');
  await env.startWorker(queue);
  const site = await startSyntheticSite({ pages: 300, latencyMs: 5 });
  const seeds = [site.urlOf(0)];
  try {
    const scenarios: Array<[string, () => Promise<string>]> = [
      ['completed', async () => {
        await (await startCrawl(env.client, 'rec-completed', { seeds, batchSize: 20, perHostConcurrency: 4 }, queue)).result();
        return 'rec-completed';
      }],
      ['continued-as-new', async () => {
        await (await startCrawl(env.client, 'rec-can', { seeds, batchSize: 2, perHostConcurrency: 4 }, queue)).result();
        return 'rec-can';
      }],
      ['paused-resumed-max-pages', async () => {
        const handle = await startCrawl(env.client, 'rec-pause', { seeds, batchSize: 5, maxPages: 60 }, queue);
        await handle.signal(pauseSignal);
        await new Promise((resolve) => setTimeout(resolve, 500));
        await handle.signal(resumeSignal);
        await handle.result();
        return 'rec-pause';
      }],
      ['deadline', async () => {
        await (await startCrawl(env.client, 'rec-deadline', { seeds, batchSize: 5, deadline: '700ms' }, queue)).result();
        return 'rec-deadline';
      }],
      ['updated-then-stopped', async () => {
        const handle = await startCrawl(env.client, 'rec-updates', { seeds, batchSize: 5, perHostConcurrency: 1 }, queue);
        await handle.executeUpdate(setLimitsUpdate, { args: [{ perHostConcurrency: 3, delayMs: 1 }] });
        await handle.executeUpdate(addSeedsUpdate, { args: [[site.urlOf(299)]] });
        await new Promise((resolve) => setTimeout(resolve, 300));
        await handle.executeUpdate(stopUpdate);
        await handle.result();
        return 'rec-updates';
      }],
      ['failed-batches', async () => {
        // A host override names a variable no worker has: that host's batches fail for good.
        const other = await startSyntheticSite({ pages: 10 });
        try {
          const hosts = { [new URL(other.origin).host]: { headersFromEnv: { 'X-Token': 'CRAWLFLOW_RECORDING_UNSET' } } };
          await (await startCrawl(env.client, 'rec-failed', { seeds: [...seeds, other.urlOf(0)], batchSize: 20, hosts }, queue)).result();
        } finally {
          await other.close();
        }
        return 'rec-failed';
      }],
      ['seeds-file', async () => {
        const seedsFile = join(tmpdir(), `crawlflow-record-seeds-${process.pid}.txt`);
        writeFileSync(seedsFile, `# recorded\n${Array.from({ length: 40 }, (_, n) => site.urlOf(n)).join('\n')}\n`);
        try {
          await (await startCrawl(env.client, 'rec-seeds-file', { seedsFile, batchSize: 10, maxDepth: 0 }, queue)).result();
        } finally {
          rmSync(seedsFile, { force: true });
        }
        return 'rec-seeds-file';
      }],
      ['cancelled', async () => {
        const handle = await startCrawl(env.client, 'rec-cancel', { seeds, batchSize: 5 }, queue);
        await new Promise((resolve) => setTimeout(resolve, 700));
        await handle.cancel();
        await handle.result().catch(() => undefined);
        return 'rec-cancel';
      }],
    ];
    // Scenario names on the command line record only those (new ones, without rewriting the rest).
    const only = process.argv.slice(2);
    for (const [name, run] of scenarios.filter(([scenario]) => only.length === 0 || only.includes(scenario))) {
      const workflowId = await run();
      const runs = await historiesOf(env.client, workflowId);
      runs.forEach(({ history }, index) => {
        const file = join(outDir, `v${version}-${name}${runs.length > 1 ? `-run${runs.length - index}` : ''}.json`);
        writeHistoryFile(file, history);
      });
    }
  } finally {
    await site.close();
    await env.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
