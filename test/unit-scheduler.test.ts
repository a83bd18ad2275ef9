/**
 * The pure scheduler (src/scheduling), without Temporal: its rules one by one, then
 * property-style runs against a model of the store (seeded random crawls over many hosts,
 * with failures, outages, pauses and limit changes), checking the invariants after every
 * step: never above a limit, never a URL in two batches, the budget exact, no host starved.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CrawlScheduler, FRUITLESS_RETRY_MS, initialSchedulerState, type Launch, type SchedulerState } from '../src/scheduling/crawl-scheduler';
import { planOf, type CrawlPlan } from '../src/scheduling/crawl-plan';
import { ProgressRefresh } from '../src/scheduling/progress-refresh';
import { parseCrawlConfig, type CrawlInput } from '../src/shared/crawl-config';
import type { BatchReport, CrawlView } from '../src/shared/crawl-types';
import { seededRandom } from '../src/sites/synthetic-site';

const NO_TOTALS = { processed: 0, fetched: 0, errors: 0, skipped: 0, bytes: 0 };

function plan(input: Partial<CrawlInput> = {}): CrawlPlan {
  return planOf(parseCrawlConfig({ seeds: ['http://a.test/'], ...input }), 1);
}

function view(version: number, hosts: Record<string, number>, processed = 0): CrawlView {
  const entries = Object.entries(hosts).filter(([, queued]) => queued > 0);
  return {
    version,
    queued: entries.reduce((sum, [, queued]) => sum + queued, 0),
    hosts: entries.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([host, queued]) => ({ host, queued })),
    totals: { ...NO_TOTALS, processed },
  };
}

const hostsOf = (launch: Launch): string[] => launch.shares.map(({ host }) => host);

/** A crawl of a.test started from its seed: the seed's batch, and a batch waiting for work in every other slot. */
function startedFromSeed(p: CrawlPlan): { scheduler: CrawlScheduler; seed: Launch; waiting: Launch[] } {
  const scheduler = new CrawlScheduler(p, initialSchedulerState(p, view(1, { 'a.test': 1 })));
  const [seed, ...waiting] = scheduler.launches(0);
  assert.deepEqual([hostsOf(seed), waiting.length, waiting.every((launch) => launch.waits === true)], [['a.test'], p.limits.concurrency - 1, true]);
  return { scheduler, seed, waiting };
}
const limitOf = (launch: Launch): number => launch.shares.reduce((sum, share) => sum + share.limit, 0);
/** What a batch may claim in all: its shares and its fill. */
const orderedOf = (launch: Launch): number => limitOf(launch) + launch.fill;

function done(launch: Launch, next: CrawlView, deferUntil: number | null = null, claimed = limitOf(launch)): Extract<BatchReport, { kind: 'done' }> {
  const deferred = deferUntil === null ? [] : hostsOf(launch).map((host) => ({ host, until: deferUntil }));
  return { kind: 'done', batchId: String(launch.seq), hosts: hostsOf(launch), claimed, deferred, view: next };
}

describe('CrawlScheduler rules', () => {
  it('splits a host backlog over its batch slots, within the batch size and the crawl concurrency', () => {
    const p = plan({ concurrency: 3, perHostConcurrency: 2, batchSize: 50 });
    const scheduler = new CrawlScheduler(p, initialSchedulerState(p, view(1, { 'a.test': 30, 'b.test': 500 })));
    const launches = scheduler.launches(0);
    assert.deepEqual(
      launches.map(({ shares }) => shares.map(({ host, limit }) => [host, limit])),
      [[['b.test', 50]], [['a.test', 15]], [['b.test', 50]]],
    );
    assert.deepEqual(scheduler.launches(0), [], 'at the crawl concurrency nothing more starts');
  });

  it('packs small hosts into full batches when there are more hosts than batch slots', () => {
    const p = plan({ concurrency: 2, perHostConcurrency: 2, batchSize: 10 });
    const hosts = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`h${i}.test`, 3]));
    const scheduler = new CrawlScheduler(p, initialSchedulerState(p, view(1, hosts)));
    const launches = scheduler.launches(0);
    assert.deepEqual(
      launches.map(({ shares }) => shares.map(({ host, limit }) => `${host}:${limit}`)),
      [
        ['h0.test:3', 'h1.test:3', 'h2.test:3', 'h3.test:1'],
        ['h4.test:3', 'h5.test:3', 'h6.test:3', 'h7.test:1'],
      ],
    );
    const few = plan({ concurrency: 8, perHostConcurrency: 2, batchSize: 10 });
    const spread = new CrawlScheduler(few, initialSchedulerState(few, view(1, { 'a.test': 3, 'b.test': 3 }))).launches(0);
    assert.deepEqual(
      spread.map((launch) => [hostsOf(launch), launch.waits ?? false]),
      [[['a.test'], false], [['b.test'], false], [['a.test'], false], [['b.test'], false], [[], true], [[], true], [[], true], [[], true]],
      'with slots to spare, hosts are not packed: each is split over its slots, and the slots left wait for work',
    );
  });

  it('never reserves more than the page budget, and ends max-pages-reached with the budget spent', () => {
    const p = plan({ maxPages: 7, batchSize: 5, concurrency: 4, perHostConcurrency: 4 });
    const scheduler = new CrawlScheduler(p, initialSchedulerState(p, view(1, { 'a.test': 100 })));
    const launches = scheduler.launches(0);
    assert.deepEqual(launches.map(limitOf), [5, 2]);
    scheduler.batchEnded(launches[0].seq, done(launches[0], view(2, { 'a.test': 95 }, 5)), 1);
    assert.equal(scheduler.outcome(), null, 'a batch still runs');
    scheduler.batchEnded(launches[1].seq, done(launches[1], view(3, { 'a.test': 93 }, 7)), 2);
    assert.deepEqual(scheduler.launches(3), []);
    assert.equal(scheduler.outcome(), 'max-pages-reached');
  });

  it('the budget is spent for new URLs once pages done and running shares reach it; a filling batch leaves it open', () => {
    const shares = plan({ maxPages: 2, batchSize: 5, concurrency: 1 });
    const held = new CrawlScheduler(shares, initialSchedulerState(shares, view(1, { 'a.test': 10 })));
    assert.equal(held.budgetSpent(), false, 'nothing launched yet');
    const [share] = held.launches(0);
    assert.deepEqual([limitOf(share), share.fill], [2, 0]);
    assert.equal(held.budgetSpent(), true, 'its one batch takes the whole budget from the backlog the view named');
    held.batchEnded(share.seq, done(share, view(2, { 'a.test': 8 }, 2)), 1);
    assert.deepEqual([held.budgetSpent(), held.outcome()], [true, 'max-pages-reached']);

    const fills = plan({ maxPages: 4, batchSize: 5, concurrency: 2 });
    const filling = new CrawlScheduler(fills, initialSchedulerState(fills, view(1, { 'a.test': 1 })));
    const [first, waiting] = filling.launches(0);
    assert.deepEqual([limitOf(first), waiting.fill, waiting.waits, filling.budgetLeft()], [1, 3, true, 0], 'the whole budget reserved, 3 of it by a fill');
    assert.equal(filling.budgetSpent(), false, 'the waiting batch may take a URL queued now');
    filling.batchEnded(first.seq, done(first, view(2, {}, 1)), 1);
    assert.equal(filling.budgetSpent(), false);
    filling.batchEnded(waiting.seq, done(waiting, view(3, { 'a.test': 5 }, 4), null, 3), 2);
    assert.equal(filling.budgetSpent(), true, 'pages done reach the budget');
  });

  it('holds a host that asked to wait, wakes for it, and launches it again once the time has come', () => {
    const p = plan({ concurrency: 2, perHostConcurrency: 1 });
    const scheduler = new CrawlScheduler(p, initialSchedulerState(p, view(1, { 'a.test': 10 })));
    const [first] = scheduler.launches(0);
    scheduler.batchEnded(first.seq, done(first, view(2, { 'a.test': 9 }, 1), 5_000), 100);
    assert.deepEqual(scheduler.launches(100), []);
    assert.deepEqual(scheduler.nextWake(100), { at: 5_000, why: 'a.test asked us to wait' }, 'a worker that gave no reason');
    assert.deepEqual(scheduler.hostState('a.test', 100), { host: 'a.test', queued: 9, batchesInFlight: 0, readyAt: 5_000, holdReason: null });
    assert.equal(scheduler.launches(5_000).length, 1);
  });

  it("says why a host is held while it is, and carries the reason over to the next run; a state from an older run has none", () => {
    const p = plan({ concurrency: 2, perHostConcurrency: 1 });
    const scheduler = new CrawlScheduler(p, initialSchedulerState(p, view(1, { 'a.test': 10 })));
    const [first] = scheduler.launches(0);
    const reason = 'HTTP 429 with Retry-After 5 s';
    const held = { ...done(first, view(2, { 'a.test': 9 }, 1)), deferred: [{ host: 'a.test', until: 5_000, reason }] };
    scheduler.batchEnded(first.seq, held, 100);
    assert.deepEqual(scheduler.nextWake(100), { at: 5_000, why: `a.test is held: ${reason}` });
    assert.deepEqual(scheduler.hostState('a.test', 100), { host: 'a.test', queued: 9, batchesInFlight: 0, readyAt: 5_000, holdReason: reason });
    assert.deepEqual(scheduler.heldHosts(100, 5), [scheduler.hostState('a.test', 100)], "the Web UI's current details list it");
    assert.equal(scheduler.hostState('a.test', 5_000).holdReason, null, 'not once the time has come');
    assert.deepEqual(scheduler.heldHosts(5_000, 5), []);

    const carried = scheduler.carried();
    assert.deepEqual(carried.holdReasons, { 'a.test': reason });
    assert.equal(new CrawlScheduler(p, carried).hostState('a.test', 100).holdReason, reason);
    const older: SchedulerState = { ...carried };
    delete older.holdReasons;
    assert.deepEqual(new CrawlScheduler(p, older).hostState('a.test', 100), { host: 'a.test', queued: 9, batchesInFlight: 0, readyAt: 5_000, holdReason: null });

    const [second] = scheduler.launches(5_000);
    scheduler.batchEnded(second.seq, done(second, view(3, { 'a.test': 8 }, 2)), 5_100);
    assert.deepEqual(scheduler.carried().holdReasons, {}, 'a passed hold is forgotten with its reason');
  });

  it("keeps a hold's reason when another batch that met the same hold reports it without one", () => {
    const p = plan({ concurrency: 2, perHostConcurrency: 2 });
    const scheduler = new CrawlScheduler(p, initialSchedulerState(p, view(1, { 'a.test': 10 })));
    const [first, second] = scheduler.launches(0);
    const reason = 'HTTP 503 with Retry-After 60 s';
    scheduler.batchEnded(first.seq, { ...done(first, view(2, { 'a.test': 9 }, 1)), deferred: [{ host: 'a.test', until: 60_000, reason }] }, 100);
    scheduler.batchEnded(second.seq, done(second, view(3, { 'a.test': 8 }, 2), 60_000), 200);
    assert.equal(scheduler.hostState('a.test', 300).holdReason, reason);
  });

  it('a host override sets its host concurrency; an override without one leaves the crawl default', () => {
    const p = plan({ concurrency: 10, perHostConcurrency: 1, batchSize: 1, hosts: { '*.a.test': { perHostConcurrency: 3 }, 'x.a.test': { delayMs: 5 } } });
    const scheduler = new CrawlScheduler(p, initialSchedulerState(p, view(1, { 'y.a.test': 10, 'x.a.test': 10, 'b.test': 10 })));
    const perHost = new Map<string, number>();
    for (const launch of scheduler.launches(0)) for (const host of hostsOf(launch)) perHost.set(host, (perHost.get(host) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(perHost), { 'y.a.test': 3, 'x.a.test': 1, 'b.test': 1 });
  });

  it('caps render batches in flight, and counts them against the host', () => {
    const p = plan({ concurrency: 10, perHostConcurrency: 3, batchSize: 1, render: { match: ['/app/**'], maxConcurrentPages: 1 } });
    const state = initialSchedulerState(p, { ...view(1, {}), queued: 20, hosts: [{ host: 'a.test', queued: 20, rendering: 10 }] });
    const launches = new CrawlScheduler(p, state).launches(0);
    assert.equal(launches.filter((launch) => launch.render).length, 1);
    assert.equal(launches.length, 3);
  });

  it('a store outage parks the batch, stops launching, shows the wait, and recovers', () => {
    const p = plan({ concurrency: 2, perHostConcurrency: 2, batchSize: 5 });
    const scheduler = new CrawlScheduler(p, initialSchedulerState(p, view(1, { 'a.test': 20 })));
    const [first, second] = scheduler.launches(0);
    scheduler.batchEnded(first.seq, { kind: 'store-unavailable', batchId: '1', hosts: ['a.test'], message: 'the frontier store cannot be reached: ECONNREFUSED' }, 10);
    assert.equal(scheduler.status(), 'waiting-for-store');
    assert.deepEqual(scheduler.counts().storeWait, { since: 10, message: 'the frontier store cannot be reached: ECONNREFUSED' });
    assert.deepEqual(scheduler.launches(20), [], 'nothing starts while the store is away');
    assert.deepEqual(scheduler.parkedBatches(), [first.seq]);
    scheduler.batchEnded(second.seq, done(second, view(2, { 'a.test': 10 }, 5)), 30);
    assert.equal(scheduler.outcome(), null, 'a parked batch still holds its claims');
    scheduler.storeRecovered([first.seq], view(3, { 'a.test': 15 }, 5));
    assert.equal(scheduler.status(), 'running');
    assert.equal(scheduler.counts().storeWait, null);
    assert.equal(scheduler.launches(40).length, 2);
  });

  it('fails fast when every host fails the same way, not while other hosts still make progress', () => {
    const secret = { code: 'request-secret', message: 'headersFromEnv.x-token: environment variable TOKEN is not set on this worker' };
    const single = plan({ concurrency: 1 });
    const alone = new CrawlScheduler(single, initialSchedulerState(single, view(1, { 'a.test': 100 })));
    for (let n = 1; n <= 2; n++) {
      const [launch] = alone.launches(0);
      alone.batchFailed(launch.seq, secret);
      alone.batchAbandoned(launch.seq, view(n + 1, { 'a.test': 100 - 50 * n }, 50 * n));
    }
    assert.deepEqual(alone.fatal(), secret, 'one host, failing batch after batch: nothing can progress');
    assert.equal(alone.outcome(), 'failed');

    const onePage = new CrawlScheduler(single, initialSchedulerState(single, view(1, { 'a.test': 1 })));
    const [only] = onePage.launches(0);
    onePage.batchFailed(only.seq, secret);
    onePage.batchAbandoned(only.seq, { ...view(2, {}), totals: { ...NO_TOTALS, processed: 1, errors: 1 } });
    assert.equal(onePage.outcome(), 'failed', 'a crawl whose every batch failed has crawled nothing: it fails');

    const waited = plan({ concurrency: 2 });
    const seedFails = new CrawlScheduler(waited, initialSchedulerState(waited, view(1, { 'a.test': 1 })));
    const [seed, waiting] = seedFails.launches(0);
    assert.equal(waiting.waits, true);
    seedFails.batchFailed(seed.seq, secret);
    seedFails.batchAbandoned(seed.seq, { ...view(2, {}), totals: { ...NO_TOTALS, processed: 1, errors: 1 } });
    seedFails.batchEnded(waiting.seq, done(waiting, { ...view(3, {}), totals: { ...NO_TOTALS, processed: 1, errors: 1 } }, null, 0), 1);
    assert.equal(seedFails.outcome(), 'failed', 'a waiting batch that found no work is no success: the crawl still fails');

    const mixed = plan({ concurrency: 2, perHostConcurrency: 1, batchSize: 5 });
    const scheduler = new CrawlScheduler(mixed, initialSchedulerState(mixed, view(1, { 'bad.test': 20, 'good.test': 20 })));
    let version = 1;
    for (let round = 0; round < 4; round++) {
      for (const launch of scheduler.launches(0)) {
        version += 1;
        if (hostsOf(launch).includes('bad.test')) {
          scheduler.batchFailed(launch.seq, secret);
          scheduler.batchAbandoned(launch.seq, view(version, { 'bad.test': 15 - 5 * round, 'good.test': 15 - 5 * round }));
        } else scheduler.batchEnded(launch.seq, done(launch, view(version, { 'bad.test': 15 - 5 * round, 'good.test': 15 - 5 * round })), 0);
      }
      assert.equal(scheduler.fatal(), null, `round ${round}: the good host still progresses`);
    }
    assert.deepEqual(scheduler.counts().failures, [{ ...secret, batches: 4 }]);
  });

  it('hands over: no launches, and continue-as-new once the running batches are back', () => {
    const p = plan({ concurrency: 2, perHostConcurrency: 2 });
    const scheduler = new CrawlScheduler(p, initialSchedulerState(p, view(1, { 'a.test': 200 })));
    const launches = scheduler.launches(0);
    scheduler.handOver();
    assert.deepEqual(scheduler.launches(0), []);
    for (const launch of launches) scheduler.batchEnded(launch.seq, done(launch, view(launch.seq + 1, { 'a.test': 150 }, 50)), 0);
    assert.equal(scheduler.outcome(), 'continue-as-new');
    const next = new CrawlScheduler(p, scheduler.carried());
    assert.equal(next.launches(0)[0].seq, 3, 'sequence numbers go on in the next run');
  });

  it("at a crawl's start the free slots get batches that wait for work, until the frontier outgrows them", () => {
    const p = plan({ concurrency: 4, perHostConcurrency: 4, batchSize: 50 });
    const scheduler = new CrawlScheduler(p, initialSchedulerState(p, view(1, { 'a.test': 1 })));
    const first = scheduler.launches(0);
    assert.deepEqual(
      first.map((launch) => [hostsOf(launch), limitOf(launch), launch.fill, launch.waits ?? false]),
      [
        [['a.test'], 1, 0, false],
        [[], 0, 50, true],
        [[], 0, 50, true],
        [[], 0, 50, true],
      ],
      'the seed, and three batches for the links its page will queue',
    );
    scheduler.batchEnded(first[0].seq, done(first[0], view(2, { 'a.test': 12 }, 1)), 1);
    assert.deepEqual(
      scheduler.launches(1).map((launch) => [hostsOf(launch), limitOf(launch), launch.fill, launch.waits ?? false]),
      [[['a.test'], 12, 0, false]],
      'a frontier as long as the free slots: a share, no wait',
    );

    const empty = new CrawlScheduler(p, initialSchedulerState(p, view(1, {})));
    assert.deepEqual(empty.launches(0), [], 'nothing running finds links: nothing waits for them');
    const recorded = { ...p, waitsForWork: undefined };
    const before = new CrawlScheduler(recorded, initialSchedulerState(recorded, view(1, { 'a.test': 1 }))).launches(0);
    assert.deepEqual(before.map(hostsOf), [['a.test']], 'a plan recorded before waiting batches launches the seed alone, as it did');
  });

  it('past the hosts a view names, batches fill from the store: topped up, then fill-only ones sized by the budget', () => {
    const p = plan({ concurrency: 4, perHostConcurrency: 1, batchSize: 10 });
    // Two hosts named, 30 more URLs on hosts the view leaves out.
    const named = { ...view(1, { 'a.test': 3, 'b.test': 2 }), queued: 35 };
    const scheduler = new CrawlScheduler(p, initialSchedulerState(p, named));
    const launches = scheduler.launches(0);
    assert.deepEqual(
      launches.map((launch) => [launch.shares.map(({ host, limit }) => `${host}:${limit}`), launch.fill]),
      [
        [['a.test:3'], 6],
        [['b.test:2'], 7],
        [[], 10],
        [[], 10],
      ],
      'each named host topped up to 35 / 4 slots = 9 URLs, then full fill-only batches for what the view leaves out',
    );
    assert.equal(scheduler.budgetLeft(), p.maxPages - 38, 'fill counts against the budget');

    const budget = plan({ concurrency: 4, perHostConcurrency: 1, batchSize: 10, maxPages: 10 });
    const spread = new CrawlScheduler(budget, initialSchedulerState(budget, { ...view(1, {}), queued: 50 })).launches(0);
    assert.deepEqual(spread.map((launch) => launch.fill), [3, 3, 2, 2], 'a small budget is spread over the slots, not spent by one batch');

    const whole = new CrawlScheduler(p, initialSchedulerState(p, view(1, { 'a.test': 3, 'b.test': 2 })));
    assert.deepEqual(
      whole.launches(0).map((launch) => [hostsOf(launch), launch.fill, launch.waits ?? false]),
      [[['a.test'], 0, false], [['b.test'], 0, false], [[], 10, true], [[], 10, true]],
      'a view that names every host leaves nothing to fill: the free slots wait for work',
    );

    const recorded = { ...p, fillsFromStore: undefined };
    const before = new CrawlScheduler(recorded, initialSchedulerState(recorded, named)).launches(0);
    assert.deepEqual(
      before.map((launch) => [hostsOf(launch), launch.fill]),
      [
        [['a.test'], 0],
        [['b.test'], 0],
      ],
      'a plan recorded before fills schedules the named hosts only',
    );
  });

  it('a filling batch that found nothing stops launches until a batch claims again, or a second passes with none running', () => {
    const p = plan({ concurrency: 2, perHostConcurrency: 1, batchSize: 10 });
    const unnamed = { ...view(1, {}), queued: 50 };
    const scheduler = new CrawlScheduler(p, initialSchedulerState(p, unnamed));
    const [first, second] = scheduler.launches(0);
    assert.deepEqual([first.fill, second.fill], [10, 10]);
    scheduler.batchEnded(first.seq, done(first, { ...unnamed, version: 2 }, null, 0), 100);
    assert.deepEqual(scheduler.launches(100), [], 'the store had nothing: no new batch while another runs');
    scheduler.batchEnded(second.seq, done(second, { ...unnamed, version: 3 }, null, 0), 200);
    assert.deepEqual(scheduler.launches(200), []);
    assert.deepEqual(scheduler.nextWake(200), { at: 200 + FRUITLESS_RETRY_MS, why: 'the store (no key was free) asked us to wait' });
    assert.equal(scheduler.outcome(), null, 'the crawl waits, it does not end');
    assert.deepEqual(scheduler.launches(199 + FRUITLESS_RETRY_MS), []);
    const retry = scheduler.launches(200 + FRUITLESS_RETRY_MS);
    assert.equal(retry.length, 2);
    scheduler.batchEnded(retry[0].seq, done(retry[0], { ...unnamed, version: 4, queued: 40 }, null, 10), 1_200);
    assert.equal(scheduler.launches(1_200).length, 1, 'a batch that claimed lets launches go on');
  });

  it('a filling batch that found nothing and read when a key is claimable: the store is asked again then, unless another batch ends meanwhile', () => {
    const p = plan({ concurrency: 2, perHostConcurrency: 1, batchSize: 10 });
    const unnamed = { ...view(1, {}), queued: 50 };
    const fruitless = (launch: Launch, version: number, claimableAt: number) => ({ ...done(launch, { ...unnamed, version }, null, 0), claimableAt });
    const bothFruitless = (heed: boolean): CrawlScheduler => {
      const scheduler = new CrawlScheduler(p, initialSchedulerState(p, unnamed));
      const [first, second] = scheduler.launches(0);
      scheduler.batchEnded(first.seq, fruitless(first, 2, 5_000), 100, heed);
      scheduler.batchEnded(second.seq, fruitless(second, 3, 6_000), 200, heed);
      return scheduler;
    };

    const heeding = bothFruitless(true);
    assert.deepEqual(heeding.nextWake(200), { at: 6_000, why: 'every key with backlog is held' }, 'the last report read the store last');
    assert.deepEqual(heeding.launches(200 + FRUITLESS_RETRY_MS), [], 'no key to claim a second on');
    assert.equal(heeding.storeRetryDue(5_999), false);
    assert.deepEqual(heeding.nextWake(5_999, heeding.storeRetryDue(5_999)), { at: 6_000, why: 'every key with backlog is held' });
    assert.equal(heeding.launches(6_000).length, 2, 'filling batches once a key is claimable');

    const before = bothFruitless(false);
    assert.deepEqual(before.nextWake(200), { at: 200 + FRUITLESS_RETRY_MS, why: 'the store (no key was free) asked us to wait' }, 'as histories before the patch have it');
    assert.equal(before.launches(200 + FRUITLESS_RETRY_MS).length, 2);

    const soon = new CrawlScheduler(p, initialSchedulerState(p, unnamed));
    const [filling, other] = soon.launches(0);
    soon.batchEnded(filling.seq, fruitless(filling, 2, 9_000), 100, true);
    soon.batchAbandoned(other.seq);
    assert.deepEqual(soon.nextWake(100), { at: 100 + FRUITLESS_RETRY_MS, why: 'the store (no key was free) asked us to wait' }, 'a cancelled batch gave its claims back since the store was read');
    assert.equal(soon.launches(100 + FRUITLESS_RETRY_MS).length, 2);
  });

  it("splits a host's links over the batches still waiting for work, so the one free slot's batch takes its part only", () => {
    // The start of a one-host crawl whose waiting batches' activities start after the seed's batch reported.
    const p = plan({ concurrency: 8, perHostConcurrency: 8, batchSize: 50 });
    const started = (): CrawlScheduler => {
      const { scheduler, seed } = startedFromSeed(p);
      scheduler.batchEnded(seed.seq, done(seed, view(2, { 'a.test': 12 }, 1)), 100);
      assert.equal(scheduler.waitingBatches(), 7);
      return scheduler;
    };
    const shares = (launches: Launch[]) => launches.map(({ shares: [share] }) => [share.host, share.limit]);
    assert.deepEqual(shares(started().launches(100, true)), [['a.test', 2]], 'twelve links over eight slots: the seven waiting take the rest from the store');
    assert.deepEqual(shares(started().launches(100)), [['a.test', 12]], 'as histories before the patch have it: all twelve into the one free slot');
  });

  it("a store retry that launched nothing, every key with backlog held, wakes the crawl at the hold's end, not again at once", () => {
    // The sequence of a one-host crawl whose host answered 429 with Retry-After: 11.
    const p = plan({ concurrency: 2, perHostConcurrency: 1, batchSize: 10 });
    const scheduler = new CrawlScheduler(p, initialSchedulerState(p, view(1, { 'a.test': 1 })));
    const [seed, waiting] = scheduler.launches(0);
    assert.equal(waiting.waits, true);
    const reason = 'HTTP 429 with Retry-After 11 s';
    scheduler.batchEnded(seed.seq, { ...done(seed, view(3, { 'a.test': 2 }, 1)), deferred: [{ host: 'a.test', until: 11_500, reason }] }, 500);
    scheduler.batchEnded(waiting.seq, done(waiting, view(3, { 'a.test': 2 }, 1), null, 0), 600);
    assert.deepEqual(scheduler.launches(600), []);
    assert.deepEqual(scheduler.nextWake(600, scheduler.storeRetryDue(600)), { at: 600 + FRUITLESS_RETRY_MS, why: 'the store (no key was free) asked us to wait' });

    const due = 600 + FRUITLESS_RETRY_MS;
    assert.deepEqual(scheduler.launches(due), [], 'the held host has all the backlog');
    assert.equal(scheduler.storeRetryDue(due), true);
    assert.deepEqual(scheduler.nextWake(due, true), { at: 11_500, why: `a.test is held: ${reason}` });
    assert.deepEqual(scheduler.nextWake(due), { at: due, why: 'the store (no key was free) asked us to wait' }, 'as histories before the patch have it');
    assert.deepEqual(hostsOf(scheduler.launches(11_500)[0]), ['a.test'], 'the host, once its hold ends');
    assert.equal(scheduler.storeRetryDue(11_500), false, 'a batch runs');
  });

  it('seeds added after a waiting batch found nothing are launched at once, while batches held on slow pages run on', () => {
    // The sequence of a crawl of a.test whose pages hang, then `addSeeds` of b.test.
    const p = plan({ concurrency: 8, perHostConcurrency: 2, batchSize: 10 });
    const heldOnA = (): CrawlScheduler => {
      const { scheduler, seed, waiting } = startedFromSeed(p);
      // The seed's two links went to two waiting batches, which hang on them; five waited 10 s for nothing.
      scheduler.batchEnded(seed.seq, done(seed, view(5, {}, 1)), 100);
      for (const launch of waiting.slice(2)) scheduler.batchEnded(launch.seq, done(launch, view(7, {}, 1), null, 0), 10_000);
      assert.deepEqual(scheduler.launches(10_000), [], 'the store had nothing: no new batch while two run');
      assert.equal(scheduler.counts().batchesInFlight, 2);
      return scheduler;
    };
    const appended = view(8, { 'b.test': 1 }, 1);

    const scheduler = heldOnA();
    scheduler.seedsAdded(appended, 1);
    // A report read before appendSeeds' view (an older version) arriving after it changes nothing.
    scheduler.batchAbandoned(99, view(7, {}, 1));
    assert.equal(scheduler.counts().queued, 1);
    const added = scheduler.launches(12_000);
    assert.deepEqual(
      added.map((launch) => [hostsOf(launch), limitOf(launch), launch.fill, launch.waits ?? false]),
      [[['b.test'], 1, 0, false], ...Array.from({ length: 5 }, () => [[], 0, 10, true])],
      "the added seed at once, and the free slots wait for its page's links",
    );
    // Its page queued 10 links, which two of the waiting batches took: none is left unscheduled.
    scheduler.batchEnded(added[0].seq, done(added[0], view(12, {}, 2)), 12_500);
    assert.equal(scheduler.counts().queued, 0);

    const known = heldOnA();
    known.seedsAdded(appended, 0);
    assert.deepEqual(known.launches(12_000), [], 'seeds the crawl knew already are no new work: launches stay stopped');
    const unpatched = heldOnA();
    unpatched.acceptView(appended);
    assert.deepEqual(unpatched.launches(12_000), [], 'as histories recorded before the patch did, the view alone launches nothing');
  });

  it('keeps the newest view, and of two views with one version the one with more pages done', () => {
    const p = plan();
    const scheduler = new CrawlScheduler(p, initialSchedulerState(p, view(5, { 'a.test': 10 }, 3)));
    scheduler.acceptView(view(4, { 'a.test': 20 }, 1));
    assert.equal(scheduler.view.totals.processed, 3);
    scheduler.acceptView(view(5, { 'a.test': 9 }, 4));
    assert.equal(scheduler.view.totals.processed, 4);
  });
});

/**
 * A store as the scheduler sees it: queued URLs per host, claims per batch, pages done. Its
 * views name the `maxHosts` biggest hosts only, as the real store's do, and it fills batches
 * from the hosts held by fewer than the key concurrency, checking the holders as it claims.
 */
class ModelStore {
  readonly queued = new Map<string, number[]>();
  readonly claims = new Map<number, Array<{ host: string; urls: number[] }>>();
  readonly done = new Set<number>();
  private nextUrl = 0;
  version = 0;

  constructor(private readonly maxHosts = Number.MAX_SAFE_INTEGER) {}

  add(host: string, n: number): void {
    const urls = this.queued.get(host) ?? [];
    for (let i = 0; i < n; i++) urls.push(this.nextUrl++);
    this.queued.set(host, urls);
    this.version += 1;
  }

  get total(): number {
    return this.nextUrl;
  }

  private holders(host: string): number {
    return [...this.claims.values()].filter((claim) => claim.some((part) => part.host === host && part.urls.length > 0)).length;
  }

  /** Claims the launch's shares, then its fill from free hosts, biggest first; returns the URLs claimed. */
  claim(seq: number, { shares, fill }: Launch, holdersAllowed: number): number {
    this.claims.set(seq, []);
    const claimed = this.claims.get(seq)!;
    const take = (host: string, limit: number): number => {
      if (limit <= 0 || this.holders(host) >= holdersAllowed) return 0;
      const urls = (this.queued.get(host) ?? []).splice(0, limit);
      if (urls.length > 0) claimed.push({ host, urls });
      assert.ok(this.holders(host) <= holdersAllowed, `${this.holders(host)} batches hold ${host}, over ${holdersAllowed}`);
      return urls.length;
    };
    let n = 0;
    for (const { host, limit } of shares) n += take(host, limit);
    let room = fill;
    const free = [...this.queued].filter(([, urls]) => urls.length > 0).sort((a, b) => b[1].length - a[1].length);
    for (const [host] of free) room -= take(host, room);
    this.assertUnique(seq);
    this.version += 1;
    return n + fill - room;
  }

  private assertUnique(seq: number): void {
    const claimed = this.claims.get(seq)!;
    for (const [other, claim] of this.claims) {
      if (other === seq) continue;
      for (const { urls } of claimed) for (const url of urls) assert.ok(!claim.some((part) => part.urls.includes(url)), `URL ${url} in batches ${other} and ${seq}`);
    }
  }

  hostsClaimed(seq: number): string[] {
    return this.claims.get(seq)!.map(({ host }) => host);
  }

  finish(seq: number): void {
    for (const { urls } of this.claims.get(seq)!) {
      for (const url of urls) {
        assert.ok(!this.done.has(url), `URL ${url} finished twice`);
        this.done.add(url);
      }
    }
    this.claims.delete(seq);
    this.version += 1;
  }

  release(seq: number): void {
    for (const { host, urls } of this.claims.get(seq)!) this.queued.get(host)!.unshift(...urls);
    this.claims.delete(seq);
    this.version += 1;
  }

  view(): CrawlView {
    const hosts = Object.fromEntries([...this.queued].map(([host, urls]) => [host, urls.length]));
    const whole = view(this.version, hosts, this.done.size);
    return { ...whole, hosts: whole.hosts.slice(0, this.maxHosts) };
  }
}

/** One seeded random crawl, checking the invariants after every step; returns what it did. */
interface RandomCrawl {
  outcome: string;
  done: number;
  total: number;
  maxPages: number;
  launchedHosts: Set<string>;
  hosts: number;
  /** Batches ordered to fill from the store with the work they are launched for. */
  fills: number;
  /** Batches launched to wait for work (`Launch.waits`). */
  waiting: number;
}

function randomCrawl(seed: number): RandomCrawl {
  const random = seededRandom(seed);
  const pick = (n: number): number => Math.floor(random() * n);
  const hosts = 1 + pick(12);
  const input = { concurrency: 1 + pick(6), perHostConcurrency: 1 + pick(3), batchSize: 1 + pick(8), maxPages: 5 + pick(300) };
  const p = plan(input);
  // Half the crawls see views that name only their biggest hosts, so batches fill from the store.
  const store = new ModelStore(seed % 2 === 0 ? 1 + pick(4) : undefined);
  for (let h = 0; h < hosts; h++) store.add(`h${h}.test`, 1 + pick(40));
  const scheduler = new CrawlScheduler(p, initialSchedulerState(p, store.view()));
  const running = new Map<number, Launch>();
  const seqs = new Set<number>();
  const launchedHosts = new Set<string>();
  const claimedBy = new Map<number, number>();
  let fills = 0;
  let waiting = 0;
  let now = 0;
  let recovering: number[] | null = null;
  for (let step = 0; step < 5_000; step++) {
    now += 1;
    if (random() < 0.02) scheduler.setLimits({ concurrency: 1 + pick(6), perHostConcurrency: 1 + pick(3) });
    if (random() < 0.01) scheduler.pause();
    if (random() < 0.05) scheduler.resume();
    const launchedNow = new Set<string>();
    for (const launch of scheduler.launches(now)) {
      assert.ok(!seqs.has(launch.seq), `batch ${launch.seq} launched twice`);
      seqs.add(launch.seq);
      for (const host of hostsOf(launch)) {
        assert.ok(launch.shares.filter((share) => share.host === host).length === 1, `host ${host} twice in one batch`);
        launchedNow.add(host);
      }
      assert.ok(orderedOf(launch) <= input.batchSize, `batch of ${orderedOf(launch)} over the batch size ${input.batchSize}`);
      assert.ok(orderedOf(launch) > 0, `batch ${launch.seq} ordered nothing`);
      claimedBy.set(launch.seq, store.claim(launch.seq, launch, scheduler.limits.perHostConcurrency));
      if (launch.waits) waiting += 1;
      else if (launch.fill > 0) fills += 1;
      for (const host of store.hostsClaimed(launch.seq)) launchedHosts.add(host);
      running.set(launch.seq, launch);
    }
    // Limits lowered while batches run are kept by launching nothing more, not by stopping batches.
    const { concurrency, perHostConcurrency } = scheduler.limits;
    if (launchedNow.size > 0) assert.ok(running.size <= concurrency, `${running.size} batches over concurrency ${concurrency}`);
    for (const host of launchedNow) {
      const onHost = [...running.values()].filter((launch) => hostsOf(launch).includes(host)).length;
      assert.ok(onHost <= perHostConcurrency, `${onHost} batches on ${host} over ${perHostConcurrency}`);
    }
    const reserved = [...running.values()].reduce((sum, launch) => sum + orderedOf(launch), 0);
    assert.ok(store.done.size + reserved <= input.maxPages, `budget: ${store.done.size} done + ${reserved} reserved > ${input.maxPages}`);

    if (recovering && random() < 0.3) {
      for (const seq of recovering) store.release(seq);
      scheduler.storeRecovered(recovering, store.view());
      recovering = null;
    }
    const picked = [...running.values()][pick(running.size)];
    // A batch that waits for work and has none claims again before it may end: it waited.
    const waited = picked?.waits === true && claimedBy.get(picked.seq) === 0 && random() < 0.5;
    if (waited) claimedBy.set(picked.seq, store.claim(picked.seq, picked, scheduler.limits.perHostConcurrency));
    const ending = waited && claimedBy.get(picked.seq)! > 0 ? undefined : picked;
    if (ending !== undefined && random() < 0.6) {
      running.delete(ending.seq);
      const roll = random();
      if (roll < 0.05) {
        scheduler.batchFailed(ending.seq, { code: `flaky-${pick(3)}`, message: 'a page broke the parser' });
        store.finish(ending.seq);
        scheduler.batchAbandoned(ending.seq, store.view());
      } else if (roll < 0.1) {
        scheduler.batchEnded(ending.seq, { kind: 'store-unavailable', batchId: String(ending.seq), hosts: hostsOf(ending), message: 'down' }, now);
      } else {
        store.finish(ending.seq);
        if (random() < 0.5 && store.total < 2_000) store.add(`h${pick(hosts + 3)}.test`, pick(6));
        scheduler.batchEnded(ending.seq, done(ending, store.view(), random() < 0.05 ? now + pick(20) : null, claimedBy.get(ending.seq)), now);
      }
    }
    if (!recovering && scheduler.parkedBatches().length > 0 && random() < 0.5) recovering = scheduler.parkedBatches();
    const outcome = scheduler.outcome();
    const ended = outcome === 'failed' || (outcome !== null && !recovering && running.size === 0);
    if (ended) return { outcome, done: store.done.size, total: store.total, maxPages: input.maxPages, launchedHosts, hosts, fills, waiting };
    if (scheduler.status() === 'paused' && running.size === 0 && random() < 0.5) scheduler.resume();
  }
  throw new Error(`seed ${seed}: no outcome after 5000 steps`);
}

describe('CrawlScheduler invariants over random crawls', () => {
  it('300 seeded crawls: within every limit, every URL once, the budget exact, every host served', () => {
    const outcomes = new Map<string, number>();
    let fills = 0;
    let waiting = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const result = randomCrawl(seed);
      fills += result.fills;
      waiting += result.waiting;
      if (seed % 2 === 1) assert.equal(result.fills, 0, `seed ${seed}: views that name every host leave nothing to fill`);
      outcomes.set(result.outcome, (outcomes.get(result.outcome) ?? 0) + 1);
      if (result.outcome === 'completed') {
        assert.equal(result.done, result.total, `seed ${seed}: completed with every URL done`);
        assert.ok(result.done <= result.maxPages);
      }
      if (result.outcome === 'max-pages-reached') assert.equal(result.done, result.maxPages, `seed ${seed}: the budget is spent exactly`);
      if (result.outcome !== 'failed' && result.done === result.total) assert.ok(result.launchedHosts.size >= result.hosts, `seed ${seed}: every seeded host got a batch`);
    }
    assert.ok((outcomes.get('completed') ?? 0) > 50 && (outcomes.get('max-pages-reached') ?? 0) > 50, `both endings are exercised: ${JSON.stringify([...outcomes])}`);
    assert.ok(fills > 300, `views that name a few hosts make batches fill from the store: ${fills} did`);
    assert.ok(waiting > 10, `short frontiers at the start give free slots batches that wait for work: ${waiting} did`);
  });
});

describe('progress read while batches run (ProgressRefresh)', () => {
  const WHY = 'reading progress while batches run';

  it('looks one interval after batches start running, keeps one wake through reports, and reads unless a view came in the last half interval', () => {
    const refresh = new ProgressRefresh();
    const started = view(1, { 'a.test': 10 });
    assert.equal(refresh.wake(0, false, started), undefined, 'no batch runs: nothing to read');
    assert.deepEqual(refresh.wake(1_000, true, started), { at: 11_000, why: WHY });
    assert.deepEqual(refresh.wake(5_000, true, started), { at: 11_000, why: WHY }, 'the same wake while it is not due');
    assert.equal(refresh.due(10_999, started), false, 'not yet');
    assert.equal(refresh.due(11_000, started), true, 'due, and no view since the batches started');
    assert.deepEqual(refresh.wake(11_000, true, started), { at: 21_000, why: WHY }, 'the next look an interval after the read');
    const reported = view(2, { 'a.test': 4 }, 6);
    assert.deepEqual(refresh.wake(17_000, true, reported), { at: 21_000, why: WHY }, 'a report keeps the wake');
    assert.equal(refresh.due(21_000, reported), false, 'the report brought a view 4 s ago: fresh enough');
    assert.deepEqual(refresh.wake(21_000, true, reported), { at: 27_000, why: WHY }, 'the next look an interval after the report');
    assert.equal(refresh.due(27_000, reported), true, 'no view for an interval');
    const later = view(3, { 'a.test': 2 }, 8);
    assert.deepEqual(refresh.wake(31_000, true, later), { at: 37_000, why: WHY });
    assert.equal(refresh.due(37_000, later), true, 'a view 6 s old, half an interval or more: read');
    assert.equal(refresh.wake(50_000, false, reported), undefined, 'no batch runs any more');
    assert.deepEqual(refresh.wake(60_000, true, reported), { at: 70_000, why: WHY }, 'batches again: an interval from then');
    assert.equal(refresh.due(70_000, reported), true, 'the view from before is stale');
  });

  it('shows the newer of the schedule’s view and the one read, never an older read, and says when a read moved the pages shown', () => {
    const refresh = new ProgressRefresh();
    const scheduled = view(3, { 'a.test': 10 }, 2);
    assert.equal(refresh.shown(scheduled), scheduled, 'nothing read yet');
    const read = view(7, { 'a.test': 6 }, 6);
    assert.equal(refresh.arrived(read, scheduled), true, 'it moved the pages shown: 2 to 6');
    assert.equal(refresh.shown(scheduled), read, 'the read is newer');
    assert.equal(refresh.arrived(view(5, { 'a.test': 8 }, 4), scheduled), false, 'an older read moves nothing');
    assert.equal(refresh.shown(scheduled), read, 'a read older than the last one is not shown');
    assert.equal(refresh.arrived(view(8, { 'a.test': 5 }, 6), scheduled), false, 'a newer read with the same pages moves nothing');
    const reported = view(9, { 'a.test': 3 }, 9);
    assert.equal(refresh.shown(reported), reported, 'a report newer than the read');
  });
});
