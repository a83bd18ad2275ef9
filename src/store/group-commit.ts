/**
 * Group commit: writes that arrive in the same event-loop turn share one transaction.
 *
 * Why: a SQLite commit is the largest CPU cost of a worker (bench/PROFILE.md), and every page
 * completion writes the same few b-tree pages (the shard's totals row, the host's row, the top
 * of the indexes). The ~32 batches of a worker each finish a page now and then; grouping their
 * completions pays the BEGIN/COMMIT and the rewrite of those shared pages once per group instead
 * of once per page. Each caller still waits for the COMMIT that holds its write, and a batch
 * awaits one completion before fetching its next URL, so a batch never has more than one page
 * written but not committed — durability is what it was with one transaction per page.
 */
import type Database from 'better-sqlite3';

/** What one write of a group came to: its result, or the error that rolled back that write alone. */
export type WriteOutcome<Result> = { value: Result } | { error: unknown };

/**
 * Runs every item in one transaction and reports each item's outcome; throws when the
 * transaction as a whole failed (nothing of it committed).
 */
export type CommitAll<Item, Result> = (items: readonly Item[]) => Array<WriteOutcome<Result>>;

interface Queued<Item, Result> {
  item: Item;
  resolve(value: Result): void;
  reject(error: unknown): void;
}

export class GroupCommit<Item, Result> {
  private queue: Array<Queued<Item, Result>> = [];
  /** The flush scheduled for the queue, until it has run. */
  private scheduled: Promise<void> | undefined;

  constructor(private readonly commitAll: CommitAll<Item, Result>) {}

  /** Queues `item` for the next flush; settles once that flush has committed (or failed). */
  write(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      // setImmediate runs after the I/O callbacks of this turn: every batch whose page finished
      // in this turn has queued its completion by then.
      this.scheduled ??= new Promise((flushed) =>
        setImmediate(() => {
          this.flush();
          flushed();
        }),
      );
    });
  }

  /** Resolves once every write queued so far has been committed or rejected. */
  async settled(): Promise<void> {
    while (this.scheduled !== undefined) await this.scheduled;
  }

  private flush(): void {
    const group = this.queue;
    this.queue = [];
    this.scheduled = undefined;
    let outcomes: Array<WriteOutcome<Result>>;
    try {
      outcomes = this.commitAll(group.map((queued) => queued.item));
    } catch (error) {
      for (const queued of group) queued.reject(error);
      return;
    }
    group.forEach((queued, n) => {
      const outcome = outcomes[n];
      if ('error' in outcome) queued.reject(outcome.error);
      else queued.resolve(outcome.value);
    });
  }
}

/**
 * A write of a group failed: the group is written again, each write in a savepoint, where the
 * write fails again and its own error reaches its own caller. It never leaves this module.
 */
class GroupWriteFailed extends Error {}

/**
 * One IMMEDIATE transaction over the items, written by `writeOne`, then `finish` with their
 * results for what they share (the counter rows every write adds to).
 *
 * A write that fails, say on a constraint, must be rolled back alone while the others commit.
 * Savepoints do that, but cost two statements per write, a tenth of a completion's store time
 * (bench/PROFILE.md), for a failure that comes from a bug or a bad record, not from the
 * crawl. So the group is first written without them; only if a write fails is that attempt
 * rolled back whole and the group written again with a savepoint each (better-sqlite3 turns a
 * transaction inside a transaction into one). If `finish` fails, or the transaction as such
 * (a locked file, a full disk), nothing of the group is committed.
 */
export function commitTogether<Item, Result>(
  db: Database.Database,
  writeOne: (item: Item) => Result,
  finish: (written: readonly Result[]) => void,
): CommitAll<Item, Result> {
  const together = db.transaction((items: readonly Item[]): Array<WriteOutcome<Result>> => {
    const values = items.map((item) => {
      try {
        return writeOne(item);
      } catch {
        throw new GroupWriteFailed('a write of the group failed');
      }
    });
    finish(values);
    return values.map((value) => ({ value }));
  });
  const inSavepoint = db.transaction(writeOne);
  const eachInSavepoint = db.transaction((items: readonly Item[]) => {
    const outcomes = items.map((item): WriteOutcome<Result> => {
      try {
        return { value: inSavepoint(item) };
      } catch (error) {
        // Some errors (I/O, a full disk) make SQLite roll back the whole transaction: then none
        // of the group is written, and the items after this one must not run outside it.
        if (!db.inTransaction) throw error;
        return { error };
      }
    });
    finish(outcomes.flatMap((outcome) => ('value' in outcome ? [outcome.value] : [])));
    return outcomes;
  });
  return (items) => {
    try {
      return together.immediate(items);
    } catch (error) {
      if (!(error instanceof GroupWriteFailed)) throw error;
      return eachInSavepoint.immediate(items);
    }
  };
}
