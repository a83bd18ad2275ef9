/**
 * Stored bodies in the PostgreSQL database that holds the frontier (`crawlflow.bodies`), so
 * workers on every machine write where every machine reads: an export made anywhere holds
 * each page's body, whichever worker fetched it.
 *
 * The retry rule of body-store.ts holds as it is: a row counts only once the committed record
 * of its page names it (`db:<id>`). Rows an interrupted or zombie attempt inserted are never
 * named, so never exported; `discardUnreferenced` deletes them once the crawl has stopped.
 */
import { BadBodyRefError, type BodyStore, type BodyWriter } from './body-store';
import type { PostgresDatabase } from '../store/postgres-database';
import { CLAIMED } from '../store/url-states';

const DB_REF = /^db:(\d{1,18})$/;

const INSERT_BODY = 'INSERT INTO crawlflow.bodies (crawl, batch_id, attempt, bytes) VALUES ($1, $2, $3, $4) RETURNING id';

const READ_BODY = `
  SELECT b.bytes FROM crawlflow.bodies b JOIN crawlflow.crawls c ON c.id = b.crawl
  WHERE c.name = $1 AND b.id = $2`;

/**
 * Rows no record names, of batches holding no claimed URL: those can never be named any more,
 * since only a batch's claimed URL can still be completed. A batch id is never claimed under
 * again once its run has ended (ids carry the run), so after the crawl stops this is every
 * row of an attempt that died.
 */
const DELETE_UNREFERENCED = `
  DELETE FROM crawlflow.bodies b USING crawlflow.crawls c
  WHERE c.name = $1 AND b.crawl = c.id
    AND NOT EXISTS (SELECT 1 FROM crawlflow.urls u WHERE u.crawl = c.id AND u.body_ref = 'db:' || b.id)
    AND NOT EXISTS (SELECT 1 FROM crawlflow.urls u WHERE u.crawl = c.id AND u.batch_id = b.batch_id AND u.state = ${CLAIMED})`;

class PostgresBodyWriter implements BodyWriter {
  private key: Promise<number> | undefined;

  constructor(
    private readonly db: PostgresDatabase,
    private readonly crawlId: string,
    private readonly batchId: string,
    private readonly attempt: number,
  ) {}

  private crawl(): Promise<number> {
    this.key ??= this.db.crawlKey(this.crawlId).catch((err: unknown) => {
      this.key = undefined;
      throw err;
    });
    return this.key;
  }

  async append(bytes: Buffer): Promise<string> {
    const crawl = await this.crawl();
    const { rows } = await this.db.query<{ id: number }>(INSERT_BODY, [crawl, this.batchId, this.attempt, bytes]);
    return `db:${rows[0].id}`;
  }

  async close(): Promise<void> {}
}

export class PostgresBodyStore implements BodyStore {
  constructor(
    private readonly db: PostgresDatabase,
    /** This machine's body files: where crawls stored before bodies moved into the database keep theirs. */
    private readonly files: BodyStore,
  ) {}

  writer(crawlId: string, batchId: string, attempt: number): BodyWriter {
    return new PostgresBodyWriter(this.db, crawlId, batchId, attempt);
  }

  async read(crawlId: string, ref: string): Promise<Buffer> {
    const id = DB_REF.exec(ref)?.[1];
    if (id === undefined) return this.files.read(crawlId, ref);
    const { rows } = await this.db.query<{ bytes: Buffer }>(READ_BODY, [crawlId, id]);
    if (rows.length === 0) throw new BadBodyRefError(`no stored body ${ref} of crawl "${crawlId}" in the database`);
    return rows[0].bytes;
  }

  /** Call only once the crawl has stopped (see DELETE_UNREFERENCED); returns the rows deleted. */
  async discardUnreferenced(crawlId: string): Promise<number> {
    // A pass over the crawl's bodies and rows: it may rightly run longer than a statement's bound.
    return (await this.db.unbounded((client) => client.query(DELETE_UNREFERENCED, [crawlId]))).rowCount ?? 0;
  }
}
