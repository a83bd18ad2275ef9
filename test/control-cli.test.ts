/**
 * The commands that act on a crawl by its ID (`pause`, `resume`, `stop`, `cancel`,
 * `add-seeds`, `set-limits`) and `start` of an ID in use, through real processes against a
 * dev server and a worker: a request that would change nothing (no such crawl, a crawl that
 * has ended, seeds for a crawl that is stopping) or that no worker takes ends with one line
 * and exit code 1, never exit 0 or a wait without end.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { startCrawl, type CrawlHandle } from '../src/client/crawl-client';
import { progressQuery } from '../src/shared/messages';
import { CRAWL_WORKFLOW_TYPE } from '../src/shared/names';
import { waitFor } from './helpers/fixtures';
import { runCli, type CliResult } from './helpers/processes';
import { page, startRecordingSite, type Handler, type RecordingSite } from './helpers/recording-site';
import { shardOf } from '../src/scheduling/shards';
import type { CrawlStatusReport } from '../src/cli/crawl-report';
import { itRejectsEach, type UsageCase } from './helpers/usage-errors';
import { uniqueQueue } from './helpers/temporal';
import { cliTemporal } from './helpers/cli-temporal';
import { eventTimes, historiesOf } from './helpers/histories';
import { PROGRESS_REFRESH_MS } from '../src/scheduling/progress-refresh';

/** The control commands, each with what it needs after the crawl ID. */
const CONTROL_COMMANDS: ReadonlyArray<[string, ...string[]]> = [['pause'], ['resume'], ['stop'], ['cancel'], ['add-seeds', 'http://127.0.0.1:9/'], ['set-limits', '--delay-ms', '5']];

/** A site of `routes` whose host key falls in `shard` of two. */
async function inShard(shard: number, routes: Record<string, Handler>): Promise<RecordingSite> {
  for (;;) {
    const candidate = await startRecordingSite(routes);
    if (shardOf(candidate.host, 2) === shard) return candidate;
    await candidate.close();
  }
}

/** A command's result as one value, so one assertion shows all of it. */
const outcome = ({ code, stdout, stderr }: CliResult) => ({ code, stdout, stderr });

describe('control commands given bad input', { concurrency: 4 }, () => {
  // Nothing listens on port 1: these are refused before any connection is tried.
  itRejectsEach(
    [
      ['an add-seeds URL that is not http(s), named among good ones', ['add-seeds', 'some-crawl', 'http://127.0.0.1:9/', 'ftp://127.0.0.1/x'], /^crawlflow: seed "ftp:\/\/127\.0\.0\.1\/x": must be an absolute http\(s\) URL\n$/],
      ['an add-seeds URL with credentials (never echoed)', ['add-seeds', 'some-crawl', 'http://me:topsecret@127.0.0.1:9/'], /^crawlflow: seed "http:\/\/\*\*\*@127\.0\.0\.1:9\/": must not contain credentials/],
      ['more add-seeds URLs than one update takes', ['add-seeds', 'some-crawl', ...Array.from({ length: 1_001 }, (_, i) => `http://127.0.0.1:9/${i}`)], /^crawlflow: <url\.\.\.>: at most 1000 URLs at once\n$/],
      // They reach the crawl by its workflow ID and the server knows its task queue: the flag would do nothing.
      ...CONTROL_COMMANDS.map(([command, ...rest]): UsageCase => [`--task-queue on ${command}`, [command, 'some-crawl', ...rest, '--task-queue', 'elsewhere'], /^error: unknown option '--task-queue'\n$/]),
    ],
    { TEMPORAL_ADDRESS: '127.0.0.1:1' },
  );

  it('each command lists --data-dir in its --help and no --task-queue', async () => {
    for (const [command] of CONTROL_COMMANDS) {
      const { code, stdout, stderr } = await runCli([command, '--help'], { TEMPORAL_ADDRESS: '127.0.0.1:1' });
      assert.deepEqual({ code, stderr, dataDir: stdout.includes('--data-dir <dir>'), taskQueue: stdout.includes('--task-queue') }, { code: 0, stderr: '', dataDir: true, taskQueue: false }, command);
    }
  });
});

describe('control commands against a dev server and a worker', () => {
  const temporal = cliTemporal('control');
  let site: SyntheticSite;
  let other: SyntheticSite;
  before(async () => {
    site = await startSyntheticSite({ pages: 20 });
    other = await startSyntheticSite({ pages: 5 });
  });
  after(async () => {
    await other?.close();
    await site?.close();
  });

  it('each command on an ID the server does not know exits 1 with one line naming it', async () => {
    for (const [command, ...rest] of CONTROL_COMMANDS) {
      const result = await runCli([command, 'no-such-crawl', ...rest], temporal.cliEnv);
      assert.deepEqual(outcome(result), { code: 1, stdout: '', stderr: 'crawlflow: no crawl "no-such-crawl" on the Temporal server\n' }, command);
    }
  });

  it('each command on a crawl that has ended (completed, stopped, cancelled, terminated, failed) exits 1 with one line saying how it ended, and changes nothing', async () => {
    const ends: Array<[string, string]> = [
      ['ended-completed', 'completed'],
      ['ended-stopped', 'stopped'],
      ['ended-cancelled', 'cancelled'],
      ['ended-terminated', 'terminated'],
      ['ended-failed', 'failed'],
    ];
    await (await startCrawl(temporal.env.client, 'ended-completed', { seeds: [site.urlOf(0)] }, temporal.taskQueue)).result();
    // A site slow enough that these crawls are still running when they are stopped and cancelled.
    const slow = await startSyntheticSite({ pages: 200, latencyMs: 100 });
    try {
      const stopped = await startCrawl(temporal.env.client, 'ended-stopped', { seeds: [slow.urlOf(0)] }, temporal.taskQueue);
      assert.equal((await runCli(['stop', 'ended-stopped'], temporal.cliEnv)).code, 0);
      assert.equal((await stopped.result()).status, 'stopped');
      for (const [id, end] of [['ended-cancelled', 'cancel'], ['ended-terminated', 'terminate']] as const) {
        const handle = await startCrawl(temporal.env.client, id, { seeds: [slow.urlOf(0)] }, temporal.taskQueue);
        await (end === 'cancel' ? handle.cancel() : handle.terminate('by the test'));
        await waitFor(async () => (await handle.describe()).status.name !== 'RUNNING', 15_000, `${id} to close`);
      }
    } finally {
      await slow.close();
    }
    // An input the workflow refuses fails it at once.
    await temporal.env.client.workflow.start(CRAWL_WORKFLOW_TYPE, { workflowId: 'ended-failed', taskQueue: temporal.taskQueue, args: [{ seeds: 5 }] });
    await waitFor(async () => (await temporal.env.client.workflow.getHandle('ended-failed').describe()).status.name === 'FAILED', 15_000, 'ended-failed to fail');

    const requestsBefore = site.requests.length;
    for (const [id, end] of ends) {
      const results = await Promise.all(CONTROL_COMMANDS.map(([command, ...rest]) => runCli([command, id, ...rest], temporal.cliEnv)));
      for (const [i, result] of results.entries()) {
        const command = CONTROL_COMMANDS[i][0];
        assert.deepEqual(outcome(result), { code: 1, stdout: '', stderr: `crawlflow: crawl ${id} has already ended (${end}): ${command} applies only to a running crawl\n` }, `${command} ${id}`);
      }
      const { status } = await temporal.env.client.workflow.getHandle(id).describe();
      assert.equal(status.name, { completed: 'COMPLETED', stopped: 'COMPLETED', cancelled: 'CANCELLED', terminated: 'TERMINATED', failed: 'FAILED' }[end], id);
    }
    assert.equal(site.requests.length, requestsBefore, 'no page fetched after the crawls ended');
  });

  it('stop, set-limits and add-seeds of a crawl no worker runs end after 10 s with one line naming the task queue; pause is recorded for later', async () => {
    const idleQueue = uniqueQueue('nobody-polls');
    const handle = await startCrawl(temporal.env.client, 'control-no-worker', { seeds: [site.urlOf(0)] }, idleQueue);
    try {
      const started = Date.now();
      const commands: Array<[string[], string]> = [
        [['stop'], 'stop'],
        [['set-limits', '--concurrency', '2'], 'new limits'],
        [['add-seeds', other.urlOf(0)], 'seeds'],
      ];
      const results = await Promise.all(commands.map(([[command, ...rest]]) => runCli([command, 'control-no-worker', ...rest], temporal.cliEnv, 60_000)));
      const took = Date.now() - started;
      for (const [i, result] of results.entries()) {
        const [[command], update] = commands[i];
        const stderr =
          `crawlflow: crawl control-no-worker is running, but no worker took the ${update} within 10 s: ` +
          `start \`crawlflow worker --task-queue ${idleQueue}\` (the server may still hand it to that worker; see docs/troubleshooting.md)\n`;
        assert.deepEqual(outcome(result), { code: 1, stdout: '', stderr }, command);
      }
      assert.ok(took >= 10_000 && took < 30_000, `ended when the 10 s passed (${took} ms)`);
      const paused = await runCli(['pause', 'control-no-worker'], temporal.cliEnv);
      assert.deepEqual(outcome(paused), { code: 0, stdout: 'pause: control-no-worker\n', stderr: '' });
      assert.equal((await handle.describe()).status.name, 'RUNNING');
    } finally {
      await handle.terminate('test over');
    }
  });

  it('pause of a paused crawl and resume of a running one exit 0 and say they changed nothing; set-limits prints the limits in force, with --json as an object', async () => {
    const slow = await startSyntheticSite({ pages: 200, latencyMs: 100 });
    const handle = await startCrawl(temporal.env.client, 'control-repeat', { seeds: [slow.urlOf(0)], concurrency: 2, perHostConcurrency: 1, delayMs: 0 }, temporal.taskQueue);
    try {
      const run = async (...args: string[]) => outcome(await runCli(args, temporal.cliEnv));
      const statusIs = (status: string) => waitFor(async () => (await handle.query(progressQuery)).status === status, 15_000, `the crawl to be ${status}`);
      await waitFor(() => slow.requests.length > 1, 20_000, 'the crawl to start');
      assert.deepEqual(await run('resume', 'control-repeat'), { code: 0, stdout: 'resume: control-repeat (already running)\n', stderr: '' });
      assert.deepEqual(await run('pause', 'control-repeat'), { code: 0, stdout: 'pause: control-repeat\n', stderr: '' });
      await statusIs('paused');
      assert.deepEqual(await run('pause', 'control-repeat'), { code: 0, stdout: 'pause: control-repeat (already paused)\n', stderr: '' });
      assert.equal((await handle.query(progressQuery)).status, 'paused', 'still paused');
      assert.deepEqual(await run('resume', 'control-repeat'), { code: 0, stdout: 'resume: control-repeat\n', stderr: '' });
      await statusIs('running');

      assert.deepEqual(await run('set-limits', 'control-repeat', '--concurrency', '3', '--delay-ms', '5'), {
        code: 0,
        stdout: 'set-limits: control-repeat: concurrency 3, per-host concurrency 1, delay 5 ms\n',
        stderr: '',
      });
      assert.deepEqual(await run('set-limits', 'control-repeat', '--per-host-concurrency', '2', '--json'), {
        code: 0,
        stdout: `${JSON.stringify({ concurrency: 3, perHostConcurrency: 2, delayMs: 5 })}\n`,
        stderr: '',
      });
    } finally {
      await handle.cancel();
      await slow.close();
    }
  });

  it('start with the ID of an ended crawl starts nothing and exits 1; with the ID of a running crawl it says the crawl goes on as it was started', async () => {
    await (await startCrawl(temporal.env.client, 'start-ended', { seeds: [site.urlOf(0)], maxPages: 3 }, temporal.taskQueue)).result();
    const requestsBefore = other.requests.length;
    for (const json of [[], ['--json']]) {
      const again = await runCli(['start', other.urlOf(0), '--id', 'start-ended', ...json], temporal.cliEnv);
      assert.deepEqual(
        outcome(again),
        { code: 1, stdout: '', stderr: 'crawlflow: crawl start-ended has already ended (max-pages-reached): a crawl ID is never run again; choose another --id\n' },
        json.join(''),
      );
    }

    const idleQueue = uniqueQueue('start-running');
    const running = await startCrawl(temporal.env.client, 'start-running', { seeds: [site.urlOf(0)] }, idleQueue);
    try {
      const attached = await runCli(['start', other.urlOf(0), '--id', 'start-running', '--json'], temporal.cliEnv);
      assert.deepEqual(outcome(attached), {
        code: 0,
        stdout: `${JSON.stringify({ crawlId: 'start-running', started: false, uiUrl: null })}\n`,
        stderr: 'crawlflow: crawl start-running is already running: nothing was started, and it goes on with the seeds and settings it was started with\n',
      });
      const { taskQueue: queueOfCrawl } = await running.describe();
      assert.equal(queueOfCrawl, idleQueue, 'the same execution, on the queue it was started on');
      const fresh = await runCli(['start', other.urlOf(0), '--id', 'start-fresh', '--json', '--max-pages', '1'], temporal.cliEnv);
      assert.deepEqual(outcome(fresh), { code: 0, stdout: `${JSON.stringify({ crawlId: 'start-fresh', started: true, uiUrl: null })}\n`, stderr: '' });
      assert.equal((await temporal.env.client.workflow.getHandle('start-fresh').result()).status, 'max-pages-reached');
    } finally {
      await running.terminate('test over');
    }
    assert.equal(other.requests.filter((request) => request.path !== '/robots.txt').length - requestsBefore, 1, 'only start-fresh fetched a page of the other site');
  });

  it("status of a sharded crawl is its shards', read live: their batches in flight, counts and held hosts with why", async () => {
    // Two sites whose keys fall in shards 0 and 1: one page of the first hangs in its batch,
    // and the second answers its /r with 429 and Retry-After 30, so its shard holds it.
    let releaseHang: () => void = () => {};
    const hangs = new Promise<void>((resolve) => (releaseHang = resolve));
    const hanging = await inShard(0, { '/': (_req, res) => page(res, ['/hang']), '/hang': (_req, res) => void hangs.then(() => page(res)) });
    const holding = await inShard(1, { '/': (_req, res) => page(res, ['/r']), '/r': (_req, res, nth) => (nth === 1 ? res.writeHead(429, { 'retry-after': '30' }).end() : page(res)) });
    const seeds = [`${hanging.origin}/`, `${holding.origin}/`];
    const handle = await startCrawl(temporal.env.client, 'status-sharded', { seeds, shards: 2, concurrency: 2, perHostConcurrency: 1, respectRobots: false }, temporal.taskQueue);
    try {
      await waitFor(() => hanging.pages().some(({ path }) => path === '/hang') && holding.pages().some(({ path }) => path === '/r'), 20_000, 'the hang and the 429');
      const heldUntil = Date.now() + 30_000;
      const status = await runCli(['status', 'status-sharded', '--json'], temporal.cliEnv);
      assert.equal(status.code, 0, status.stderr);
      const { progress, frontier } = JSON.parse(status.stdout) as CrawlStatusReport;
      // Each shard's queue is as its last batch report read it: /hang still queued then, /r queued again.
      assert.deepEqual(
        { processed: progress?.processed, queued: progress?.queued, batchesInFlight: progress?.batchesInFlight, hostsInFlight: progress?.hostsInFlight },
        { processed: 2, queued: 2, batchesInFlight: 1, hostsInFlight: [hanging.host] },
        'the front pages done, /hang in its batch',
      );
      const held = frontier?.hosts.find(({ host }) => host === holding.host);
      assert.deepEqual(
        frontier?.hosts.sort((a, b) => a.host.localeCompare(b.host)),
        [
          { host: hanging.host, queued: 1, batchesInFlight: 1, readyAt: null, holdReason: null },
          { host: holding.host, queued: 1, batchesInFlight: 0, readyAt: held?.readyAt, holdReason: 'HTTP 429 with Retry-After 30 s' },
        ].sort((a, b) => a.host.localeCompare(b.host)),
      );
      assert.ok(held?.readyAt != null && Math.abs(held.readyAt - heldUntil) < 3_000, `held about 30 s from the 429 (${held?.readyAt})`);
    } finally {
      await handle.cancel();
      releaseHang();
      await hanging.close();
      await holding.close();
    }
  });

  it('status names the gap each running batch keeps between requests to its host, and why, from its heartbeat; of a sharded crawl, its shards\' batches', async () => {
    // Per crawl, two hosts paced below what a hold takes: one by its robots.txt Crawl-delay, one
    // by a host override's delay; the sharded crawl has one in each shard.
    const routesOf = (robots: string, links: number): Record<string, Handler> => {
      const paths = Array.from({ length: links }, (_, n) => `/p/${n}`);
      return {
        '/robots.txt': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(robots),
        '/': (_req, res) => page(res, paths),
        ...Object.fromEntries(paths.map((path): [string, Handler] => [path, (_req, res) => page(res)])),
      };
    };
    const crawlDelay = (shard: number) => inShard(shard, routesOf('User-agent: *\nCrawl-delay: 2\n', 6));
    const delay = (shard: number) => inShard(shard, routesOf('User-agent: *\nAllow: /\n', 8));
    const crawls = [
      { id: 'status-paced', sites: [await crawlDelay(0), await delay(0)], shards: 1 },
      { id: 'status-paced-sharded', sites: [await crawlDelay(0), await delay(1)], shards: 2 },
    ];
    try {
      const handles = await Promise.all(
        crawls.map(({ id, sites: [crawlDelayed, delayed], shards }) => {
          const input = { seeds: [`${crawlDelayed.origin}/`, `${delayed.origin}/`], shards, concurrency: 2, perHostConcurrency: 1, hosts: { [delayed.host]: { delayMs: 1_500 } } };
          return startCrawl(temporal.env.client, id, input, temporal.taskQueue);
        }),
      );
      for (const { id, sites: [crawlDelayed, delayed] } of crawls) {
        let report: CrawlStatusReport | undefined;
        // A batch heartbeats its gap from its second request on; the worker sends heartbeats every 5 s at most.
        await waitFor(async () => {
          const status = await runCli(['status', id, '--json'], temporal.cliEnv);
          assert.equal(status.code, 0, status.stderr);
          report = JSON.parse(status.stdout) as CrawlStatusReport;
          return report.gaps?.length === 2;
        }, 20_000, `both batches of ${id} to heartbeat their gaps`);
        const expected = [
          { key: crawlDelayed.host, gapMs: 2_000, why: 'robots.txt Crawl-delay of 2 s' },
          { key: delayed.host, gapMs: 1_500, why: 'a delay of 1.5 s between requests' },
        ];
        assert.deepEqual(report?.gaps, expected, `${id}: the widest first`);
        const text = await runCli(['status', id], temporal.cliEnv);
        const line = `  paced: ${crawlDelayed.host} (robots.txt Crawl-delay of 2 s), ${delayed.host} (a delay of 1.5 s between requests)`;
        assert.ok(text.stdout.split('\n').includes(line), text.stdout);
      }
      for (const [n, handle] of handles.entries()) {
        assert.equal((await handle.result()).totals.processed, 16);
        const ended = JSON.parse((await runCli(['status', crawls[n].id, '--json'], temporal.cliEnv)).stdout) as CrawlStatusReport;
        assert.equal(ended.gaps, null, 'an ended crawl has no batches running');
      }
    } finally {
      for (const site of crawls.flatMap(({ sites }) => sites)) await site.close();
    }
  });

  it('progress counts the pages of a batch that runs on without reporting, read from the store every 10 s while batches run, PagesCrawled upserted only when it moved', async () => {
    // The seed's links, which one batch takes together and crawls in turn; /hang answers only
    // when the test lets it, so that batch runs on without reporting.
    let releaseHang: () => void = () => {};
    const hangs = new Promise<void>((resolve) => (releaseHang = resolve));
    let hangAskedAt = 0;
    const site = await startRecordingSite({
      '/': (_req, res) => page(res, ['/a', '/b', '/c', '/hang']),
      '/a': (_req, res) => page(res),
      '/b': (_req, res) => page(res),
      '/c': (_req, res) => page(res),
      '/hang': (_req, res) => {
        hangAskedAt ||= Date.now();
        void hangs.then(() => page(res));
      },
    });
    const id = 'progress-long-batch';
    try {
      const handle = await startCrawl(temporal.env.client, id, { seeds: [`${site.origin}/`], concurrency: 1, respectRobots: false }, temporal.taskQueue);
      const counts = async () => {
        const { processed, queued, batchesInFlight, batchesCompleted } = await handle.query(progressQuery);
        return { processed, queued, batchesInFlight, batchesCompleted };
      };
      let shownAfterMs: number;
      let status: CliResult;
      try {
        await waitFor(() => hangAskedAt > 0, 20_000, '/hang to be asked for');
        assert.deepEqual(await counts(), { processed: 1, queued: 4, batchesInFlight: 1, batchesCompleted: 1 }, "as the seed's batch reported: its page done, its links queued");
        await waitFor(async () => (await counts()).processed === 4, PROGRESS_REFRESH_MS + 5_000, 'progress to count the pages done since');
        shownAfterMs = Date.now() - hangAskedAt;
        assert.deepEqual(await counts(), { processed: 4, queued: 0, batchesInFlight: 1, batchesCompleted: 1 }, 'three more done, /hang claimed, and still no report');
        assert.deepEqual((await handle.describe()).searchAttributes.PagesCrawled, [4], 'the search attribute follows the read');
        status = await runCli(['status', id, '--json'], temporal.cliEnv);
        // A second read, 10 s later, finds nothing new: /hang still hangs.
        await waitFor(async () => eventTimes(await handle.fetchHistory(), 'crawlView').length === 2, PROGRESS_REFRESH_MS + 5_000, 'the second read');
      } finally {
        releaseHang();
      }
      assert.equal(status.code, 0, status.stderr);
      assert.equal((JSON.parse(status.stdout) as CrawlStatusReport).progress?.processed, 4, 'status shows them too');
      assert.ok(shownAfterMs >= PROGRESS_REFRESH_MS - 1_000 && shownAfterMs <= PROGRESS_REFRESH_MS + 2_000, `shown by the read 10 s after batches started (${shownAfterMs} ms after /hang)`);
      const summary = await handle.result();
      assert.deepEqual({ status: summary.status, processed: summary.totals.processed, batches: summary.batches }, { status: 'completed', processed: 5, batches: 2 });
      assert.deepEqual(site.pages().map(({ path }) => path), ['/', '/a', '/b', '/c', '/hang'], 'each page once');
      // Two reads while the second batch ran on, ten seconds apart from the crawl's first batch on;
      // only the first moved the search attribute, so only it upserted.
      const [{ history }] = await historiesOf(temporal.env.client, id);
      const [firstBatchAt] = eventTimes(history, 'fetchBatch');
      const reads = eventTimes(history, 'crawlView').map((at) => at - firstBatchAt);
      assert.equal(reads.length, 2, `two progress reads (${reads.join(', ')} ms after the first batch)`);
      reads.forEach((at, n) => assert.ok(at >= (n + 1) * PROGRESS_REFRESH_MS && at < (n + 1) * PROGRESS_REFRESH_MS + 1_000, `read ${n + 1} ${at} ms after the first batch was scheduled`));
      const events = history.events ?? [];
      const firstRead = events.findIndex((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'crawlView');
      const hangReported = events.findIndex((event, index) => index > firstRead && event.activityTaskCompletedEventAttributes && events[Number(event.activityTaskCompletedEventAttributes.scheduledEventId) - 1]?.activityTaskScheduledEventAttributes?.activityType?.name === 'fetchBatch');
      const upserts = events.slice(firstRead, hangReported).filter((event) => event.upsertWorkflowSearchAttributesEventAttributes);
      assert.equal(upserts.length, 1, 'one upsert over the two reads');
    } finally {
      releaseHang();
      await site.close();
    }
  });

  describe('add-seeds', () => {
    let held: RecordingSite;
    let release: () => void = () => {};
    const releasedHold = new Promise<void>((resolve) => (release = resolve));
    let releaseBudget: () => void = () => {};
    const releasedBudget = new Promise<void>((resolve) => (releaseBudget = resolve));
    before(async () => {
      // /hold answers only when the test lets it: the batch that fetches it keeps the crawl running, and a stopped one stopping.
      held = await startRecordingSite({
        '/': (_req, res) => page(res, ['/hold']),
        '/hold': (_req, res) => void releasedHold.then(() => page(res)),
        '/budget': (_req, res) => page(res, ['/budget-hold', '/budget-more']),
        '/budget-hold': (_req, res) => void releasedBudget.then(() => page(res, ['/budget-over'])),
        '/budget-more': (_req, res) => page(res),
        '/budget-over': (_req, res) => page(res),
      });
    });
    after(async () => {
      release();
      releaseBudget();
      await held?.close();
    });

    /**
     * `add-seeds` of a page of the other site to a running crawl that cannot fetch it: one line
     * on stderr, exit 1, and once `release` lets the crawl end as `status`, neither the page
     * fetched nor the update in its history.
     */
    async function refusesSeeds(handle: CrawlHandle, stderr: string, release: () => void, status: string): Promise<void> {
      const otherBefore = other.requests.length;
      const refused = await runCli(['add-seeds', handle.workflowId, other.urlOf(1)], temporal.cliEnv);
      assert.deepEqual(outcome(refused), { code: 1, stdout: '', stderr });
      release();
      assert.equal((await handle.result()).status, status);
      assert.equal(other.requests.length, otherBefore, 'the other site was never asked for anything');
      const history = JSON.stringify(await handle.fetchHistory());
      assert.ok(!history.includes('addSeeds'), 'the refused update left nothing in the history');
    }

    it('says how many URLs were new and how many the crawl knew already, and the new one is fetched', async () => {
      const handle = await startCrawl(temporal.env.client, 'add-seeds-known', { seeds: [`${held.origin}/`], perHostConcurrency: 1 }, temporal.taskQueue);
      await waitFor(() => held.pages().some((request) => request.path === '/hold'), 20_000, 'the crawl to reach /hold');
      const from = other.requests.length;
      const added = await runCli(['add-seeds', 'add-seeds-known', `${held.origin}/`, other.urlOf(0), other.urlOf(0)], temporal.cliEnv);
      assert.deepEqual(outcome(added), { code: 0, stdout: '1 new URL queued in add-seeds-known, 2 already known to it\n', stderr: '' });
      await waitFor(() => other.requests.slice(from).some((request) => request.path === '/page/0'), 20_000, 'the new seed to be fetched');
      await handle.cancel();
    });

    it('to a crawl that is stopping exits 1 with one line, and the URLs are never fetched', async () => {
      const handle = await startCrawl(temporal.env.client, 'add-seeds-stopping', { seeds: [`${held.origin}/`], perHostConcurrency: 1 }, temporal.taskQueue);
      await waitFor(() => held.pages().filter((request) => request.path === '/hold').length >= 2, 20_000, 'the crawl to reach /hold');
      const stop = await runCli(['stop', 'add-seeds-stopping'], temporal.cliEnv);
      assert.deepEqual(outcome(stop), { code: 0, stdout: 'stop: add-seeds-stopping\n', stderr: '' });
      assert.equal((await handle.query(progressQuery)).status, 'stopping');
      await refusesSeeds(handle, 'crawlflow: crawl add-seeds-stopping is stopping: seeds added now would never be fetched\n', release, 'stopped');
    });

    it('to a crawl whose running batch holds the rest of its page budget exits 1 with one line, and the URLs are never fetched', async () => {
      // One batch at a time: the second takes /budget-hold and /budget-more, the last 2 pages of the budget, and is held at the first.
      const handle = await startCrawl(temporal.env.client, 'add-seeds-budget', { seeds: [`${held.origin}/budget`], maxPages: 3, concurrency: 1, perHostConcurrency: 1 }, temporal.taskQueue);
      await waitFor(() => held.pages().some((request) => request.path === '/budget-hold'), 20_000, 'the crawl to reach /budget-hold');
      const stderr = 'crawlflow: crawl add-seeds-budget has spent its page budget (maxPages 3) on pages done or being fetched: seeds added now would never be fetched\n';
      await refusesSeeds(handle, stderr, releaseBudget, 'max-pages-reached');
      assert.deepEqual(
        held.pages().map((request) => request.path).filter((path) => path.startsWith('/budget')).sort(),
        ['/budget', '/budget-hold', '/budget-more'],
        'the budget went to the pages it was reserved for, and /budget-over, found last, was left',
      );
    });
  });
});
