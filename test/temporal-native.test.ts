/**
 * crawlflow as a citizen of Temporal's own tools: search attributes and live details for the
 * Web UI and `temporal workflow list`, activity and timer summaries, queries, signals and
 * validated updates (also through the `temporal` CLI), Schedules, and the client example.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BatchOrder } from '../src/scheduling/crawl-plan';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApplicationFailure, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { InvalidCrawlConfigError, type CrawlInput } from '../src/shared/crawl-config';
import { NativeConnection } from '@temporalio/worker';
import Database from 'better-sqlite3';
import { createCrawlWorker } from '../src/workers/crawl-worker';
import { CrawlMetrics } from '../src/observability/metrics';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { crawlHandle, startCrawl } from '../src/client/crawl-client';
import { addSeedsUpdate, frontierQuery, hostQuery, progressQuery, setLimitsUpdate, stopUpdate } from '../src/shared/messages';
import { projectRoot, temporalBinaryPath } from '../src/temporal/project-paths';
import { readRecords, startTestTemporal, uniqueQueue, type TestTemporal } from './helpers/temporal';
import { runCli, spawnWorker } from './helpers/processes';
import { sleep, waitFor } from './helpers/fixtures';
import { decodePayload } from './helpers/histories';
import { startHeldWhileBusy } from './helpers/recording-site';

const execFileAsync = promisify(execFile);

async function temporalCli(env: TestTemporal, args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(temporalBinaryPath(), [...args, '--address', env.address]);
  return stdout;
}

/** Visibility is eventually consistent: poll a list query until it returns what we expect. */
async function listIds(env: TestTemporal, query: string, expected: number): Promise<string[]> {
  for (let attempt = 0; ; attempt++) {
    const ids: string[] = [];
    for await (const execution of env.client.workflow.list({ query })) ids.push(execution.workflowId);
    if (ids.length >= expected || attempt > 50) return ids;
    await sleep(200);
  }
}

describe('Temporal-native operation', () => {
  let env: TestTemporal;
  let site: SyntheticSite;
  const queue = uniqueQueue('native');

  before(async () => {
    env = await startTestTemporal();
    await env.startWorker(queue);
    site = await startSyntheticSite({ pages: 300, latencyMs: 10 });
  });
  after(async () => {
    await site?.close();
    await env?.close();
  });

  it('a worker that shares its queue leaves batches to the server to spread; the sole worker of a crawl command takes them at once', async () => {
    const eagerReservations = async (soleWorker: boolean | undefined): Promise<number | undefined> => {
      const connection = await NativeConnection.connect({ address: env.address });
      const crawlWorker = await createCrawlWorker({ connection, namespace: 'default', taskQueue: uniqueQueue('eager'), store: env.store, metrics: new CrawlMetrics(), soleWorker });
      const done = crawlWorker.run().finally(() => connection.close());
      crawlWorker.worker.shutdown();
      await done;
      return crawlWorker.worker.options.maxEagerActivityReservationsPerWorkflowTask;
    };
    assert.equal(await eagerReservations(undefined), 0);
    assert.equal(await eagerReservations(false), 0);
    // As many as the batches it runs at once: every batch a workflow task orders starts on it.
    assert.equal(await eagerReservations(true), 64);
  });

  it('the embedded server keeps its history in a write-ahead log, as the frontier store keeps its file', () => {
    const history = new Database(join(env.dataDir, 'temporal.sqlite'), { readonly: true });
    try {
      assert.equal(history.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      history.close();
    }
  });

  it('indexes crawls with search attributes and shows live details and summaries', async () => {
    const handle = await startCrawl(env.client, 'native-indexed', { seeds: [site.urlOf(0)], maxPages: 120, perHostConcurrency: 2, batchSize: 10 }, queue);
    await waitFor(() => site.requests.length > 20, 20_000, 'the crawl to start');
    const metadata = (await handle.query('__temporal_workflow_metadata')) as { currentDetails?: string };
    assert.match(metadata.currentDetails ?? '', /\*\*URLs\*\* \d+ \(fetched \d+/, 'live details for the Web UI');
    const summary = await handle.result();

    const seedHost = new URL(site.origin).host;
    const ids = await listIds(env, `CrawlId = 'native-indexed' AND CrawlStatus = 'max-pages-reached' AND PagesCrawled = ${summary.totals.processed} AND SeedHost = '${seedHost}'`, 1);
    assert.deepEqual(ids, ['native-indexed']);
    const listed = await temporalCli(env, ['workflow', 'list', '--query', "CrawlStatus = 'max-pages-reached'", '--output', 'json']);
    assert.ok(listed.includes('native-indexed'), '`temporal workflow list --query` finds it');

    const history = await handle.fetchHistory();
    const batches = (history.events ?? []).filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'fetchBatch');
    assert.ok(batches.length > 0, 'batches were scheduled');
    batches.forEach((event, index) => {
      const order = decodePayload(event.activityTaskScheduledEventAttributes?.input?.payloads?.[0]) as BatchOrder;
      const text = String(decodePayload(event.userMetadata?.summary));
      const first = order.waitsForWork ? 'links running batches find' : seedHost;
      const limit = order.hosts.reduce((sum, share) => sum + share.limit, order.fill ?? 0);
      assert.equal(text, `${first} · batch ${index + 1} · up to ${limit} ${limit === 1 ? 'URL' : 'URLs'}`);
    });
    assert.ok(batches.some((event) => decodePayload(event.userMetadata?.summary) === `links running batches find · batch 2 · up to 10 URLs`), 'the slots free at the start wait for the seed\'s links');
  });

  it("a held host's timer is one durable timer, kept while other hosts' batches report", async () => {
    // Held 11 s, past what a batch waits out, so its batch hands the host back.
    const sites = await startHeldWhileBusy(11);
    const { held } = sites;
    try {
      const handle = await startCrawl(env.client, 'native-kept-timer', sites.input, queue);
      assert.equal((await handle.result()).totals.fetched, 13);
      const events = (await handle.fetchHistory()).events ?? [];
      const holdTimers = events.filter((event) => event.timerStartedEventAttributes && decodePayload(event.userMetadata?.summary) === `${held.host} is held: HTTP 429 with Retry-After 11 s`);
      assert.equal(holdTimers.length, 1, 'one timer for the hold');
      const timerId = holdTimers[0].timerStartedEventAttributes!.timerId;
      const heldFrom = events.indexOf(holdTimers[0]);
      const fired = events.findIndex((event) => event.timerFiredEventAttributes?.timerId === timerId);
      assert.ok(fired > heldFrom, 'it fired');
      const meanwhile = events.slice(heldFrom + 1, fired);
      const reportsMeanwhile = meanwhile.filter((event) => event.activityTaskCompletedEventAttributes).length;
      assert.ok(reportsMeanwhile >= 3, `batches reported while it ran (${reportsMeanwhile})`);
      // The progress read's timer runs beside it while batches run (PROGRESS_REFRESH_MS): the only timer started or cancelled meanwhile.
      const progressTimers = new Set(events.filter((event) => decodePayload(event.userMetadata?.summary) === 'reading progress while batches run').map((event) => event.timerStartedEventAttributes?.timerId));
      const otherTimers = meanwhile.filter((event) => {
        const id = event.timerStartedEventAttributes?.timerId ?? event.timerCanceledEventAttributes?.timerId;
        return id != null && !progressTimers.has(id);
      });
      assert.deepEqual(otherTimers, [], "the hold's timer neither cancelled nor started again meanwhile, and no other timer");
    } finally {
      await sites.close();
    }
  });

  it('answers frontier and host queries, and validates updates before they enter history', async () => {
    const slow = await startSyntheticSite({ pages: 400, latencyMs: 40 });
    try {
      const handle = await startCrawl(env.client, 'native-updates', { seeds: [slow.urlOf(0)], perHostConcurrency: 1, batchSize: 5 }, queue);
      await waitFor(() => slow.requests.length > 10, 20_000, 'the crawl to start');
      const frontier = await handle.query(frontierQuery);
      const host = new URL(slow.origin).host;
      assert.ok(frontier.queued > 0 && frontier.hosts.some((entry) => entry.host === host));
      const hostState = await handle.query(hostQuery, host);
      assert.equal(hostState.host, host);
      assert.ok(hostState.batchesInFlight <= 1);

      // A script tells a refused update by its type, the one an invalid crawl input fails with, and does not retry it.
      await assert.rejects(handle.executeUpdate(setLimitsUpdate, { args: [{ concurrency: 0 }] }), (err: unknown) => {
        assert.ok(err instanceof WorkflowUpdateFailedError);
        assert.ok(err.cause instanceof ApplicationFailure, String(err.cause));
        assert.equal(err.cause.type, 'InvalidCrawlConfig');
        assert.equal(err.cause.nonRetryable, true);
        assert.equal(err.cause.message, 'invalid crawl config: concurrency: Too small: expected number to be >=1');
        return true;
      });
      const refusedByCli = await temporalCli(env, ['workflow', 'update', 'execute', '--workflow-id', 'native-updates', '--name', 'setLimits', '--input', '{"concurrency":0}']).then(
        () => assert.fail('the temporal CLI reported a refused update as done'),
        (err: { stderr: string }) => err.stderr,
      );
      assert.match(refusedByCli, /invalid crawl config: concurrency: Too small: expected number to be >=1 \(type: InvalidCrawlConfig, retryable: false\)/);
      await assert.rejects(handle.executeUpdate(addSeedsUpdate, { args: [['not a url']] }), (err: unknown) => {
        assert.match(String((err as WorkflowUpdateFailedError).cause?.message), /seeds\.0: must be an absolute http\(s\) URL/);
        return true;
      });
      // From a client in JavaScript, or `temporal workflow update --input '"https://..."'`: one URL, not a list.
      await assert.rejects(handle.executeUpdate(addSeedsUpdate, { args: [slow.urlOf(1) as unknown as string[]] }), (err: unknown) => {
        assert.equal((err as WorkflowUpdateFailedError).cause?.message, 'invalid crawl config: seeds: must be a list of URLs, such as ["https://example.com/"]');
        return true;
      });
      const eventsAfterRejects = (await handle.fetchHistory()).events ?? [];
      assert.ok(!eventsAfterRejects.some((event) => event.workflowExecutionUpdateAcceptedEventAttributes), 'rejected updates leave no trace in history');

      const limits = await handle.executeUpdate(setLimitsUpdate, { args: [{ perHostConcurrency: 3 }] });
      assert.deepEqual(limits, { concurrency: 8, perHostConcurrency: 3, delayMs: 0 });
      await waitFor(() => slow.inFlight() === 3, 10_000, 'three requests in flight after raising the limit');

      // The same through the temporal CLI: a query and an update.
      const progress = JSON.parse(await temporalCli(env, ['workflow', 'query', '--workflow-id', 'native-updates', '--name', 'progress', '--output', 'json'])) as { queryResult: Array<{ status: string }> };
      assert.equal(progress.queryResult[0].status, 'running');
      await temporalCli(env, ['workflow', 'update', 'execute', '--workflow-id', 'native-updates', '--name', 'setLimits', '--input', '{"delayMs": 5}']);
      assert.deepEqual(await handle.executeUpdate(setLimitsUpdate, { args: [{}] }), { concurrency: 8, perHostConcurrency: 3, delayMs: 5 }, 'changes accumulate');

      await handle.executeUpdate(stopUpdate);
      const summary = await handle.result();
      assert.equal(summary.status, 'stopped');
      const records = await readRecords(env.dataDir, 'native-updates');
      assert.equal(records.length, summary.totals.processed);
      assert.ok(records.every((record) => record.status === 200), 'a graceful stop keeps complete records only');
    } finally {
      await slow.close();
    }
  });

  it('a signal the crawl does not take is logged as a warning, an update\'s name with how to send it, and changes nothing', async () => {
    const slow = await startSyntheticSite({ pages: 400, latencyMs: 40 });
    // A worker process of its own, whose JSON log lines the test reads as an operator would.
    const logFile = join(env.dataDir, 'stray-signals-worker.log');
    const strayQueue = uniqueQueue('stray');
    const worker = spawnWorker({ address: env.address, taskQueue: strayQueue, dataDir: env.dataDir, logFile });
    try {
      await worker.ready;
      const handle = await startCrawl(env.client, 'native-stray-signals', { seeds: [slow.urlOf(0)], perHostConcurrency: 1, batchSize: 5 }, strayQueue);
      await waitFor(() => slow.requests.length > 5, 20_000, 'the crawl to start');
      for (const [name, input] of [['stop', undefined], ['setLimits', '{"concurrency":1}'], ['frobnicate', undefined]] as const) {
        await temporalCli(env, ['workflow', 'signal', '--workflow-id', 'native-stray-signals', '--name', name, ...(input === undefined ? [] : ['--input', input])]);
      }
      const warnings = (): Array<{ msg: string; level: number; signal?: string }> =>
        readFileSync(logFile, 'utf8')
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { msg: string; level: number; signal?: string; sdkComponent?: string; workflowId?: string })
          .filter((line) => line.sdkComponent === 'workflow' && line.workflowId === 'native-stray-signals' && line.signal !== undefined);
      await waitFor(() => warnings().length === 3, 15_000, 'a warning for each stray signal');
      assert.deepEqual(
        warnings().map(({ msg, level, signal }) => ({ msg, level, signal })),
        [
          { level: 40, signal: 'stop', msg: 'signal "stop" ignored: stop is an update, send it as one: temporal workflow update execute --workflow-id native-stray-signals --name stop' },
          { level: 40, signal: 'setLimits', msg: 'signal "setLimits" ignored: setLimits is an update, send it as one: temporal workflow update execute --workflow-id native-stray-signals --name setLimits' },
          { level: 40, signal: 'frobnicate', msg: 'signal "frobnicate" ignored: the crawl takes the signals pause and resume' },
        ],
      );

      // The crawl went on as it was: running, its limits untouched.
      assert.equal((await handle.query(progressQuery)).status, 'running');
      assert.deepEqual(await handle.executeUpdate(setLimitsUpdate, { args: [{}] }), { concurrency: 8, perHostConcurrency: 1, delayMs: 0 });
      await handle.executeUpdate(stopUpdate);
      assert.equal((await handle.result()).status, 'stopped');
      const signaled = ((await handle.fetchHistory()).events ?? []).flatMap((event) => event.workflowExecutionSignaledEventAttributes?.signalName ?? []);
      assert.deepEqual(signaled, ['stop', 'setLimits', 'frobnicate']);
    } finally {
      await worker.kill('SIGTERM');
      await slow.close();
    }
  });

  it('addSeeds (from the crawlflow CLI) adds a new site to a running crawl and its scope', async () => {
    const other = await startSyntheticSite({ pages: 30 });
    const slow = await startSyntheticSite({ pages: 200, latencyMs: 30 });
    try {
      const handle = await startCrawl(env.client, 'native-add-seeds', { seeds: [slow.urlOf(0)], perHostConcurrency: 1, batchSize: 5 }, queue);
      await waitFor(() => slow.requests.length > 5, 20_000, 'the crawl to start');
      const cliEnv = { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_TASK_QUEUE: queue, CRAWLFLOW_DATA_DIR: env.dataDir };
      const rejected = await runCli(['add-seeds', 'native-add-seeds', 'ftp://nope/'], cliEnv);
      assert.equal(rejected.code, 2, rejected.stderr);
      const added = await runCli(['add-seeds', 'native-add-seeds', other.urlOf(0)], cliEnv);
      assert.equal(added.code, 0, added.stderr);
      assert.equal(added.stdout, '1 new URL queued in native-add-seeds\n');
      await handle.result();
      const urls = new Set((await readRecords(env.dataDir, 'native-add-seeds')).map((record) => record.url));
      const expectedOther = [...other.graph.reachableFrom(0)].map((page) => other.urlOf(page));
      assert.ok(expectedOther.every((url) => urls.has(url)), 'the added site was crawled in full');
    } finally {
      await other.close();
      await slow.close();
    }
  });

  it('schedules recurring crawls with the crawlflow CLI', async () => {
    const cliEnv = { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_TASK_QUEUE: queue, CRAWLFLOW_DATA_DIR: env.dataDir };
    // No schedule yet: one line says so, and --json is an empty array.
    assert.deepEqual(await runCli(['schedule', 'list'], cliEnv), { code: 0, stdout: 'schedule list: no crawl schedules\n', stderr: '' });
    assert.deepEqual(await runCli(['schedule', 'list', '--json'], cliEnv), { code: 0, stdout: '[]\n', stderr: '' });
    const bad = await runCli(['schedule', 'create', 'nightly', site.urlOf(0), '--every', '1h', '--cron', '0 3 * * *'], cliEnv);
    assert.equal(bad.code, 2);
    const created = await runCli(['schedule', 'create', 'nightly', site.urlOf(0), '--every', '1h', '--overlap', 'skip', '--max-pages', '20'], cliEnv);
    assert.equal(created.code, 0, created.stderr);
    const triggered = await runCli(['schedule', 'trigger', 'nightly'], cliEnv);
    assert.equal(triggered.code, 0, triggered.stderr);
    const runs = await listIds(env, "WorkflowId STARTS_WITH 'nightly'", 1);
    assert.equal(runs.length, 1);
    assert.equal(triggered.stdout, `schedule trigger: nightly: started crawl ${runs[0]}\n`);
    const summary = await crawlHandle(env.client, runs[0]).result();
    assert.equal(summary.status, 'max-pages-reached');
    assert.equal((await readRecords(env.dataDir, runs[0])).length, 20);

    const listed = JSON.parse((await runCli(['schedule', 'list', '--json'], cliEnv)).stdout) as Array<{ scheduleId: string; nextRuns: string[] }>;
    assert.ok(listed.some((entry) => entry.scheduleId === 'nightly' && entry.nextRuns.length > 0));
    type Described = { paused: boolean; note: string | null; overlap: string; recentCrawls: string[] };
    const describeNightly = async () => JSON.parse((await runCli(['schedule', 'describe', 'nightly'], cliEnv)).stdout) as Described;
    const unnoted = await describeNightly();
    assert.ok('note' in unnoted, 'note is always there');
    assert.equal(unnoted.note, null, 'no note left: null, as an absent value in every JSON output, not ""');
    assert.equal((await runCli(['schedule', 'pause', 'nightly'], cliEnv)).code, 0);
    const described = await describeNightly();
    assert.equal(described.note, 'paused with crawlflow');
    assert.equal(described.paused, true);
    assert.equal(described.overlap, 'SKIP');
    assert.deepEqual(described.recentCrawls, runs);
    assert.equal((await runCli(['schedule', 'delete', 'nightly'], cliEnv)).code, 0);
  });

  it('the client API refuses a bad input before anything starts, naming the field, and spends no crawl ID on it', async () => {
    const cases: Array<[string, unknown, string, RegExp]> = [
      ['client-null', null, 'input', /^must be an object of crawl settings, such as \{"seeds": \["https:\/\/example\.com\/"\]\}, not null$/],
      ['client-seeds-number', { seeds: 5 }, 'seeds', /^must be a list of URLs/],
      ['client-negative', { seeds: [site.urlOf(0)], maxPages: -1 }, 'maxPages', />=\s*1/],
    ];
    for (const [id, input, field, reason] of cases) {
      await assert.rejects(startCrawl(env.client, id, input as CrawlInput, queue), (err: unknown) => {
        assert.ok(err instanceof InvalidCrawlConfigError, `${id}: ${String(err)}`);
        assert.equal(err.code, 'invalid-config');
        assert.equal(err.field, field);
        assert.match(err.reason, reason);
        return true;
      });
      await assert.rejects(crawlHandle(env.client, id).describe(), WorkflowNotFoundError, `${id}: no workflow was started`);
    }
  });

  it('schedule commands end with one line for a taken ID, an unknown ID and a cron the server refuses, and take compound durations and cron macros', async () => {
    const cliEnv = { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_TASK_QUEUE: queue, CRAWLFLOW_DATA_DIR: env.dataDir };
    const create = (id: string, ...timing: string[]) => runCli(['schedule', 'create', id, site.urlOf(0), ...timing, '--paused'], cliEnv);

    const compound = await create('sched-compound', '--every', '1h30m', '--catchup-window', '2m30s');
    assert.equal(compound.code, 0, compound.stderr);
    const { spec, policies } = await env.client.schedule.getHandle('sched-compound').describe();
    assert.deepEqual(spec.intervals?.map((interval) => interval.every), [90 * 60_000]);
    assert.equal(policies.catchupWindow, 150_000);
    // The longest either flag takes, a year, reaches the server as it was given; the ID holds what a crawl ID may, `/` and a space too.
    const yearly = await create('team/sched yearly', '--every', '365d', '--catchup-window', '365d');
    assert.equal(yearly.code, 0, yearly.stderr);
    assert.equal(yearly.stdout, 'schedule team/sched yearly created\n');
    const longest = await env.client.schedule.getHandle('team/sched yearly').describe();
    assert.deepEqual([longest.spec.intervals?.map((interval) => interval.every), longest.policies.catchupWindow], [[365 * 86_400_000], 365 * 86_400_000]);

    const taken = await create('sched-compound', '--every', '1h');
    assert.equal(taken.code, 1, taken.stderr);
    assert.equal(taken.stderr, 'crawlflow: schedule "sched-compound" already exists: choose another ID, or delete it first (crawlflow schedule delete sched-compound)\n');

    const badCron = await create('sched-bad-cron', '--cron', '99 * * * *');
    assert.equal(badCron.code, 2, badCron.stderr);
    assert.equal(badCron.stderr, 'crawlflow: --cron "99 * * * *": Minute is not in range [0-59]\n');

    // What the server takes besides five fields (macros, @every, a time zone) is not refused before it is asked; what it refuses is one line.
    for (const [id, cron] of [['sched-daily', '@daily'], ['sched-every', '@every 1h30m'], ['sched-berlin', 'CRON_TZ=Europe/Berlin 0 3 * * 1-5']]) {
      const taken = await create(id, '--cron', cron);
      assert.equal(taken.code, 0, `${cron}: ${taken.stderr}`);
      assert.equal(taken.stdout, `schedule ${id} created\n`);
    }
    const daily = (await env.client.schedule.getHandle('sched-daily').describe()).spec.calendars;
    assert.deepEqual([daily?.length, daily?.[0].hour, daily?.[0].minute], [1, [{ start: 0, end: 0, step: 1 }], [{ start: 0, end: 0, step: 1 }]], '@daily: at midnight');
    assert.deepEqual((await env.client.schedule.getHandle('sched-every').describe()).spec.intervals?.map((interval) => interval.every), [90 * 60_000]);
    for (const [cron, reason] of [['@dialy', 'CronString does not have 5-7 fields'], ['0 3 * *', 'CronString does not have 5-7 fields'], ['@every banana', 'time: invalid duration "banana"']]) {
      const refused = await create('sched-refused', '--cron', cron);
      assert.equal(refused.code, 2, refused.stderr);
      assert.equal(refused.stderr, `crawlflow: --cron "${cron}": ${reason}\n`);
    }

    for (const command of ['describe', 'pause', 'unpause', 'trigger', 'delete']) {
      const unknown = await runCli(['schedule', command, 'no-such-schedule'], cliEnv);
      assert.equal(unknown.code, 1, `${command}: ${unknown.stderr}`);
      assert.equal(unknown.stderr, 'crawlflow: no schedule "no-such-schedule"\n', command);
    }
    for (const id of ['sched-compound', 'team/sched yearly', 'sched-daily', 'sched-every', 'sched-berlin']) assert.equal((await runCli(['schedule', 'delete', id], cliEnv)).code, 0);
  });

  it('schedule trigger starts a crawl under the schedule\'s overlap policy, and says which crawl, or why none', async () => {
    const cliEnv = { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_TASK_QUEUE: queue, CRAWLFLOW_DATA_DIR: env.dataDir };
    // Three pages 5 s apart: the first crawl is still running when the second trigger comes.
    const slow = (id: string, overlap: string) => runCli(['schedule', 'create', id, site.urlOf(0), '--every', '1h', '--paused', '--overlap', overlap, '--delay-ms', '5000', '--max-pages', '3'], cliEnv);
    const trigger = (id: string) => runCli(['schedule', 'trigger', id], cliEnv);
    const crawlsOf = async (id: string) => (await env.client.schedule.getHandle(id).describe()).info.recentActions.map((action) => action.action.workflow.workflowId);
    for (const [id, overlap] of [['trigger-skip', 'skip'], ['trigger-buffer', 'buffer-one']]) assert.equal((await slow(id, overlap)).code, 0, id);

    const first = await trigger('trigger-skip');
    assert.equal(first.code, 0, first.stderr);
    const [running] = await crawlsOf('trigger-skip');
    assert.equal(first.stdout, `schedule trigger: trigger-skip: started crawl ${running}\n`);
    const second = await trigger('trigger-skip');
    assert.equal(second.code, 1);
    assert.equal(second.stderr, `crawlflow: schedule "trigger-skip" started no crawl: ${running} is still running, and its overlap policy is skip\n`);
    assert.equal(second.stdout, '');
    assert.deepEqual(await crawlsOf('trigger-skip'), [running], 'no second crawl beside the running one');
    assert.deepEqual(await listIds(env, "WorkflowId STARTS_WITH 'trigger-skip'", 1), [running]);

    const buffered = await trigger('trigger-buffer');
    assert.equal(buffered.code, 0, buffered.stderr);
    const [bufferRunning] = await crawlsOf('trigger-buffer');
    assert.equal((await trigger('trigger-buffer')).stdout, `schedule trigger: trigger-buffer: no crawl started yet (overlap buffer-one; running: ${bufferRunning})\n`);
    assert.deepEqual(await crawlsOf('trigger-buffer'), [bufferRunning]);

    for (const id of ['trigger-skip', 'trigger-buffer']) assert.equal((await runCli(['schedule', 'delete', id], cliEnv)).code, 0);
    for (const id of [running, bufferRunning]) await crawlHandle(env.client, id).cancel();
  });

  it('the client example starts a crawl, follows its progress and reads its results', async () => {
    const { stdout } = await execFileAsync(process.execPath, [join(projectRoot, 'dist', 'examples', 'crawl-client.js'), site.urlOf(0)], {
      env: { ...process.env, TEMPORAL_ADDRESS: env.address, CRAWLFLOW_TASK_QUEUE: queue, CRAWLFLOW_DATA_DIR: env.dataDir },
    });
    assert.match(stdout, /^summary max-pages-reached: 100 fetched, 0 errors$/m);
    assert.equal(stdout.split('\n').filter((line) => line.startsWith('page 200 ')).length, 100);
  });
});
