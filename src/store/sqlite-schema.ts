/**
 * The SQLite store file's schema and its versions: today's schema for a new file, and the
 * numbered migrations (`PRAGMA user_version`) that bring a file of an older release up to it.
 */
import type Database from 'better-sqlite3';
import { RECORD_FIELDS, type Storage } from './record-fields';
import { CLAIMED, DONE, HOST_PAGE_CAP, QUEUED } from './url-states';
import { READY_KEY_TIERS } from './claim-rules';

/**
 * Per shard of the crawl (see src/scheduling/shards.ts): its version, its running totals
 * (kept in the transactions that finish URLs, so a view never scans the queue), whether it
 * has ended, and the run whose batches are to hand over.
 */
const SHARDS_TABLE = `CREATE TABLE IF NOT EXISTS shards (shard INTEGER PRIMARY KEY, version INTEGER NOT NULL DEFAULT 0,
  processed INTEGER NOT NULL DEFAULT 0, fetched INTEGER NOT NULL DEFAULT 0, errors INTEGER NOT NULL DEFAULT 0,
  skipped INTEGER NOT NULL DEFAULT 0, bytes INTEGER NOT NULL DEFAULT 0, ended INTEGER NOT NULL DEFAULT 0, handover TEXT);`;

/**
 * How the crawl ended (store-rows.ts reads it): one row, written by the crawl's last activity;
 * no row while it runs.
 */
const CRAWL_END_TABLE = `CREATE TABLE IF NOT EXISTS crawl_end (id INTEGER PRIMARY KEY CHECK (id = 1), end_status TEXT NOT NULL,
  failure_code TEXT, failure_message TEXT, ended_at TEXT NOT NULL);`;

/** SQLite has no boolean: flags are 1 or 0. */
export const sqliteFlag = (value: boolean): number => (value ? 1 : 0);

/** The SQLite type a storage kind keeps its values in. */
const SQLITE_TYPES: Readonly<Record<Storage, string>> = { text: 'TEXT', integer: 'INTEGER', flag: 'INTEGER', 'json-list': 'TEXT', 'json-object': 'TEXT', json: 'TEXT' };

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

/** The backlog of keys no batch has claimed from: the first tier of a ready claim (`READY_KEY_TIERS`). */
const FRESH_HOSTS_INDEX = `CREATE INDEX IF NOT EXISTS hosts_fresh_backlog ON hosts (queued) WHERE queued > 0 AND ${READY_KEY_TIERS[0]};`;

/**
 * The short key each batch's rows carry in `urls.batch_id` (batch-keys.ts): `#` and the batch's
 * number in the file. A file from before keeps its batches' whole IDs as their keys.
 */
const BATCH_KEYS_TABLE = `CREATE TABLE IF NOT EXISTS batch_keys (n INTEGER PRIMARY KEY, batch_id TEXT NOT NULL UNIQUE, key TEXT NOT NULL UNIQUE);`;

/**
 * Today's schema: a new file is made from it whole. After an older file's migrations it adds
 * what the file still lacks: tables and indexes a migration need not make (IF NOT EXISTS).
 * A URL's row has the queue's columns, then the record's; the unique `url` is the seen-set.
 * Claims select a host's queued URLs by kind, most important first (`urls_queue`): fetch
 * batches must not step over a host's render backlog; queued URLs only, so a claim takes a URL
 * out of the index and its completion has nothing to write there. A claim's counts of a batch
 * and a key (`urls_by_batch`: its share; `urls_claimed`: the key's holders, the batch's held
 * keys and own claims) are read from the indexes alone: on a crawl of many small hosts a batch
 * claims key after key, and reading its rows from the table took most of each claim.
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
  CREATE INDEX IF NOT EXISTS urls_by_batch ON urls (batch_id, host) WHERE batch_id IS NOT NULL;
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
  ${FRESH_HOSTS_INDEX}
  CREATE TABLE IF NOT EXISTS configs (version INTEGER PRIMARY KEY, config TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS seed_scope (key TEXT PRIMARY KEY) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS urls_queue ON urls (host, render, priority DESC, id) WHERE state = ${QUEUED};
  CREATE INDEX IF NOT EXISTS hosts_shard_backlog ON hosts (shard, queued) WHERE queued > 0;
  CREATE INDEX IF NOT EXISTS urls_claimed ON urls (host, batch_id) WHERE state = ${CLAIMED};
  ${SHARDS_TABLE}
  ${CRAWL_END_TABLE}
  ${BATCH_KEYS_TABLE}
`;

/** Shard 0's row of a file written before shards: its version, and totals counted from its records. */
const shardZero = (version: number) => `
  INSERT INTO shards (shard, version, processed, fetched, errors, skipped, bytes)
    SELECT 0, ${version}, count(*), coalesce(sum(status IS NOT NULL), 0), coalesce(sum(error IS NOT NULL), 0),
      coalesce(sum(skipped IS NOT NULL), 0), coalesce(sum(bytes), 0) FROM urls WHERE state = ${DONE};`;

/** Runs `migration` when `table` lacks `column`: a file from before the numbering may have any of them. */
function addMissingColumn(db: Database.Database, table: string, column: string, migration: string): void {
  const columns = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(table);
  if (!columns.includes(column)) db.exec(migration);
}

/** Columns added for extraction, recrawl and stored bodies, all nullable TEXT. */
const CONTENT_COLUMNS = ['fields', 'etag', 'last_modified', 'content_hash', 'change', 'body_ref'];

export const hasTable = (db: Database.Database, name: string): boolean => db.prepare('SELECT 1 FROM sqlite_master WHERE name = ?').get(name) !== undefined;

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

/** Version 2: the batch and claim indexes gain the key (see SCHEMA), which makes them anew. */
function claimIndexesWithKey(db: Database.Database): void {
  db.exec('DROP INDEX IF EXISTS urls_by_batch; DROP INDEX IF EXISTS urls_claimed;');
}

/** Version 3: the crawl's end is recorded (CRAWL_END_TABLE); a file from before has none, as if its crawl still ran. */
function crawlEnd(db: Database.Database): void {
  db.exec(CRAWL_END_TABLE);
}

/** Version 4: records name the WARC record that holds their payload (`payloadRecord`); NULL in rows written before. */
function payloadRecord(db: Database.Database): void {
  addMissingColumn(db, 'urls', 'payload_record', 'ALTER TABLE urls ADD COLUMN payload_record TEXT');
}

/** Version 5: ready claims try keys no batch has claimed from first (claim-rules.ts, `READY_KEY_TIERS`), from an index of their own. */
function freshHostsIndex(db: Database.Database): void {
  db.exec(FRESH_HOSTS_INDEX);
}

/**
 * Version 6: batches' rows carry a short key (BATCH_KEYS_TABLE); the batches a file already
 * has keep their whole IDs as their keys, so one that runs on across the upgrade finds its rows.
 */
function batchKeys(db: Database.Database): void {
  db.exec(`${BATCH_KEYS_TABLE}
    INSERT INTO batch_keys (batch_id, key) SELECT DISTINCT batch_id, batch_id FROM urls
      WHERE batch_id IS NOT NULL AND batch_id NOT IN (SELECT key FROM batch_keys);`);
}

/**
 * Schema versions of a store file, applied in order to a file made by an older version;
 * `PRAGMA user_version` counts those the file has, so each runs once per file. Never edit an
 * applied one: add the next, and its change to SCHEMA for new files.
 */
const MIGRATIONS: ReadonlyArray<(db: Database.Database) => void> = [catchUp, claimIndexesWithKey, crawlEnd, payloadRecord, freshHostsIndex, batchKeys];

/** The schema version a migrated file is at. */
export const SQLITE_SCHEMA_VERSION = MIGRATIONS.length;

const userVersion = (db: Database.Database): number => db.pragma('user_version', { simple: true }) as number;

/** Whether the file has every migration: false for one an earlier release wrote. */
export const isCurrent = (db: Database.Database): boolean => userVersion(db) >= MIGRATIONS.length;

/**
 * In one immediate transaction, so two workers opening one old file migrate it once; a file
 * at the current version opens without the write lock.
 */
export function migrate(db: Database.Database): void {
  if (isCurrent(db)) return;
  db.transaction(() => {
    // Read again under the lock: another worker may have migrated the file meanwhile.
    const applied = userVersion(db);
    if (applied >= MIGRATIONS.length) return;
    if (hasTable(db, 'urls')) for (const migration of MIGRATIONS.slice(applied)) migration(db);
    db.exec(SCHEMA);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
}
