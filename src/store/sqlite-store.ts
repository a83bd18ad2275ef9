/**
 * The embedded frontier store: one SQLite file per crawl, in WAL mode so several worker
 * processes on one machine share it. The unique key on `urls.url` is the seen-set, with this
 * instance's cache of URLs known to be in it in front (known-urls.ts); a host's `queued`
 * counter is kept in the same transactions as the rows, so snapshots never scan the queue.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  type BatchTotals,
  type ClaimBounds,
  type ClaimedUrl,
  type ReadyClaim,
  type ReadyQuery,
  type CrawlTotals,
  type CrawlView,
  type FrontierEntry,
  type FrontierSnapshot,
  type FrontierStore,
  type HostBacklog,
  type HostPacing,
  changesNothing,
  INITIAL_PACING,
  type PacingUpdate,
  type PageRecord,
  type RobotsRecord,
  requestStartAt,
  type RequestStart,
  finishedTotals,
  type StoredConfig,
} from './frontier-store';
import { batchTotalsColumns, crawlTotalsColumns, PACING_COLUMNS, recordsInPages, ROBOTS_COLUMNS, toClaimed, toTotals, type ClaimRow, type CountDialect, type TotalsRow } from './store-rows';
import { COMPLETED_FIELDS, completedValues, RECORD_FIELDS, recordColumns, toRecord, type RecordRow, type Storage } from './record-fields';
import { GroupCommit, savepointEach } from './group-commit';
import { CLAIMED, DONE, GONE, HOST_PAGE_CAP, QUEUED } from './url-states';
import { firstReadyClaim, planClaim } from './claim-rules';
import { claimHostCounts, requeuedUrl, requeueHostCounts } from './requeue-rules';
import { KnownUrls } from './known-urls';

/**
 * Per shard of the crawl (see src/scheduling/shards.ts): its version, its running totals
 * (kept in the transactions that finish URLs, so a view never scans the queue), whether it
 * has ended, and the run whose batches are to hand over.
 */
const SHARDS_TABLE = `CREATE TABLE IF NOT EXISTS shards (shard INTEGER PRIMARY KEY, version INTEGER NOT NULL DEFAULT 0,
  processed INTEGER NOT NULL DEFAULT 0, fetched INTEGER NOT NULL DEFAULT 0, errors INTEGER NOT NULL DEFAULT 0,
  skipped INTEGER NOT NULL DEFAULT 0, bytes INTEGER NOT NULL DEFAULT 0, ended INTEGER NOT NULL DEFAULT 0, handover TEXT);`;

/** SQLite has no boolean: flags are 1 or 0. */
const sqliteFlag = (value: boolean): number => (value ? 1 : 0);

/** The SQLite type a storage kind keeps its values in. */
const SQLITE_TYPES: Readonly<Record<Storage, string>> = { text: 'TEXT', integer: 'INTEGER', flag: 'INTEGER', 'json-list': 'TEXT', 'json-object': 'TEXT' };

/**
 * The definitions of the record's columns of `urls`, as record-fields.ts declares them: a field
 * the URL is queued with is never null, and one with a default holds it until its completion.
 */
function recordColumnDefinitions(): string[] {
  return RECORD_FIELDS.map(({ column, storage, queued, default: initial }) => {
    const type = `${column} ${SQLITE_TYPES[storage]}`;
    if (initial !== undefined) return `${type} NOT NULL DEFAULT ${typeof initial === 'boolean' ? sqliteFlag(initial) : initial}`;
    return queued ? `${type} NOT NULL` : type;
  });
}

/**
 * Today's schema: a new file is made from it whole. After an older file's migrations it adds
 * what the file still lacks: tables and indexes a migration need not make (IF NOT EXISTS).
 * A URL's row has the queue's columns, then the record's; the unique `url` is the seen-set.
 * Claims select a host's queued URLs by kind, most important first (`urls_queue`): fetch
 * batches must not step over a host's render backlog; queued URLs only, so a claim takes a URL
 * out of the index and its completion has nothing to write there.
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS urls (
    id INTEGER PRIMARY KEY,
    host TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    state INTEGER NOT NULL DEFAULT ${QUEUED},
    batch_id TEXT,
    render INTEGER NOT NULL DEFAULT 0,
    priority REAL NOT NULL DEFAULT 1,
    ${recordColumnDefinitions().join(',\n    ')},
    UNIQUE (url)
  );
  CREATE INDEX IF NOT EXISTS urls_by_batch ON urls (batch_id) WHERE batch_id IS NOT NULL;
  CREATE TABLE IF NOT EXISTS hosts (
    host TEXT PRIMARY KEY,
    queued INTEGER NOT NULL DEFAULT 0,
    taken INTEGER NOT NULL DEFAULT 0,
    render_queued INTEGER NOT NULL DEFAULT 0,
    next_request_at INTEGER NOT NULL DEFAULT 0,
    error_streak INTEGER NOT NULL DEFAULT 0,
    throttle_delay_ms INTEGER,
    robots_status INTEGER,
    robots_body TEXT,
    robots_fetched_at INTEGER,
    robots_error TEXT,
    shard INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX IF NOT EXISTS hosts_with_backlog ON hosts (queued) WHERE queued > 0;
  CREATE TABLE IF NOT EXISTS configs (version INTEGER PRIMARY KEY, config TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS seed_scope (key TEXT PRIMARY KEY) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS urls_queue ON urls (host, render, priority DESC, id) WHERE state = ${QUEUED};
  CREATE INDEX IF NOT EXISTS hosts_shard_backlog ON hosts (shard, queued) WHERE queued > 0;
  CREATE INDEX IF NOT EXISTS urls_claimed ON urls (host) WHERE state = ${CLAIMED};
  ${SHARDS_TABLE}
`;

/** Shard 0's row of a file written before shards: its version, and totals counted from its records. */
const shardZero = (version: number) => `
  INSERT INTO shards (shard, version, processed, fetched, errors, skipped, bytes)
    SELECT 0, ${version}, count(*), coalesce(sum(status IS NOT NULL), 0), coalesce(sum(error IS NOT NULL), 0),
      coalesce(sum(skipped IS NOT NULL), 0), coalesce(sum(bytes), 0) FROM urls WHERE state = ${DONE};`;

/** Version and running totals of the shards a WHERE picks, summed. */
const SHARD_STATE = `SELECT coalesce(sum(version), 0) AS version, coalesce(sum(processed), 0) AS processed, coalesce(sum(fetched), 0) AS fetched,
  coalesce(sum(errors), 0) AS errors, coalesce(sum(skipped), 0) AS skipped, coalesce(sum(bytes), 0) AS bytes FROM shards`;

/** Runs `migration` when `table` lacks `column`: a file from before the numbering may have any of them. */
function addMissingColumn(db: Database.Database, table: string, column: string, migration: string): void {
  const columns = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(table);
  if (!columns.includes(column)) db.exec(migration);
}

/** Columns added for extraction, recrawl and stored bodies, all nullable TEXT. */
const CONTENT_COLUMNS = ['fields', 'etag', 'last_modified', 'content_hash', 'change', 'body_ref'];

const hasTable = (db: Database.Database, name: string): boolean => db.prepare('SELECT 1 FROM sqlite_master WHERE name = ?').get(name) !== undefined;

/**
 * Brings a file from before the numbering (user_version 0), written by any earlier release,
 * up to date: each part checks what the file lacks.
 */
function catchUp(db: Database.Database): void {
  // Files written before the per-host cap lack `hosts.taken`: add it, counted from the rows.
  addMissingColumn(
    db,
    'hosts',
    'taken',
    `ALTER TABLE hosts ADD COLUMN taken INTEGER NOT NULL DEFAULT 0;
     UPDATE hosts SET taken = (SELECT count(*) FROM urls WHERE urls.host = hosts.host AND state <> ${QUEUED} AND skipped IS NOT '${HOST_PAGE_CAP}');`,
  );
  // Files written before rendering: every URL in them was queued to be fetched, as the defaults say.
  addMissingColumn(
    db,
    'urls',
    'render',
    `ALTER TABLE urls ADD COLUMN render INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE hosts ADD COLUMN render_queued INTEGER NOT NULL DEFAULT 0;`,
  );
  // Files written before extraction, recrawl and stored bodies: their columns, NULL in old rows.
  for (const column of CONTENT_COLUMNS) addMissingColumn(db, 'urls', column, `ALTER TABLE urls ADD COLUMN ${column} TEXT`);
  // Files written before the frontier had an order: every URL in them is as important as a seed.
  addMissingColumn(db, 'urls', 'priority', 'ALTER TABLE urls ADD COLUMN priority REAL NOT NULL DEFAULT 1');
  // Indexes the queue index of SCHEMA (urls_queue) replaces: over every state, and by (host, state).
  db.exec(`DROP INDEX IF EXISTS urls_by_host_kind_priority;
    DROP INDEX IF EXISTS urls_by_host_kind_state;
    DROP INDEX IF EXISTS urls_by_host_state;`);
  if (!hasTable(db, 'shards')) {
    const version = hasTable(db, 'meta') ? ((db.prepare("SELECT value FROM meta WHERE key = 'version'").pluck().get() as number | undefined) ?? 0) : 0;
    db.exec(`${SHARDS_TABLE} ${shardZero(version)}`);
  }
  // Files written before per-host backoff and AutoThrottle: every host starts with a clean slate.
  addMissingColumn(
    db,
    'hosts',
    'error_streak',
    `ALTER TABLE hosts ADD COLUMN error_streak INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE hosts ADD COLUMN throttle_delay_ms INTEGER;`,
  );
  // Files written before robots.txt failures kept their cause: none recorded for old ones.
  addMissingColumn(db, 'hosts', 'robots_error', 'ALTER TABLE hosts ADD COLUMN robots_error TEXT');
  // Files written before shards: every key is shard 0's. A shard's view reads its keys'
  // backlog, and an idle shard asks whether any live shard has URLs claimed.
  addMissingColumn(db, 'hosts', 'shard', 'ALTER TABLE hosts ADD COLUMN shard INTEGER NOT NULL DEFAULT 0');
}

/**
 * Schema versions of a store file, applied in order to a file made by an older version;
 * `PRAGMA user_version` counts those the file has, so each runs once per file. Never edit an
 * applied one: add the next, and its change to SCHEMA for new files.
 */
const MIGRATIONS: ReadonlyArray<(db: Database.Database) => void> = [catchUp];

/** The schema version a migrated file is at. */
export const SQLITE_SCHEMA_VERSION = MIGRATIONS.length;

const userVersion = (db: Database.Database): number => db.pragma('user_version', { simple: true }) as number;

/**
 * In one immediate transaction, so two workers opening one old file migrate it once; a file
 * at the current version opens without the write lock.
 */
function migrate(db: Database.Database): void {
  if (userVersion(db) >= MIGRATIONS.length) return;
  db.transaction(() => {
    // Read again under the lock: another worker may have migrated the file meanwhile.
    const applied = userVersion(db);
    if (applied >= MIGRATIONS.length) return;
    if (hasTable(db, 'urls')) for (const migration of MIGRATIONS.slice(applied)) migration(db);
    db.exec(SCHEMA);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
}

/** Queued URLs added per host: all of them, and those to render; new keys get `shard`. */
type QueuedChange = { n: number; render: number; shard?: number };

/** A finished page of a batch and the links found on it not known to be seen (see `complete`). */
interface Completion {
  batchId: string;
  record: PageRecord;
  discovered: readonly FrontierEntry[];
}

/** Most important first, then in discovery order: the order claims hand URLs out in (RETURNING keeps none). */
const inClaimOrder = (a: ClaimRow & { id: number }, b: ClaimRow & { id: number }): number => b.priority - a.priority || a.id - b.id;

/** Records `records()` reads per page; each page is a synchronous read that blocks the event loop. */
const RECORDS_PAGE = 500;
/** A comparison is 1 or 0, so summing a condition counts the rows it picks. */
const SQLITE_COUNTS: CountDialect = { count: (condition) => `coalesce(sum(${condition}), 0)`, sum: (column) => `coalesce(sum(${column}), 0)` };
const BUSY_TIMEOUT_MS = 250;
/**
 * Keys a ready claim tries in one transaction: the query's holder bound is the largest any key
 * has, so a key with a lower override may still refuse; a few more are always at hand.
 */
const READY_CANDIDATES = 8;
const CACHE_KIB = 64 * 1024;

/** Where a crawl's file lives: crawl IDs are user text, so they are encoded for the file name. */
export function crawlStorePath(dataDir: string, crawlId: string): string {
  return join(dataDir, 'crawls', `${encodeURIComponent(crawlId)}.sqlite`);
}

export class SqliteFrontierStore implements FrontierStore {
  private readonly db: Database.Database;
  private readonly statements;
  private readonly enqueueTx;
  private readonly claimTx;
  private readonly claimReadyTx;
  /** Page completions of concurrent batches, committed together (see group-commit.ts): links added, or null when the record was not written. */
  private readonly completions: GroupCommit<Completion, number | null>;
  /** URLs known to be in the seen-set, left out of writes (see known-urls.ts). */
  private readonly known = new KnownUrls();
  private readonly releaseTx;
  private readonly abandonTx;
  private readonly releaseAllTx;
  private readonly startRequestTx;
  private readonly goneTx;
  private readonly updatePacingTx;

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    // Every page's completion reads and writes the same few b-tree pages (the queue index, the
    // host's row, the totals): a cache that holds the crawl's hot pages saves a read per page.
    this.db.pragma(`cache_size = -${CACHE_KIB}`);
    // Several worker processes may share the file: wait for a writer instead of failing. The
    // wait blocks the event loop (better-sqlite3 is synchronous), so it stays well under the
    // heartbeat timeout; a lock held longer surfaces as SQLITE_BUSY, which batches wait out
    // without blocking (see store-errors.ts).
    this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    migrate(this.db);
    const db = this.db;
    const s = {
      insertUrl: db.prepare('INSERT INTO urls (url, host, depth, render, priority) VALUES (?, ?, ?, ?, ?) ON CONFLICT (url) DO NOTHING'),
      // A key's shard is the same wherever it is computed; rows made by pacing or robots before
      // the key had URLs have the default, which the first enqueue corrects.
      addQueued: db.prepare(
        `INSERT INTO hosts (host, queued, render_queued, shard) VALUES (?, ?, ?, ?)
         ON CONFLICT (host) DO UPDATE SET queued = queued + excluded.queued, render_queued = render_queued + excluded.render_queued,
           shard = excluded.shard`,
      ),
      bumpVersion: db.prepare('INSERT INTO shards (shard, version) VALUES (?, 1) ON CONFLICT (shard) DO UPDATE SET version = version + 1'),
      shardOfUrl: db.prepare('SELECT hosts.shard FROM urls JOIN hosts ON hosts.host = urls.host WHERE urls.url = ?').pluck(),
      shardOfBatch: db.prepare('SELECT hosts.shard FROM urls JOIN hosts ON hosts.host = urls.host WHERE urls.batch_id = ? LIMIT 1').pluck(),
      // `+host`, here and below: find the batch's rows by the batch index; by the host, the planner would walk every URL
      // the host ever had, or every one claimed by any batch.
      ownClaims: db.prepare('SELECT url, depth, attempts, skipped, priority FROM urls WHERE batch_id = ? AND +host = ? AND state = ? ORDER BY priority DESC, id'),
      batchShare: db.prepare('SELECT count(*) FROM urls WHERE batch_id = ? AND +host = ?').pluck(),
      claimQueued: db.prepare(
        `UPDATE urls SET state = ${CLAIMED}, batch_id = ?, skipped = ?
         WHERE id IN (SELECT id FROM urls WHERE host = ? AND render = ? AND state = ${QUEUED} ORDER BY priority DESC, id LIMIT ?)
         RETURNING id, url, depth, attempts, skipped, priority`,
      ),
      batchRows: db.prepare('SELECT count(*) FROM urls WHERE batch_id = ?').pluck(),
      otherHolders: db.prepare(`SELECT count(DISTINCT batch_id) FROM urls WHERE host = ? AND state = ${CLAIMED} AND batch_id <> ?`).pluck(),
      heldKeys: db.prepare(`SELECT DISTINCT host FROM urls WHERE batch_id = ? AND state = ${CLAIMED}`).pluck(),
      readyKeys: db.prepare(
        `SELECT host FROM hosts WHERE queued > 0 AND iif(@render, render_queued, queued - render_queued) > 0
           AND (@shard IS NULL OR shard = @shard) AND next_request_at <= @freeBy
           AND (SELECT count(DISTINCT batch_id) FROM urls WHERE urls.host = hosts.host AND state = ${CLAIMED} AND batch_id <> @batchId) < @maxHolders
         ORDER BY queued DESC LIMIT @limit`,
      ).pluck(),
      taken: db.prepare('SELECT taken FROM hosts WHERE host = ?').pluck(),
      // The rows a claim just took, by the ids (a JSON array) its updates returned.
      claimCounts: db.prepare(claimHostCounts(SQLITE_COUNTS, { hosts: 'hosts', rows: 'urls WHERE id IN (SELECT value FROM json_each(?))' })).pluck(),
      complete: db.prepare(
        `UPDATE urls SET state = ${DONE}, ${COMPLETED_FIELDS.map((field) => `${field.column} = ?`).join(', ')}
         WHERE url = ? AND batch_id = ? AND state = ${CLAIMED}`,
      ),
      countFinished: db.prepare(
        `INSERT INTO shards (shard, version, processed, fetched, errors, skipped, bytes) VALUES (@shard, 1, @processed, @fetched, @errors, @skipped, @bytes)
         ON CONFLICT (shard) DO UPDATE SET version = version + 1, processed = processed + excluded.processed, fetched = fetched + excluded.fetched,
           errors = errors + excluded.errors, skipped = skipped + excluded.skipped, bytes = bytes + excluded.bytes`,
      ),
      unfinishedTotals: db.prepare(
        `SELECT count(*) AS processed, 0 AS fetched, coalesce(sum(skipped IS NULL), 0) AS errors,
           coalesce(sum(skipped IS NOT NULL), 0) AS skipped, 0 AS bytes FROM urls WHERE batch_id = ? AND state = ${CLAIMED}`,
      ),
      crawlState: db.prepare(SHARD_STATE),
      shardState: db.prepare(`${SHARD_STATE} WHERE shard = ?`),
      saveConfig: db.prepare('INSERT INTO configs (version, config) VALUES (?, ?) ON CONFLICT (version) DO NOTHING'),
      latestConfig: db.prepare('SELECT version, config FROM configs ORDER BY version DESC LIMIT 1'),
      addSeedScope: db.prepare('INSERT INTO seed_scope (key) VALUES (?) ON CONFLICT (key) DO NOTHING'),
      seedScope: db.prepare('SELECT key FROM seed_scope').pluck(),
      handOver: db.prepare('INSERT INTO shards (shard, handover) VALUES (?, ?) ON CONFLICT (shard) DO UPDATE SET handover = excluded.handover'),
      handedOver: db.prepare('SELECT handover FROM shards WHERE shard = ?').pluck(),
      endShard: db.prepare('INSERT INTO shards (shard, ended) VALUES (?, 1) ON CONFLICT (shard) DO UPDATE SET ended = 1'),
      // Keys of ended shards are left out: a shard that spent its budget leaves its backlog queued.
      quiet: db.prepare(
        `SELECT NOT EXISTS (SELECT 1 FROM hosts WHERE queued > 0 AND shard NOT IN (SELECT shard FROM shards WHERE ended = 1))
           AND NOT EXISTS (SELECT 1 FROM urls JOIN hosts ON hosts.host = urls.host
             WHERE urls.state = ${CLAIMED} AND hosts.shard NOT IN (SELECT shard FROM shards WHERE ended = 1))`,
      ).pluck(),
      // The host counts read the batch's claimed rows before `releaseBatch` queues them again.
      releaseBatchCounts: db.prepare(requeueHostCounts(SQLITE_COUNTS, { hosts: 'hosts', rows: `urls WHERE batch_id = ? AND state = ${CLAIMED}` })).pluck(),
      releaseBatch: db.prepare(`UPDATE urls SET ${requeuedUrl('@url', '@attempts')} WHERE batch_id = @batchId AND state = ${CLAIMED}`),
      // A URL claimed only to be skipped keeps that record: it was never going to be fetched.
      abandonBatch: db.prepare(
        `UPDATE urls SET state = ${DONE}, error = iif(skipped IS NULL, ?, NULL), fetched_at = ? WHERE batch_id = ? AND state = ${CLAIMED}`,
      ),
      releaseAllCounts: db.prepare(requeueHostCounts(SQLITE_COUNTS, { hosts: 'hosts', rows: `urls WHERE state = ${CLAIMED}` })).pluck(),
      releaseAll: db.prepare(`UPDATE urls SET ${requeuedUrl('NULL', 'attempts')} WHERE state = ${CLAIMED}`),
      nextRequestAt: db.prepare('SELECT next_request_at FROM hosts WHERE host = ?').pluck(),
      holdHost: db.prepare('UPDATE hosts SET next_request_at = max(next_request_at, @until) WHERE host = @host'),
      setNextRequestAt: db.prepare(
        'INSERT INTO hosts (host, next_request_at) VALUES (?, ?) ON CONFLICT (host) DO UPDATE SET next_request_at = excluded.next_request_at',
      ),
      pacing: db.prepare(`SELECT ${PACING_COLUMNS} FROM hosts WHERE host = ?`),
      setPacing: db.prepare(
        `INSERT INTO hosts (host, error_streak, throttle_delay_ms, next_request_at) VALUES (@host, @errorStreak, @throttleDelayMs, @notBefore)
         ON CONFLICT (host) DO UPDATE SET error_streak = excluded.error_streak, throttle_delay_ms = excluded.throttle_delay_ms,
           next_request_at = max(next_request_at, excluded.next_request_at)`,
      ),
      robots: db.prepare(`SELECT ${ROBOTS_COLUMNS} FROM hosts WHERE host = ? AND robots_fetched_at IS NOT NULL`),
      saveRobots: db.prepare(
        `INSERT INTO hosts (host, robots_status, robots_body, robots_fetched_at, robots_error) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (host) DO UPDATE SET robots_status = excluded.robots_status, robots_body = excluded.robots_body,
           robots_fetched_at = excluded.robots_fetched_at, robots_error = excluded.robots_error`,
      ),
      backlog: db.prepare('SELECT host, queued, render_queued AS rendering FROM hosts WHERE queued > 0 ORDER BY queued DESC, host LIMIT ?'),
      totalQueued: db.prepare('SELECT coalesce(sum(queued), 0) FROM hosts WHERE queued > 0').pluck(),
      shardBacklog: db.prepare('SELECT host, queued, render_queued AS rendering FROM hosts WHERE shard = ? AND queued > 0 ORDER BY queued DESC, host LIMIT ?'),
      shardQueued: db.prepare('SELECT coalesce(sum(queued), 0) FROM hosts WHERE shard = ? AND queued > 0').pluck(),
      batchTotals: db.prepare(`SELECT ${batchTotalsColumns(SQLITE_COUNTS)} FROM urls WHERE batch_id = ? AND state = ${DONE}`),
      totals: db.prepare(`SELECT ${crawlTotalsColumns(SQLITE_COUNTS)} FROM urls`),
      recordsPage: db.prepare(`SELECT id, ${recordColumns()} FROM urls WHERE id > ? AND state IN (${DONE}, ${GONE}) ORDER BY id LIMIT ?`),
      record: db.prepare(`SELECT ${recordColumns()} FROM urls WHERE url = ? AND state = ${DONE}`),
      insertGone: db.prepare(
        `INSERT INTO urls (url, host, depth, state, change, fetched_at) VALUES (?, ?, ?, ${GONE}, 'gone', ?) ON CONFLICT (url) DO NOTHING`,
      ),
    };
    this.statements = s;

    /** New URLs counted on their keys; every shard whose queue grew moves its version on. */
    const addQueuedByHost = (counts: Map<string, QueuedChange>): void => {
      const shards = new Set<number>();
      for (const [host, { n, render, shard = 0 }] of counts) {
        s.addQueued.run(host, n, render, shard);
        shards.add(shard);
      }
      for (const shard of shards) s.bumpVersion.run(shard);
    };
    /** Each shard of the keys a claim or requeue changed (one per key, repeats and all) moves its version on once. */
    const bumpShards = (shards: readonly number[]): void => {
      for (const shard of new Set(shards)) s.bumpVersion.run(shard);
    };
    const insertEntries = (entries: readonly FrontierEntry[]): number => {
      const added = new Map<string, QueuedChange>();
      let total = 0;
      for (const entry of entries) {
        const render = entry.render === true ? 1 : 0;
        if (s.insertUrl.run(entry.url, entry.host, entry.depth, render, entry.priority ?? 1).changes === 1) {
          const change = added.get(entry.host) ?? { n: 0, render: 0 };
          added.set(entry.host, { n: change.n + 1, render: change.render + render, shard: entry.shard });
          total += 1;
        }
      }
      addQueuedByHost(added);
      return total;
    };

    this.enqueueTx = db.transaction(insertEntries);
    const claimNow = (batchId: string, host: string, limit: number, maxPagesPerHost: number, render: 0 | 1, bounds: ClaimBounds): ClaimedUrl[] => {
      const claimQueued = (n: number, skipped: string | null): Array<ClaimRow & { id: number }> =>
        n <= 0 ? [] : (s.claimQueued.all(batchId, skipped, host, render, n) as Array<ClaimRow & { id: number }>).sort(inClaimOrder);
      const own = s.ownClaims.all(batchId, host, CLAIMED) as ClaimRow[];
      // The write lock of the immediate transaction serializes claims; each count is read only if the rule asks.
      const plan = planClaim(
        { limit, maxPagesPerHost, bounds },
        {
          share: s.batchShare.get(batchId, host) as number,
          get batchRows() {
            return s.batchRows.get(batchId) as number;
          },
          holding: own.length > 0,
          get otherHolders() {
            return s.otherHolders.get(host, batchId) as number;
          },
          get taken() {
            return (s.taken.get(host) as number | undefined) ?? 0;
          },
        },
      );
      if (plan === null) return own.map(toClaimed);
      const fresh = claimQueued(plan.fresh, null);
      // Fewer fresh URLs than planned: the queue ran out, and there is nothing left to skip.
      const capped = fresh.length === plan.fresh ? claimQueued(plan.capped, HOST_PAGE_CAP) : [];
      const claimed = [...fresh, ...capped];
      if (claimed.length > 0) bumpShards(s.claimCounts.all(JSON.stringify(claimed.map((row) => row.id))) as number[]);
      return [...own, ...claimed].map(toClaimed);
    };
    this.claimTx = db.transaction(claimNow);
    this.claimReadyTx = db.transaction((batchId: string, query: ReadyQuery): ReadyClaim | null => {
      const render = query.render ? 1 : 0;
      const readyKeys = () => s.readyKeys.all({ batchId, render, shard: query.shard ?? null, maxHolders: query.maxHolders, freeBy: query.freeBy, limit: READY_CANDIDATES }) as string[];
      return firstReadyClaim(s.heldKeys.all(batchId) as string[], readyKeys, (key) =>
        claimNow(batchId, key, query.batchLimit, query.maxPagesPerHost, render, { holders: query.holdersOf(key), batchLimit: query.batchLimit }),
      );
    });
    const completeOne = ({ batchId, record, discovered }: Completion): number | null => {
      const written = s.complete.run(...completedValues(record, sqliteFlag), record.url, batchId).changes;
      // A URL completed twice (a zombie attempt racing its retry) keeps its first record.
      if (written !== 1) return null;
      s.countFinished.run({ ...finishedTotals(record), shard: s.shardOfUrl.get(record.url) });
      return insertEntries(discovered);
    };
    this.completions = new GroupCommit(savepointEach(db, completeOne));
    this.releaseTx = db.transaction((batchId: string, retried?: { url: string; attempts: number }) => {
      bumpShards(s.releaseBatchCounts.all(batchId) as number[]);
      return s.releaseBatch.run({ batchId, url: retried?.url ?? null, attempts: retried?.attempts ?? 0 }).changes;
    });
    this.abandonTx = db.transaction((batchId: string, error: string, at: string) => {
      // A batch claims the keys of one shard only.
      const shard = (s.shardOfBatch.get(batchId) as number | undefined) ?? 0;
      s.countFinished.run({ ...(s.unfinishedTotals.get(batchId) as BatchTotals), shard });
      return s.abandonBatch.run(error, at, batchId).changes;
    });
    this.releaseAllTx = db.transaction(() => {
      bumpShards(s.releaseAllCounts.all() as number[]);
      return s.releaseAll.run().changes;
    });
    this.goneTx = db.transaction((entries: readonly FrontierEntry[], at: string) => {
      let added = 0;
      for (const entry of entries) added += s.insertGone.run(entry.url, entry.host, entry.depth, at).changes;
      return added;
    });
    this.startRequestTx = db.transaction((host: string, gapMs: number, maxWaitMs: number, clock: () => number): RequestStart => {
      const now = clock();
      const start = requestStartAt(this.nextRequestAt(host), now, maxWaitMs);
      if ('takenAt' in start) s.setNextRequestAt.run(host, now + gapMs);
      return start;
    });
    this.updatePacingTx = db.transaction((host: string, update: (current: HostPacing) => PacingUpdate): HostPacing => {
      const current = this.pacingOf(host);
      const next = update(current);
      if (!changesNothing(current, next)) s.setPacing.run({ host, ...next.pacing, notBefore: next.notBefore ?? 0 });
      return next.pacing;
    });
  }

  async enqueue(entries: readonly FrontierEntry[]): Promise<number> {
    const unknown = this.known.unknown(entries);
    if (unknown.length === 0) return 0;
    const added = this.enqueueTx.immediate(unknown);
    this.known.add(unknown);
    return added;
  }

  async claim(batchId: string, host: string, limit: number, maxPagesPerHost = Number.MAX_SAFE_INTEGER, render = false, bounds: ClaimBounds = {}): Promise<ClaimedUrl[]> {
    return this.claimTx.immediate(batchId, host, limit, maxPagesPerHost, render ? 1 : 0, bounds);
  }

  async claimReady(batchId: string, query: ReadyQuery): Promise<ReadyClaim | null> {
    return this.claimReadyTx.immediate(batchId, query);
  }

  /**
   * Links known to be seen are left out of the write. The others are known once the group's
   * transaction has committed (the write settles after its COMMIT), and only if the record was
   * written: a zombie attempt's completion looks at none of its links.
   */
  async complete(batchId: string, record: PageRecord, discovered: readonly FrontierEntry[]): Promise<number> {
    const unknown = this.known.unknown(discovered);
    const added = await this.completions.write({ batchId, record, discovered: unknown });
    if (added === null) return 0;
    this.known.add(unknown);
    return added;
  }

  async release(batchId: string, retried?: { url: string; attempts: number }): Promise<number> {
    return this.releaseTx.immediate(batchId, retried);
  }

  async abandon(batchId: string, error: string, at: string): Promise<number> {
    return this.abandonTx.immediate(batchId, error, at);
  }

  async releaseAll(): Promise<number> {
    return this.releaseAllTx.immediate();
  }

  async startRequest(host: string, gapMs: number, maxWaitMs: number, clock: () => number): Promise<RequestStart> {
    // With no gap there is nothing to write: a plain read still sees a deferral (Retry-After,
    // backoff), without taking the file's write lock for every request.
    if (gapMs === 0) return requestStartAt(this.nextRequestAt(host), clock(), maxWaitMs);
    return this.startRequestTx.immediate(host, gapMs, maxWaitMs, clock);
  }

  async holdHost(host: string, until: number): Promise<void> {
    this.statements.holdHost.run({ host, until });
  }

  private nextRequestAt(host: string): number {
    return (this.statements.nextRequestAt.get(host) as number | undefined) ?? 0;
  }

  private pacingOf(host: string): HostPacing {
    return (this.statements.pacing.get(host) as HostPacing | undefined) ?? INITIAL_PACING;
  }

  async hostPacing(host: string): Promise<HostPacing> {
    return this.pacingOf(host);
  }

  async updatePacing(host: string, update: (current: HostPacing) => PacingUpdate): Promise<HostPacing> {
    return this.updatePacingTx.immediate(host, update);
  }

  async robots(host: string): Promise<RobotsRecord | undefined> {
    return this.statements.robots.get(host) as RobotsRecord | undefined;
  }

  async saveRobots(host: string, record: RobotsRecord): Promise<void> {
    this.statements.saveRobots.run(host, record.status, record.body, record.fetchedAt, record.error);
  }

  async snapshot(maxHosts: number): Promise<FrontierSnapshot> {
    return this.db.transaction(() => this.snapshotNow(maxHosts))();
  }

  /** The whole crawl's view (shard undefined: its version is the sum of the shards'), or one shard's. */
  private viewNow(maxHosts: number, shard?: number): CrawlView {
    const s = this.statements;
    const { version, ...totals } = (shard === undefined ? s.crawlState.get() : s.shardState.get(shard)) as BatchTotals & { version: number };
    const backlog = (shard === undefined ? s.backlog.all(maxHosts) : s.shardBacklog.all(shard, maxHosts)) as Array<Required<HostBacklog>>;
    return {
      version,
      queued: (shard === undefined ? s.totalQueued.get() : s.shardQueued.get(shard)) as number,
      hosts: backlog.map(({ host, queued, rendering }) => (rendering > 0 ? { host, queued, rendering } : { host, queued })),
      totals,
    };
  }

  private snapshotNow(maxHosts: number): FrontierSnapshot {
    const { version, queued, hosts } = this.viewNow(maxHosts);
    return { version, queued, hosts };
  }

  async view(maxHosts: number, shard?: number): Promise<CrawlView> {
    return this.db.transaction(() => this.viewNow(maxHosts, shard))();
  }

  async quiet(): Promise<boolean> {
    return this.statements.quiet.get() === 1;
  }

  async endShard(shard: number): Promise<void> {
    this.statements.endShard.run(shard);
  }

  async saveConfig(version: number, config: string): Promise<void> {
    this.statements.saveConfig.run(version, config);
  }

  async latestConfig(): Promise<StoredConfig | undefined> {
    return this.statements.latestConfig.get() as StoredConfig | undefined;
  }

  async addSeedScope(keys: readonly string[]): Promise<void> {
    this.db.transaction(() => {
      for (const key of keys) this.statements.addSeedScope.run(key);
    })();
  }

  async seedScope(): Promise<string[]> {
    return this.statements.seedScope.all() as string[];
  }

  async handOver(run: string, shard = 0): Promise<void> {
    this.statements.handOver.run(shard, run);
  }

  async handedOver(shard = 0): Promise<string | undefined> {
    return (this.statements.handedOver.get(shard) as string | null | undefined) ?? undefined;
  }

  async batchTotals(batchId: string): Promise<BatchTotals> {
    return this.statements.batchTotals.get(batchId) as BatchTotals;
  }

  async totals(): Promise<CrawlTotals> {
    return toTotals(this.statements.totals.get() as TotalsRow);
  }

  /** In pages (see `recordsInPages`): an open cursor would keep the connection, which a worker's activities share, busy between yields. */
  records(): AsyncGenerator<PageRecord> {
    return recordsInPages((after, size) => this.statements.recordsPage.all(after, size) as Array<RecordRow & { id: number }>, RECORDS_PAGE);
  }

  async record(url: string): Promise<PageRecord | undefined> {
    const row = this.statements.record.get(url) as RecordRow | undefined;
    return row && toRecord(row);
  }

  async recordGone(entries: readonly FrontierEntry[], at: string): Promise<number> {
    return this.goneTx.immediate(entries, at);
  }

  async close(): Promise<void> {
    // Completions already queued are committed, and their callers told, before the file closes.
    await this.completions.settled();
    if (this.db.open) this.db.close();
  }
}
