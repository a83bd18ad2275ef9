/**
 * One PostgreSQL database holding the frontier of every crawl: a connection pool shared by all
 * crawls of a process, the schema (created and migrated at startup, once, even when several
 * workers start at the same moment), and the crawl-name -> key table.
 *
 * All tables live in the `crawlflow` schema and are keyed by a small integer per crawl, not by
 * a schema per crawl: crawl IDs are user text, a schema per crawl would multiply catalog
 * entries and migrations by the number of crawls, and an integer key keeps every index narrow.
 */
import { Client, Pool, types, type ClientConfig, type PoolClient } from 'pg';
import { StoreUnavailableError } from './store-errors';
import { CLAIMED, DONE, QUEUED } from './url-states';

/**
 * Schema versions, applied in order; each runs once per database. Never edit an applied one:
 * add the next. URLs are unique per crawl by their MD5 (a 16-byte uuid), since a URL can be
 * longer than a btree entry may be (maxUrlLength goes up to 64 KiB).
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE crawlflow.crawls (
     id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     name text NOT NULL UNIQUE,
     version bigint NOT NULL DEFAULT 0,
     created_at timestamptz NOT NULL DEFAULT now()
   );
   CREATE TABLE crawlflow.urls (
     crawl integer NOT NULL REFERENCES crawlflow.crawls (id) ON DELETE CASCADE,
     id bigint GENERATED ALWAYS AS IDENTITY,
     url text NOT NULL,
     url_hash uuid GENERATED ALWAYS AS (md5(url)::uuid) STORED,
     host text NOT NULL,
     depth integer NOT NULL,
     attempts integer NOT NULL DEFAULT 0,
     state smallint NOT NULL DEFAULT ${QUEUED},
     batch_id text,
     status integer,
     error text,
     skipped text,
     title text,
     links text,
     fetched_at text,
     final_url text,
     content_type text,
     bytes bigint NOT NULL DEFAULT 0,
     canonical text,
     noindex boolean NOT NULL DEFAULT false,
     PRIMARY KEY (crawl, id)
   );
   CREATE UNIQUE INDEX urls_seen ON crawlflow.urls (crawl, url_hash);
   CREATE INDEX urls_queue ON crawlflow.urls (crawl, host, id) WHERE state = ${QUEUED};
   CREATE INDEX urls_by_batch ON crawlflow.urls (crawl, batch_id) WHERE batch_id IS NOT NULL;
   CREATE TABLE crawlflow.hosts (
     crawl integer NOT NULL REFERENCES crawlflow.crawls (id) ON DELETE CASCADE,
     host text NOT NULL,
     queued integer NOT NULL DEFAULT 0,
     taken integer NOT NULL DEFAULT 0,
     next_request_at bigint NOT NULL DEFAULT 0,
     robots_status integer,
     robots_body text,
     robots_fetched_at bigint,
     PRIMARY KEY (crawl, host)
   );
   CREATE INDEX hosts_backlog ON crawlflow.hosts (crawl, queued) WHERE queued > 0;`,
  // Extraction, recrawl and stored bodies; NULL in rows written before. A GONE row needs no
  // schema change: it is one more value of urls.state.
  `ALTER TABLE crawlflow.urls
     ADD COLUMN fields text,
     ADD COLUMN etag text,
     ADD COLUMN last_modified text,
     ADD COLUMN content_hash text,
     ADD COLUMN change text,
     ADD COLUMN body_ref text;`,
  // Rendering: a URL is queued to be fetched or to be rendered (every older row was to be
  // fetched), a host counts its render backlog next to its whole backlog (kept in the same
  // statements as queued), and claims pick by (host, kind), so the queue index takes the kind
  // and replaces the one without it.
  `ALTER TABLE crawlflow.urls ADD COLUMN render boolean NOT NULL DEFAULT false;
   ALTER TABLE crawlflow.hosts ADD COLUMN render_queued integer NOT NULL DEFAULT 0;
   CREATE INDEX urls_queue_by_kind ON crawlflow.urls (crawl, host, render, id) WHERE state = ${QUEUED};
   DROP INDEX crawlflow.urls_queue;`,
  // Per-host backoff and AutoThrottle: every host starts with a clean slate.
  `ALTER TABLE crawlflow.hosts
     ADD COLUMN error_streak integer NOT NULL DEFAULT 0,
     ADD COLUMN throttle_delay_ms bigint;`,
  // The crawl's running totals, kept by the statements that finish URLs (counted from the rows
  // written before); its recorded configs; the run whose batches are to hand over.
  `ALTER TABLE crawlflow.crawls
     ADD COLUMN processed bigint NOT NULL DEFAULT 0,
     ADD COLUMN fetched bigint NOT NULL DEFAULT 0,
     ADD COLUMN errors bigint NOT NULL DEFAULT 0,
     ADD COLUMN skipped bigint NOT NULL DEFAULT 0,
     ADD COLUMN bytes bigint NOT NULL DEFAULT 0,
     ADD COLUMN handover text;
   UPDATE crawlflow.crawls c SET processed = t.processed, fetched = t.fetched, errors = t.errors, skipped = t.skipped, bytes = t.bytes
   FROM (SELECT crawl, count(*) AS processed, count(status) AS fetched, count(error) AS errors, count(skipped) AS skipped,
           coalesce(sum(bytes), 0) AS bytes
         FROM crawlflow.urls WHERE state = ${DONE} GROUP BY crawl) t
   WHERE c.id = t.crawl;
   CREATE TABLE crawlflow.configs (
     crawl integer NOT NULL REFERENCES crawlflow.crawls (id) ON DELETE CASCADE,
     version integer NOT NULL,
     config text NOT NULL,
     PRIMARY KEY (crawl, version)
   );`,
  // Why robots.txt could not be fetched; NULL for files fetched before.
  `ALTER TABLE crawlflow.hosts ADD COLUMN robots_error text;`,
  // The frontier's order: claims take a host's most important URLs first (every older row is
  // as important as a seed), so the queue index takes the priority and replaces the one without.
  `ALTER TABLE crawlflow.urls ADD COLUMN priority double precision NOT NULL DEFAULT 1;
   CREATE INDEX urls_queue_by_priority ON crawlflow.urls (crawl, host, render, priority DESC, id) WHERE state = ${QUEUED};
   DROP INDEX crawlflow.urls_queue_by_kind;`,
  // Stored bodies (storeBodies), where every machine reads them (src/bodies/postgres-body-store.ts).
  // The bytes are gzip members already: EXTERNAL keeps them out of line without compressing again.
  `CREATE TABLE crawlflow.bodies (
     crawl integer NOT NULL REFERENCES crawlflow.crawls (id) ON DELETE CASCADE,
     id bigint GENERATED ALWAYS AS IDENTITY,
     batch_id text NOT NULL,
     attempt integer NOT NULL,
     bytes bytea NOT NULL,
     PRIMARY KEY (crawl, id)
   );
   ALTER TABLE crawlflow.bodies ALTER COLUMN bytes SET STORAGE EXTERNAL;`,
  // Scope keys of seed-file seeds (hosts, domains, directories); by MD5, since a directory may be longer than a btree entry.
  `CREATE TABLE crawlflow.seed_scope (
     crawl integer NOT NULL REFERENCES crawlflow.crawls (id) ON DELETE CASCADE,
     key text NOT NULL
   );
   CREATE UNIQUE INDEX seed_scope_by_key ON crawlflow.seed_scope (crawl, (md5(key)::uuid));`,
  // Shards: each key belongs to one (every older one to shard 0), and a shard's version, totals,
  // end and hand-over live on its own row, so no row is written by every page of the crawl
  // (shard 0's row starts from the crawl's). A shard's view reads its keys' backlog; an idle
  // shard asks whether any live shard has URLs claimed. The crawl row's old counters stay for
  // workers of the previous release until none is left.
  `ALTER TABLE crawlflow.hosts ADD COLUMN shard smallint NOT NULL DEFAULT 0;
   CREATE INDEX hosts_shard_backlog ON crawlflow.hosts (crawl, shard, queued) WHERE queued > 0;
   CREATE INDEX urls_claimed ON crawlflow.urls (crawl, host) WHERE state = ${CLAIMED};
   CREATE TABLE crawlflow.crawl_shards (
     crawl integer NOT NULL REFERENCES crawlflow.crawls (id) ON DELETE CASCADE,
     shard smallint NOT NULL,
     version bigint NOT NULL DEFAULT 0,
     processed bigint NOT NULL DEFAULT 0,
     fetched bigint NOT NULL DEFAULT 0,
     errors bigint NOT NULL DEFAULT 0,
     skipped bigint NOT NULL DEFAULT 0,
     bytes bigint NOT NULL DEFAULT 0,
     ended boolean NOT NULL DEFAULT false,
     handover text,
     PRIMARY KEY (crawl, shard)
   );
   INSERT INTO crawlflow.crawl_shards (crawl, shard, version, processed, fetched, errors, skipped, bytes, handover)
   SELECT id, 0, version, processed, fetched, errors, skipped, bytes, handover FROM crawlflow.crawls;`,
  // How the crawl ended, on its own row (store-rows.ts reads it): null while it runs, and for
  // crawls that ended before, as if they still ran.
  `ALTER TABLE crawlflow.crawls
     ADD COLUMN end_status text,
     ADD COLUMN failure_code text,
     ADD COLUMN failure_message text,
     ADD COLUMN ended_at text;`,
  // The WARC record that holds a record's payload (record-fields.ts); NULL in rows written before.
  'ALTER TABLE crawlflow.urls ADD COLUMN payload_record text;',
  // Ready claims try keys no batch has claimed from first (claim-rules.ts, READY_KEY_TIERS).
  'CREATE INDEX hosts_fresh_backlog ON crawlflow.hosts (crawl, queued) WHERE queued > 0 AND taken = 0;',
];

/** The schema version a migrated database is at. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Any number that is ours alone: the advisory lock that serializes migrations across processes. */
const MIGRATION_LOCK = 0x63726177; // "craw"

/** Errors after which a transaction is simply run again: deadlock and serialization failure. */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_ATTEMPTS = 5;

/** bigint columns (versions, epoch milliseconds, byte sums) as numbers: exact up to 2^53. */
const numericTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === types.builtins.INT8 ? (value: string) => Number(value) : types.getTypeParser(oid, format)) as typeof types.getTypeParser,
};

/**
 * How long one connection attempt may take, from the TCP connect to the server's first ready
 * message. A server that accepts connections and never answers (stopped with SIGSTOP, frozen,
 * a proxy with no backend) would otherwise hold a worker's start-up, or a batch, forever.
 */
export const CONNECT_TIMEOUT_MS = 10_000;
/** What pg's client fails a connection attempt with when CONNECT_TIMEOUT_MS has passed. */
const CONNECT_TIMEOUT_MESSAGE = 'timeout expired';

/**
 * How long a statement on an open connection may go unanswered. A server that stops answering
 * mid-crawl (frozen, or behind a network that drops its packets: TCP keeps such a connection
 * open for a quarter of an hour) would otherwise hold every batch on its store call, with the
 * crawl shown `running`. Past it the connection is dropped and the call is an outage, which
 * batches wait out and the crawl shows. Far above what a statement of the crawl's own takes
 * (milliseconds; a claim waits for other claims of its key only), and a false alarm costs a
 * retry: every store call is safe to repeat (patient-store.ts).
 */
export const STATEMENT_ANSWER_TIMEOUT_MS = 20_000;
/** What pg's client fails a statement with when STATEMENT_ANSWER_TIMEOUT_MS has passed. */
const STATEMENT_TIMEOUT_MESSAGE = 'Query read timeout';

const isUnanswered = (err: unknown): boolean => err instanceof Error && err.message === STATEMENT_TIMEOUT_MESSAGE;

/** pg's terse "timeout expired" for a connect timeout, said as what happened. */
function connectFailure(err: Error): string {
  return err.message === CONNECT_TIMEOUT_MESSAGE ? `no answer within ${CONNECT_TIMEOUT_MS / 1000} s of connecting (${err.message})` : err.message;
}

/**
 * The pool's clients: each connection attempt bounded by CONNECT_TIMEOUT_MS, each statement by
 * STATEMENT_ANSWER_TIMEOUT_MS. Given to the pool instead of its own `connectionTimeoutMillis`,
 * which would also bound the wait for a free pooled connection: a busy pool is no outage, and
 * its waiters must not fail.
 */
class BoundedClient extends Client {
  constructor(config: ClientConfig = {}) {
    super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, query_timeout: STATEMENT_ANSWER_TIMEOUT_MS });
  }
}

export class PostgresDatabase {
  private readonly pool: Pool;
  /** What every connection of the process is opened with. */
  private readonly connection: ClientConfig;
  private migrated: Promise<void> | undefined;

  constructor(
    url: string,
    /** The URL without its password, for errors. */
    private readonly redacted: string,
    poolMax: number,
  ) {
    this.connection = { connectionString: url, types: numericTypes, application_name: 'crawlflow' };
    this.pool = new Pool({ ...this.connection, max: poolMax, Client: BoundedClient });
    // An idle client losing its connection (a server restart) must not crash the process;
    // the pool drops it and the next query opens a new one.
    this.pool.on('error', () => undefined);
    // Nor may a checked-out one, which the pool no longer listens to: the server can end the
    // connection between two queries of a transaction (57P01 on shutdown), and a client emits
    // that as an 'error' event when it has no query to fail. The next query on it fails
    // instead ("Client has encountered a connection error", an outage to store-errors.ts),
    // and the pool drops it when it is released.
    this.pool.on('connect', (client) => client.on('error', () => undefined));
  }

  /** Creates or migrates the schema once per process; safe when many processes start at once. */
  ready(): Promise<void> {
    this.migrated ??= this.migrate().catch((err: unknown) => {
      this.migrated = undefined;
      throw new StoreUnavailableError(`frontier store ${this.redacted}: ${connectFailure(err as Error)}`, { cause: err });
    });
    return this.migrated;
  }

  /** On a connection of its own: a migration of a big table may rightly take minutes. */
  private async migrate(): Promise<void> {
    await this.retrying(() =>
      this.unbounded(async (client) => {
        await client.query('BEGIN');
        try {
          await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
          await client.query(`CREATE SCHEMA IF NOT EXISTS crawlflow;
            CREATE TABLE IF NOT EXISTS crawlflow.migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
          const { rows } = await client.query<{ applied: number }>('SELECT coalesce(max(version), 0) AS applied FROM crawlflow.migrations');
          for (let version = rows[0].applied + 1; version <= MIGRATIONS.length; version += 1) {
            await client.query(MIGRATIONS[version - 1]);
            await client.query('INSERT INTO crawlflow.migrations (version) VALUES ($1)', [version]);
          }
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }),
    );
  }

  /**
   * `work` on a connection of its own, outside the pool, whose statements are not bounded by
   * STATEMENT_ANSWER_TIMEOUT_MS: for the few that may rightly run long (a migration, a pass
   * over a whole crawl's rows). Its connection attempt is still bounded.
   */
  async unbounded<T>(work: (client: Client) => Promise<T>): Promise<T> {
    const client = new Client({ ...this.connection, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** The key of a crawl's rows, registering the crawl on first use. */
  async crawlKey(name: string): Promise<number> {
    await this.ready();
    // DO UPDATE (not DO NOTHING) so RETURNING yields the key when another process registered it first.
    const { rows } = await this.pool.query<{ id: number }>(
      'INSERT INTO crawlflow.crawls (name) VALUES ($1) ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id',
      [name],
    );
    return rows[0].id;
  }

  /** The key of a crawl that has rows, or undefined. */
  async existingCrawlKey(name: string): Promise<number | undefined> {
    await this.ready();
    const { rows } = await this.pool.query<{ id: number }>('SELECT id FROM crawlflow.crawls WHERE name = $1', [name]);
    return rows[0]?.id;
  }

  /**
   * One statement, its own transaction; run again after a deadlock. `params` may be a function,
   * called once a connection is at hand, so a statement that carries the caller's clock does
   * not count the wait for a free connection.
   */
  async query<R extends object>(sql: string, params: unknown[] | (() => unknown[])): Promise<{ rows: R[]; rowCount: number }> {
    return this.retrying(async () => {
      const client = await this.connect();
      try {
        const result = await client.query<R>(sql, typeof params === 'function' ? params() : params);
        client.release();
        return { rows: result.rows, rowCount: result.rowCount ?? 0 };
      } catch (err) {
        // As pg's pool.query does: a client that failed a query is not reused.
        client.release(err as Error);
        throw this.unanswered(err);
      }
    });
  }

  /** `work` in one READ COMMITTED transaction on one connection; run again after a deadlock. */
  async transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.retrying(async () => {
      const client = await this.connect();
      try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        client.release();
        return result;
      } catch (err) {
        // A connection that did not answer is dropped, not asked to roll back (that too would
        // wait out the bound): the server rolls the transaction back when the connection ends.
        const rolledBack = !isUnanswered(err) && (await client.query('ROLLBACK').then(() => true, () => false));
        client.release(rolledBack ? undefined : (err as Error));
        throw this.unanswered(err);
      }
    });
  }

  /** A pooled connection; an attempt that went unanswered fails as the outage it is (see `unanswered`). */
  private async connect(): Promise<PoolClient> {
    return this.pool.connect().catch((err: unknown) => {
      throw this.unanswered(err);
    });
  }

  /**
   * A connection attempt or statement that went unanswered as the outage it is, naming the
   * store and the bound; any other error as it is.
   */
  private unanswered(err: unknown): unknown {
    if (!(err instanceof Error)) return err;
    if (isUnanswered(err)) return new StoreUnavailableError(`frontier store ${this.redacted}: no answer to a statement within ${STATEMENT_ANSWER_TIMEOUT_MS / 1000} s`, { cause: err });
    if (err.message === CONNECT_TIMEOUT_MESSAGE) return new StoreUnavailableError(`frontier store ${this.redacted}: ${connectFailure(err)}`, { cause: err });
    return err;
  }

  private async retrying<T>(attempt: () => Promise<T>): Promise<T> {
    for (let n = 1; ; n += 1) {
      try {
        return await attempt();
      } catch (err) {
        if (n >= MAX_ATTEMPTS || !RETRYABLE.has((err as { code?: string }).code ?? '')) throw err;
      }
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
