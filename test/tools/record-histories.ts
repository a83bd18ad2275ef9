/**
 * Records workflow histories of this release into test/fixtures/histories, for the replay
 * test that keeps later workflow changes compatible with crawls already running.
 * Run with `npm run record-histories` when the workflow changes shape on purpose (and keep
 * the old files: crawls started by the previous release must still replay); name scenarios
 * (`npm run record-histories -- sharded`) to record only those. A sharded crawl's shard
 * workflows are recorded next to it, as `<name>-shard-<n>`.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Client } from '@temporalio/client';
import { join } from 'node:path';
import { startCrawl } from '../../src/client/crawl-client';
import { addSeedsUpdate, pauseSignal, progressQuery, resumeSignal, setLimitsUpdate, stopUpdate } from '../../src/shared/messages';
import { startSyntheticSite, type SyntheticSite } from '../../src/sites/synthetic-site';
import { startLinkedHosts, type LinkedHosts } from '../../src/sites/linked-hosts';
import { shardWorkflowId } from '../../src/scheduling/shards';
import { projectRoot } from '../../src/temporal/project-paths';
import { waitFor } from '../helpers/fixtures';
import { historiesOf, writeHistoryFile } from '../helpers/histories';
import { page, startHeldWhileBusy, startRecordingSite } from '../helpers/recording-site';
import { startTestTemporal, uniqueQueue, type TestTemporal } from '../helpers/temporal';

const { version } = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string };
const outDir = join(projectRoot, 'test', 'fixtures', 'histories');
/** Shards of the sharded scenarios. */
const SHARDS = 2;

/** A recorded crawl, run to its end: `run` returns the crawl's workflow ID. */
type Scenario = [name: string, run: () => Promise<string>];

/** Crawls of one site through the workflow's life: completion, continue-as-new, messages, limits, failures. */
function lifecycleScenarios(env: TestTemporal, queue: string, site: SyntheticSite): Scenario[] {
  const seeds = [site.urlOf(0)];
  return [
    ['completed', async () => {
      await (await startCrawl(env.client, 'rec-completed', { seeds, batchSize: 20, perHostConcurrency: 4 }, queue)).result();
      return 'rec-completed';
    }],
    ['waiting-batches', async () => {
      // Started with one URL queued and eight slots: seven batches wait for its links.
      await (await startCrawl(env.client, 'rec-waiting', { seeds, batchSize: 20, concurrency: 8, perHostConcurrency: 8 }, queue)).result();
      return 'rec-waiting';
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
    ['paused-running-batches', async () => {
      // Paused while batches run: they stop after their page (the store's stop order), then resume.
      const handle = await startCrawl(env.client, 'rec-pause-batches', { seeds, batchSize: 50, maxPages: 80 }, queue);
      await waitFor(async () => (await handle.query(progressQuery)).processed > 0, 60_000, 'the first page processed');
      await handle.signal(pauseSignal);
      await waitFor(async () => (await handle.query(progressQuery)).batchesInFlight === 0, 60_000, 'the running batches to stop');
      await handle.signal(resumeSignal);
      await handle.result();
      return 'rec-pause-batches';
    }],
    ['stopped-running-batches', async () => {
      const handle = await startCrawl(env.client, 'rec-stop-batches', { seeds, batchSize: 50 }, queue);
      await waitFor(async () => (await handle.query(progressQuery)).processed > 0, 60_000, 'the first page processed');
      await handle.executeUpdate(stopUpdate);
      await handle.result();
      return 'rec-stop-batches';
    }],
    ['seeds-added-while-held', async () => {
      // Seeds added while the crawl's only batches hang on slow pages and waiting batches gave up.
      let release: () => void = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      const held = await startRecordingSite({ '/': (_req, res) => page(res, ['/a/0', '/a/1']), '/a/0': (_req, res) => void released.then(() => page(res)), '/a/1': (_req, res) => void released.then(() => page(res)) });
      const added = await startRecordingSite({ '/': (_req, res) => page(res, ['/b/0', '/b/1']), '/b/0': (_req, res) => page(res), '/b/1': (_req, res) => page(res) });
      try {
        const handle = await startCrawl(env.client, 'rec-seeds-held', { seeds: [`${held.origin}/`], concurrency: 4, perHostConcurrency: 2, batchSize: 5 }, queue);
        while ((await handle.query(progressQuery)).batchesInFlight !== 2 || held.pages().length < 3) await new Promise((resolve) => setTimeout(resolve, 200));
        await handle.executeUpdate(addSeedsUpdate, { args: [[`${added.origin}/`]] });
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        release();
        await handle.result();
      } finally {
        release();
        await held.close();
        await added.close();
      }
      return 'rec-seeds-held';
    }],
    ['stray-signals', async () => {
      // Signals the crawl has no handler for: an update's name sent as a signal, and a name it does not know.
      const handle = await startCrawl(env.client, 'rec-stray-signals', { seeds, batchSize: 5, perHostConcurrency: 1 }, queue);
      await handle.signal(stopUpdate.name);
      await handle.signal('frobnicate', { now: true });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await handle.executeUpdate(stopUpdate);
      await handle.result();
      return 'rec-stray-signals';
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
    ['cancelled', async () => {
      const handle = await startCrawl(env.client, 'rec-cancel', { seeds, batchSize: 5 }, queue);
      await new Promise((resolve) => setTimeout(resolve, 700));
      await handle.cancel();
      await handle.result().catch(() => undefined);
      return 'rec-cancel';
    }],
  ];
}

/** A crawl of one host whose /r/0 answers 429 with `Retry-After: retryAfterS` the first time; returns its workflow ID. */
async function crawlOfLimitedHost(env: TestTemporal, queue: string, workflowId: string, retryAfterS: number): Promise<string> {
  const limited = await startRecordingSite({
    '/': (_req, res) => page(res, ['/r/0', '/r/1']),
    '/r/0': (_req, res, nth) => (nth === 1 ? res.writeHead(429, { 'retry-after': String(retryAfterS) }).end() : page(res)),
    '/r/1': (_req, res) => page(res),
  });
  try {
    await (await startCrawl(env.client, workflowId, { seeds: [`${limited.origin}/`], perHostConcurrency: 1 }, queue)).result();
  } finally {
    await limited.close();
  }
  return workflowId;
}

/** A batch that runs on past the progress refresh (12 s on one page): the run reads its progress meanwhile. */
async function crawlWithLongBatch(env: TestTemporal, queue: string): Promise<string> {
  const slow = await startRecordingSite({
    '/': (_req, res) => page(res, ['/a', '/slow']),
    '/a': (_req, res) => page(res),
    '/slow': (_req, res) => void setTimeout(() => page(res), 12_000),
  });
  try {
    await (await startCrawl(env.client, 'rec-live-progress', { seeds: [`${slow.origin}/`], concurrency: 1, respectRobots: false }, queue)).result();
  } finally {
    await slow.close();
  }
  return 'rec-live-progress';
}

/** A crawl whose host asks it to wait: a durable timer that says why, and the hold's reason in the run's state. */
function holdScenarios(env: TestTemporal, queue: string): Scenario[] {
  return [
    ['held-by-retry-after', () => crawlOfLimitedHost(env, queue, 'rec-retry-after', 11)],
    // Held past what a batch waits out: the batch waiting for work finds nothing and reads when the key is claimable.
    ['held-past-batch-wait', () => crawlOfLimitedHost(env, queue, 'rec-held-past', 14)],
    ['live-progress', () => crawlWithLongBatch(env, queue)],
    ['held-while-others-report', async () => {
      // One host held 11 s by a 429 while the other's batches of two report: the hold's timer is kept through them.
      const sites = await startHeldWhileBusy(11);
      try {
        await (await startCrawl(env.client, 'rec-held-others', sites.input, queue)).result();
      } finally {
        await sites.close();
      }
      return 'rec-held-others';
    }],
  ];
}

/** Crawls whose frontier comes from elsewhere or spreads: a seeds file, many hosts, shards. */
function frontierScenarios(env: TestTemporal, queue: string, site: SyntheticSite, hosts: LinkedHosts): Scenario[] {
  const seeds = [site.urlOf(0)];
  return [
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
    ['broad', async () => {
      // More hosts than a batch report names: batches take ready work from the store.
      const broad = await startLinkedHosts(150, 1);
      try {
        const input = { seeds: broad.origins.map((origin) => `${origin}/`), batchSize: 20, concurrency: 8, perHostConcurrency: 1, respectRobots: false };
        await (await startCrawl(env.client, 'rec-broad', input, queue)).result();
      } finally {
        await broad.close();
      }
      return 'rec-broad';
    }],
    ['sharded', async () => {
      const input = { seeds: [`${hosts.origins[0]}/`], scope: 'any' as const, shards: SHARDS, batchSize: 2, respectRobots: false };
      await (await startCrawl(env.client, 'rec-sharded', input, queue)).result();
      return 'rec-sharded';
    }],
    ['sharded-cancelled', async () => {
      const handle = await startCrawl(env.client, 'rec-sharded-cancel', { seeds, shards: SHARDS, batchSize: 5 }, queue);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await handle.cancel();
      await handle.result().catch(() => undefined);
      return 'rec-sharded-cancel';
    }],
  ];
}

async function main(): Promise<void> {
  const env = await startTestTemporal({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 150 } });
  const queue = uniqueQueue('record');
  await env.startWorker(queue);
  const site = await startSyntheticSite({ pages: 300, latencyMs: 5 });
  const hosts = await startLinkedHosts(8, 3);
  try {
    const only = process.argv.slice(2);
    for (const [name, run] of [...lifecycleScenarios(env, queue, site), ...holdScenarios(env, queue), ...frontierScenarios(env, queue, site, hosts)].filter(([name]) => only.length === 0 || only.includes(name))) {
      const workflowId = await run();
      const shards = name.startsWith('sharded') ? SHARDS : 0;
      const recorded: Array<[string, string]> = [[name, workflowId], ...Array.from({ length: shards }, (_, n): [string, string] => [`${name}-shard-${n}`, shardWorkflowId(workflowId, n)])];
      for (const [file, id] of recorded) await record(env.client, id, file);
    }
  } finally {
    await hosts.close();
    await site.close();
    await env.close();
  }
}

/** Every run of `workflowId`, newest last, as `v<version>-<name>[-run<n>].json`. */
async function record(client: Client, workflowId: string, name: string): Promise<void> {
  const runs = await historiesOf(client, workflowId);
  runs.forEach(({ history }, index) => {
    writeHistoryFile(join(outDir, `v${version}-${name}${runs.length > 1 ? `-run${runs.length - index}` : ''}.json`), history);
  });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
