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

  /** One URL of `host` queued (`render` 1 when it is to be rendered). */
  addQueued(host: string, render: 0 | 1, shard: number): void {
    this.addQueuedChange(host, { n: 1, render, shard });
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
    for (const [host, change] of other.queued) this.addQueuedChange(host, change);
    for (const [shard, totals] of other.finished) this.addFinished(shard, totals);
  }

  private addQueuedChange(host: string, { n, render, shard }: QueuedChange): void {
    const sum = this.queued.get(host);
    if (sum === undefined) this.queued.set(host, { n, render, shard });
    else {
      sum.n += n;
      sum.render += render;
      sum.shard = shard;
    }
  }
}
