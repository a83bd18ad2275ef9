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
 * One IMMEDIATE transaction over the items, each written by `writeOne` in its own savepoint
 * (better-sqlite3 turns a transaction inside a transaction into one): a write that fails,
 * say on a constraint, is rolled back alone and the others commit. `finish` then runs in the
 * same transaction with the results of the writes that were kept, for what they share (the
 * counter rows every write adds to); if it fails, nothing of the group is committed.
 */
export function savepointEach<Item, Result>(
  db: Database.Database,
  writeOne: (item: Item) => Result,
  finish: (written: readonly Result[]) => void,
): CommitAll<Item, Result> {
  const inSavepoint = db.transaction(writeOne);
  const all = db.transaction((items: readonly Item[]) => {
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
  return (items) => all.immediate(items);
}
