/**
 * A crawl partitioned into shard workflows by politeness-key hash (`shards`), through real
 * crawls on a Temporal dev server: many small loopback hosts linked to one another, seeded on
 * every tenth, so most keys are first found by batches of other shards. Every page is
 * fetched and recorded exactly once, the summary's totals are the crawl's, and each key's
 * URLs are claimed only by batches of the shard its hash names.
 *
 * On SQLite with an in-process worker (4 shards, 50 hosts), and on PostgreSQL with two
 * worker processes that share nothing but the database (4 shards, 1,000 hosts). No host ever
 * has two requests in flight, whether a batch was sent to it or the store handed it out.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { startCrawl } from '../src/client/crawl-client';
import { withCrawlStore } from '../src/results/export-jsonl';
import { progressQuery, stopUpdate } from '../src/shared/messages';
import { startSyntheticSite } from '../src/sites/synthetic-site';
import type { CrawlSummary } from '../src/shared/crawl-types';
import { shardOf, shardWorkflowId } from '../src/scheduling/shards';
import { linkedHostsCrawl, startLinkedHosts, type LinkedHosts } from '../src/sites/linked-hosts';
import { forgetWorkflow, readCrawlEnd, readRecords, startTestTemporal, uniqueQueue, type StoreKind, type TestTemporal } from './helpers/temporal';
import { runCli, spawnWorker, type WorkerProcess } from './helpers/processes';
import { waitFor } from './helpers/fixtures';
import { claimsOf } from './helpers/store-claims';

const SHARDS = 4;

interface Scenario {
  store: StoreKind;
  hosts: number;
  pagesPerHost: number;
  /** Worker processes; 0: one worker in the test's process. */
  processes: number;
}

const SCENARIOS: Scenario[] = [
  { store: 'sqlite', hosts: 50, pagesPerHost: 4, processes: 0 },
  { store: 'postgres', hosts: 1_000, pagesPerHost: 0, processes: 2 },
];

/** The shard of each run of the crawl's shard workflows, by run ID (batch IDs carry their run's). */
async function shardOfRuns(env: TestTemporal, crawlId: string): Promise<Map<string, number>> {
  const runs = new Map<string, number>();
  for (let shard = 0; shard < SHARDS; shard += 1) {
    for await (const execution of env.client.workflow.list({ query: `WorkflowId = '${shardWorkflowId(crawlId, shard)}'` })) runs.set(execution.runId, shard);
  }
  return runs;
}

/** The processes (pids) that logged a finished batch of the crawl. */
function batchRunners(logFile: string, crawlId: string): Set<number> {
  const lines = readFileSync(logFile, 'utf8').split('\n').filter((line) => line.includes('"batch finished"') && line.includes(`"${crawlId}/`));
  return new Set(lines.map((line) => (JSON.parse(line) as { pid: number }).pid));
}

for (const scenario of SCENARIOS) {
  const { store, hosts, pagesPerHost, processes } = scenario;
  const workersName = processes === 0 ? 'one in-process worker' : `${processes} worker processes`;
  describe(`a crawl in ${SHARDS} shards: ${hosts} hosts, ${store} store, ${workersName}`, () => {
    let env: TestTemporal;
    let site: LinkedHosts;
    const workers: WorkerProcess[] = [];
    const taskQueue = uniqueQueue('shards');

    before(async () => {
      env = await startTestTemporal({ store });
      site = await startLinkedHosts(hosts, pagesPerHost);
      if (processes === 0) await env.startWorker(taskQueue);
      for (let n = 0; n < processes; n += 1) {
        workers.push(spawnWorker({ address: env.address, taskQueue, dataDir: env.workerDataDir(), storeUrl: env.store.storeUrl, logFile: join(env.dataDir, 'workers.log') }));
      }
      await Promise.all(workers.map((worker) => worker.ready));
    });
    after(async () => {
      for (const worker of workers) await worker.kill('SIGKILL');
      await site?.close();
      await env?.close();
    });

    const crawlId = `shards-${store}-${process.pid}`;

    it('fetches every page exactly once, sums the totals, and claims each key only in its own shard', async () => {
      const handle = await startCrawl(env.client, crawlId, linkedHostsCrawl(site, SHARDS), taskQueue);
      const summary: CrawlSummary = await handle.result();

      const records = await readRecords(env.store, crawlId);
      assert.deepEqual(records.map((record) => record.url).sort(), [...site.pages].sort(), 'every page recorded once');
      const refetched = [...site.requests].filter(([, n]) => n !== 1);
      assert.deepEqual(refetched, [], 'every page fetched once');
      assert.equal(summary.status, 'completed');
      assert.deepEqual(await readCrawlEnd(env.store, crawlId), { status: 'completed', failure: null }, 'the crawl recorded its end once every shard had ended');
      assert.equal(summary.totals.processed, site.pages.length);
      assert.equal(summary.totals.fetched, site.pages.length);
      assert.equal(summary.totals.queued, 0);

      const runs = await shardOfRuns(env, crawlId);
      const claims = await claimsOf(env, crawlId);
      // A URL no batch claimed has no shard either: it is listed too.
      const misplaced = claims.filter(({ host, batchId }) => (batchId === null ? undefined : runs.get(batchId.split('/').at(-2)!)) !== shardOf(host, SHARDS));
      assert.deepEqual(misplaced, [], "every URL claimed by a batch of its key's shard");
      const used = new Set(claims.map(({ host }) => shardOf(host, SHARDS)));
      assert.equal(used.size, SHARDS, 'every shard had keys of its own');
      if (processes > 0) assert.equal(batchRunners(join(env.dataDir, 'workers.log'), crawlId).size, processes, 'every worker process ran batches');

      const crowded = [...site.maxInFlight].filter(([, n]) => n > 1);
      assert.deepEqual(crowded, [], 'no host had two requests in flight (perHostConcurrency 1), whoever chose it');
    });

    if (store === 'postgres') {
      it('once the Temporal server no longer keeps the crawl, `crawlflow status --store` reads its end and counts from PostgreSQL', async () => {
        const { end, totals } = await withCrawlStore(env.store, crawlId, async (crawl) => ({ end: await crawl.crawlEnd(), totals: await crawl.totals() }));
        assert.equal(end?.status, 'completed', 'the crawl of the test before has ended');
        // As the namespace's retention does once the crawl has been closed that long.
        await forgetWorkflow(env, crawlId);
        const cliEnv = { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_DATA_DIR: env.dataDir };

        const status = await runCli(['status', crawlId, '--store', env.store.storeUrl!], cliEnv);
        assert.equal(status.code, 0, status.stderr);
        assert.equal(
          status.stdout,
          [
            `crawl ${crawlId}: completed (from its store: the Temporal server no longer keeps its history)`,
            `  ${totals.processed} URLs (${totals.fetched} fetched, 0 errors, 0 skipped)`,
            `  0 left in the frontier, ${totals.discovered} discovered`,
            `  ended ${end?.endedAt}`,
            '',
          ].join('\n'),
        );
        // Without --store, status looks in the SQLite files under the data dir, where the crawl is not.
        const elsewhere = await runCli(['status', crawlId], cliEnv);
        assert.deepEqual([elsewhere.code, elsewhere.stdout, elsewhere.stderr], [1, '', `crawlflow: no crawl "${crawlId}" on the Temporal server or in the store\n`]);
      });
    }

    if (processes === 0) {
      it('refuses stop with a clear error, exit 1 through the CLI; cancelling the crawl cancels every shard and gives their claims back', async () => {
        const slow = await startSyntheticSite({ pages: 2_000, latencyMs: 20 });
        try {
          const crawlId = `shards-cancel-${store}-${process.pid}`;
          const handle = await startCrawl(env.client, crawlId, { seeds: [slow.urlOf(0)], shards: SHARDS, concurrency: 8, perHostConcurrency: 4, batchSize: 5 }, taskQueue);
          // The crawl's own progress reads the store every 10 s; its shards' is their schedulers'.
          const shardProgress = (shard: number) => env.client.workflow.getHandle(shardWorkflowId(crawlId, shard)).query(progressQuery).then((progress) => progress.processed, () => 0);
          await waitFor(async () => (await Promise.all(Array.from({ length: SHARDS }, (_, shard) => shardProgress(shard)))).some((n) => n > 0), 30_000, 'pages processed');
          await assert.rejects(handle.executeUpdate(stopUpdate), (err: Error) => /stop is not supported on a sharded crawl/.test(String((err.cause as Error | undefined)?.message)));
          // Through the CLI: a valid request the crawl will not do is no usage error (exit 2), but the crawl's answer.
          const stopped = await runCli(['stop', crawlId], { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_TASK_QUEUE: taskQueue });
          assert.deepEqual(
            { code: stopped.code, stderr: stopped.stderr },
            { code: 1, stderr: 'crawlflow: stop is not supported on a sharded crawl (shards > 1): each shard has its own budget and limits; cancel the crawl instead\n' },
          );
          await handle.cancel();
          await assert.rejects(handle.result(), (err: Error) => err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure);
          for (let shard = 0; shard < SHARDS; shard += 1) {
            const { status } = await env.client.workflow.getHandle(shardWorkflowId(crawlId, shard)).describe();
            assert.equal(status.name, 'CANCELLED', `shard ${shard}`);
          }
          const totals = await withCrawlStore(env.store, crawlId, (crawl) => crawl.totals());
          assert.equal(totals.discovered, totals.processed + totals.queued, 'no URL left claimed');
          assert.deepEqual(await readCrawlEnd(env.store, crawlId), { status: 'cancelled', failure: null });
        } finally {
          await slow.close();
        }
      });
    }
  });
}
