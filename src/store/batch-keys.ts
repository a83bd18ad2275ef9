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
 * their whole IDs as keys (the schema's version 6).
 */
import type Database from 'better-sqlite3';

export class BatchKeys {
  private readonly keys = new Map<string, string>();
  private readonly find: Database.Statement;
  private readonly add: Database.Statement;

  constructor(db: Database.Database) {
    this.find = db.prepare('SELECT key FROM batch_keys WHERE batch_id = ?').pluck();
    // The next number as the key: rows are never deleted, so it is the row's own `n`.
    this.add = db.prepare("INSERT OR IGNORE INTO batch_keys (batch_id, key) SELECT ?, '#' || (coalesce(max(n), 0) + 1) FROM batch_keys");
  }

  /** The key of `batchId`, made if the batch has none yet: called inside the store's write transactions, which then commit it. */
  keyOf(batchId: string): string {
    const kept = this.keys.get(batchId) ?? this.read(batchId);
    if (kept !== undefined) return kept;
    // Another process may make it first: the row that stands is the key.
    this.add.run(batchId);
    return this.read(batchId)!;
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
