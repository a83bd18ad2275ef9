/** How a crawl is split into shards: a stable key hash, and budgets split exactly. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { partOf, shardOf } from '../src/scheduling/shards';
import { planOf, shardPlan } from '../src/scheduling/crawl-plan';
import { parseCrawlConfig } from '../src/shared/crawl-config';
import { mergedFrontier, mergedProgress } from '../src/shared/shard-progress';
import { openingProgress, type CrawlProgress, type HostState } from '../src/shared/crawl-types';

describe('shards', () => {
  it('a key always hashes to the same shard (FNV-1a), and keys spread over every shard', () => {
    assert.equal(shardOf('example.com', 1), 0);
    // Fixed values: a key's shard must not change between releases, or its URLs would split.
    assert.deepEqual(['a.test', 'b.test:8080', '127.0.0.1:3000', 'example.co.uk'].map((key) => shardOf(key, 4)), [2, 1, 3, 3]);
    assert.equal(shardOf('a', 64), 0xe40c292c % 64);
    const counts = new Array<number>(8).fill(0);
    for (let n = 0; n < 8_000; n += 1) counts[shardOf(`host-${n}.test`, 8)] += 1;
    assert.ok(counts.every((count) => count > 800 && count < 1_200), `spread: ${counts.join(' ')}`);
  });

  it('splits a total into parts that differ by at most one and add up exactly', () => {
    for (const [total, shards] of [[10, 4], [3, 4], [100_000, 7], [0, 3]]) {
      const parts = Array.from({ length: shards }, (_, shard) => partOf(total, shards, shard));
      assert.equal(parts.reduce((sum, part) => sum + part, 0), total);
      assert.ok(Math.max(...parts) - Math.min(...parts) <= 1);
    }
    assert.equal(partOf(2, 4, 3, 1), 1, 'at least one where asked');
  });

  it("a shard's plan has its part of the budget and of the concurrency, and reads no sitemaps", () => {
    const plan = planOf(parseCrawlConfig({ seeds: ['http://a.test/'], shards: 4, maxPages: 10, concurrency: 6, sitemaps: { fromRobots: true } }), 1);
    const parts = [0, 1, 2, 3].map((shard) => shardPlan(plan, shard));
    assert.deepEqual(parts.map((part) => part.maxPages), [3, 3, 2, 2]);
    assert.deepEqual(parts.map((part) => part.limits.concurrency), [2, 2, 1, 1]);
    assert.ok(parts.every((part) => !part.readsSitemaps));
  });

  it("a sharded crawl's progress and frontier are its shards' added up; its status, start and ID stay its own", () => {
    const base = openingProgress('c', 1_000);
    const crawl: CrawlProgress = { ...base, status: 'paused', processed: 7, shards: 2 };
    const failure = { code: 'HeadersFromEnvMissing', message: 'x' };
    const zero: CrawlProgress = { ...base, crawlId: 'c/shard-0', processed: 10, fetched: 9, errors: 1, skipped: 0, bytes: 100, queued: 4, batchesInFlight: 2, batchesCompleted: 5, hostsInFlight: ['a.test', 'b.test'], run: 3, failures: [{ ...failure, batches: 1 }] };
    const storeWait = { since: 5, message: 'down' };
    const one: CrawlProgress = { ...base, crawlId: 'c/shard-1', processed: 3, fetched: 2, skipped: 1, bytes: 20, queued: 1, batchesInFlight: 1, batchesCompleted: 2, hostsInFlight: ['c.test'], storeWait, failures: [{ ...failure, batches: 2 }] };
    assert.deepEqual(mergedProgress(crawl, [zero, one]), {
      ...crawl,
      processed: 13,
      fetched: 11,
      errors: 1,
      skipped: 1,
      bytes: 120,
      queued: 5,
      batchesInFlight: 3,
      batchesCompleted: 7,
      hostsInFlight: ['a.test', 'b.test', 'c.test'],
      run: 3,
      storeWait,
      failures: [{ ...failure, batches: 3 }],
    });

    const host = (name: string, queued: number): HostState => ({ host: name, queued, batchesInFlight: 0, readyAt: null, holdReason: null });
    const frontier = mergedFrontier([
      { queued: 60, snapshotVersion: 4, hosts: [host('a.test', 30), ...Array.from({ length: 30 }, (_, n) => host(`z${n}.test`, 1))] },
      { queued: 50, snapshotVersion: 3, hosts: [host('b.test', 40), ...Array.from({ length: 30 }, (_, n) => host(`y${n}.test`, 1))] },
    ]);
    assert.deepEqual([frontier.queued, frontier.snapshotVersion, frontier.hosts.length], [110, 7, 50], 'the largest 50 backlogs of both');
    assert.deepEqual(frontier.hosts.slice(0, 3).map(({ host: name }) => name), ['b.test', 'a.test', 'y0.test']);
  });
});
