/**
 * Records histories of crawls run by an earlier build of the workflow, for the replay test:
 * the last 0.2.0 on main added the sitemap (`crawl-sitemaps`) and render-queue (`render-queue`)
 * patches after the 0.2.0 fixtures were recorded, so its own worker and render worker run a
 * crawl of each kind here and their histories are kept in test/fixtures/histories.
 *
 *   npm run build && node dist/test/tools/record-release-histories.js
 *
 * Files already there are kept: a recorded history is never remade.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startCrawl } from '../../src/client/crawl-client';
import { projectRoot } from '../../src/temporal/project-paths';
import { DISCOVERY_SETTINGS, startDiscoverySite } from '../helpers/discovery-site';
import { historiesOf, writeHistoryFile } from '../helpers/histories';
import { RENDER_MATCH, startJsSite } from '../helpers/js-site';
import { spawnWorker, type WorkerProcess } from '../helpers/processes';
import { commitBuild, FINAL_0_2_0 } from '../helpers/releases';
import { startTestTemporal, uniqueQueue } from '../helpers/temporal';

const outDir = join(projectRoot, 'test', 'fixtures', 'histories');

async function main(): Promise<void> {
  const release = commitBuild(FINAL_0_2_0);
  const env = await startTestTemporal();
  const queue = uniqueQueue('release-record');
  const renderQueue = uniqueQueue('release-render');
  const logFile = join(env.dataDir, 'release-workers.log');
  const workers: WorkerProcess[] = [
    spawnWorker({ cli: release.cli, address: env.address, taskQueue: queue, dataDir: env.dataDir, logFile }),
    spawnWorker({ cli: release.cli, command: 'render-worker', address: env.address, taskQueue: renderQueue, dataDir: env.dataDir, logFile }),
  ];
  const discovery = await startDiscoverySite();
  const js = await startJsSite();
  try {
    for (const worker of workers) await worker.ready;
    const scenarios: Array<[string, Record<string, unknown>]> = [
      ['sitemaps', { seeds: [discovery.urlOf(0)], ...DISCOVERY_SETTINGS, batchSize: 10 }],
      ['render', { seeds: [`${js.origin}/`], batchSize: 2, render: { match: [RENDER_MATCH], taskQueue: renderQueue, maxConcurrentPages: 1 } }],
    ];
    for (const [name, input] of scenarios) {
      const file = join(outDir, `v0.2.0-${name}.json`);
      if (existsSync(file)) continue;
      const crawlId = `release-${name}`;
      await (await startCrawl(env.client, crawlId, input as never, queue)).result();
      const [{ history }] = await historiesOf(env.client, crawlId);
      writeHistoryFile(file, history);
    }
  } finally {
    for (const worker of workers) await worker.kill('SIGTERM');
    await discovery.close();
    await js.close();
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
