/** How a crawl is split into shards: a stable key hash, and budgets split exactly. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { partOf, shardOf } from '../src/scheduling/shards';
import { planOf, shardPlan } from '../src/scheduling/crawl-plan';
import { parseCrawlConfig } from '../src/shared/crawl-config';

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
});
