/**
 * What a store's writes add to its shared counter rows: each key's queued counts and each
 * shard's totals. Summed here, they are written once per row for a whole group of writes.
 *
 * Why: every completion of a group (see group-commit.ts) adds to the same shard row and, on a
 * site of few hosts, the same host rows. One upsert per row and group, instead of one per page,
 * leaves a completion with its own row and its new links to write.
 */
import type { BatchTotals } from './frontier-store';

/** Queued URLs added to a key: all of them, and those to render; a new key gets `shard`. */
export interface QueuedChange {
  n: number;
  render: number;
  shard: number;
}

export class CounterDeltas {
  readonly queued = new Map<string, QueuedChange>();
  readonly finished = new Map<number, BatchTotals>();

  addQueued(host: string, render: 0 | 1, shard: number): void {
    const change = this.queued.get(host);
    if (change === undefined) this.queued.set(host, { n: 1, render, shard });
    else {
      change.n += 1;
      change.render += render;
      change.shard = shard;
    }
  }

  addFinished(shard: number, totals: BatchTotals): void {
    const sum = this.finished.get(shard);
    if (sum === undefined) this.finished.set(shard, { ...totals });
    else {
      sum.processed += totals.processed;
      sum.fetched += totals.fetched;
      sum.errors += totals.errors;
      sum.skipped += totals.skipped;
      sum.bytes += totals.bytes;
    }
  }

  /** Adds `other`'s changes to these (later writes' shards win, as they would row by row). */
  add(other: CounterDeltas): void {
    for (const [host, change] of other.queued) {
      const mine = this.queued.get(host);
      if (mine === undefined) this.queued.set(host, { ...change });
      else this.queued.set(host, { n: mine.n + change.n, render: mine.render + change.render, shard: change.shard });
    }
    for (const [shard, totals] of other.finished) this.addFinished(shard, totals);
  }
}
