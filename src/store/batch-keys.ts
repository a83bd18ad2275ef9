/**
 * The key a batch's rows carry in a SQLite store (`urls.batch_id`), instead of its ID. A
 * batch's ID names its crawl, its workflow run and its number (about 70 characters), and every
 * URL it claims carries it in its row and in two indexes (`urls_claimed`, `urls_by_batch`), which
 * each claim and completion writes. Its key is `#` and the batch's number in the file
 * (`batch_keys`): the bench's 1,000-host crawl made about 5% more pages a second with keys, one
 * host about 2% (bench/PROFILE.md).
 *
 * A key is made the first time any process of the crawl asks for the batch's, and never
 * changes, so each process keeps the keys it has read. Batches of a file from before keep
 * their whole IDs as keys (the schema's version 6), as does one a worker of an earlier release
 * sharing the file claimed first. The other way round cannot be helped: an earlier release's
 * worker that retries a batch a newer one started finds none of its claims, which go back to
 * the queue when the crawl ends (docs/operations.md, deploying a new worker version).
 */
import type Database from 'better-sqlite3';

export class BatchKeys {
  private readonly keys = new Map<string, string>();
  private readonly find: Database.Statement;
  private readonly add: Database.Statement;

  constructor(db: Database.Database) {
    this.find = db.prepare('SELECT key FROM batch_keys WHERE batch_id = ?').pluck();
    // The next number as the key (rows are never deleted, so it is the row's own `n`); but a
    // batch whose rows carry its whole ID keeps that: a worker of an earlier release sharing the
    // file claimed them.
    this.add = db.prepare(
      `INSERT OR IGNORE INTO batch_keys (batch_id, key)
       SELECT @batchId, iif(EXISTS (SELECT 1 FROM urls WHERE batch_id = @batchId), @batchId, '#' || (coalesce(max(n), 0) + 1)) FROM batch_keys`,
    );
  }

  /** The key of `batchId`, made if the batch has none yet: called inside the store's write transactions, which then commit it. */
  keyOf(batchId: string): string {
    const kept = this.keys.get(batchId) ?? this.read(batchId);
    if (kept !== undefined) return kept;
    // Another process may make it first: the row that stands is the key. It is kept only once
    // read again, after its transaction committed: one rolled back would leave a number that
    // another batch may be given.
    this.add.run({ batchId });
    return this.find.get(batchId) as string;
  }

  /** The key of `batchId` if it has one; else the ID itself, which no row carries (reads only). */
  keyIfAny(batchId: string): string {
    return this.keys.get(batchId) ?? this.read(batchId) ?? batchId;
  }

  private read(batchId: string): string | undefined {
    const key = this.find.get(batchId) as string | undefined;
    if (key !== undefined) this.keys.set(batchId, key);
    return key;
  }
}
