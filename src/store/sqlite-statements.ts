/**
 * The SQLite store's prepared statements, by what they touch. Prepared once per open file: a
 * statement prepared per call would be parsed and planned again on every page.
 */
import type Database from 'better-sqlite3';
import { COMPLETED_FIELDS, recordColumns } from './record-fields';
import { batchTotalsColumns, crawlTotalsColumns, END_COLUMNS, PACING_COLUMNS, ROBOTS_COLUMNS, type CountDialect } from './store-rows';
import { CLAIMED, DONE, GONE, QUEUED } from './url-states';
import { claimHostCounts, requeuedUrl, requeueHostCounts } from './requeue-rules';
import { otherHoldersSql, READY_KEY_TIERS } from './claim-rules';

/** Version and running totals of the shards a WHERE picks, summed. */
const SHARD_STATE = `SELECT coalesce(sum(version), 0) AS version, coalesce(sum(processed), 0) AS processed, coalesce(sum(fetched), 0) AS fetched,
  coalesce(sum(errors), 0) AS errors, coalesce(sum(skipped), 0) AS skipped, coalesce(sum(bytes), 0) AS bytes FROM shards`;

/** A comparison is 1 or 0, so summing a condition counts the rows it picks. */
const SQLITE_COUNTS: CountDialect = { count: (condition) => `coalesce(sum(${condition}), 0)`, sum: (column) => `coalesce(sum(${column}), 0)` };

/** The free keys of one of `READY_KEY_TIERS` a ready claim may take, biggest backlog first: at most `@limit`. */
const readyTier = (taken: string, tier: number): string => `
  SELECT host, ${tier} AS tier, queued FROM hosts WHERE queued > 0 AND ${taken} AND iif(@render, render_queued, queued - render_queued) > 0
    AND (@shard IS NULL OR shard = @shard) AND next_request_at <= @freeBy
    AND ${otherHoldersSql('urls', 'hosts.host', '@batchId')} < @maxHolders
  ORDER BY queued DESC LIMIT @limit`;

/** Statements that queue, claim and give back URLs (the seen-set, the queue index, the claims). */
function queueStatements(db: Database.Database) {
  return {
    insertUrl: db.prepare('INSERT INTO urls (url, host, depth, render, priority) VALUES (?, ?, ?, ?, ?) ON CONFLICT (url) DO NOTHING'),
    // A key's shard is the same wherever it is computed; rows made by pacing or robots before
    // the key had URLs have the default, which the first enqueue corrects.
    addQueued: db.prepare(
      `INSERT INTO hosts (host, queued, render_queued, shard) VALUES (?, ?, ?, ?)
       ON CONFLICT (host) DO UPDATE SET queued = queued + excluded.queued, render_queued = render_queued + excluded.render_queued,
         shard = excluded.shard`,
    ),
    bumpVersion: db.prepare('INSERT INTO shards (shard, version) VALUES (?, 1) ON CONFLICT (shard) DO UPDATE SET version = version + 1'),
    shardOfBatch: db.prepare('SELECT hosts.shard FROM urls JOIN hosts ON hosts.host = urls.host WHERE urls.batch_id = ? LIMIT 1').pluck(),
    // The state is SQL, not a parameter, so that the planner may use the index of claimed URLs.
    ownClaims: db.prepare(`SELECT url, depth, attempts, skipped, priority FROM urls WHERE batch_id = ? AND host = ? AND state = ${CLAIMED} ORDER BY priority DESC, id`),
    batchShare: db.prepare('SELECT count(*) FROM urls WHERE batch_id = ? AND host = ?').pluck(),
    claimQueued: db.prepare(
      `UPDATE urls SET state = ${CLAIMED}, batch_id = ?, skipped = ?
       WHERE id IN (SELECT id FROM urls WHERE host = ? AND render = ? AND state = ${QUEUED} ORDER BY priority DESC, id LIMIT ?)
       RETURNING id, url, depth, attempts, skipped, priority`,
    ),
    batchRows: db.prepare('SELECT count(*) FROM urls WHERE batch_id = ?').pluck(),
    otherHolders: db.prepare(`SELECT ${otherHoldersSql('urls', '?', '?')}`).pluck(),
    // The batch's keys, from its index, each asked whether the batch still has URLs of it claimed: a
    // filter on the state would read every row the batch ever had.
    heldKeys: db.prepare(
      `SELECT host FROM (SELECT DISTINCT host FROM urls WHERE batch_id = @batchId) AS held
       WHERE EXISTS (SELECT 1 FROM urls WHERE urls.host = held.host AND batch_id = @batchId AND state = ${CLAIMED})`,
    ).pluck(),
    readyKeys: db.prepare(
      `SELECT host FROM (${READY_KEY_TIERS.map((taken, tier) => `SELECT * FROM (${readyTier(taken, tier)})`).join(' UNION ALL ')})
       ORDER BY tier, queued DESC LIMIT @limit`,
    ).pluck(),
    backlogFreeAt: db.prepare(
      `SELECT min(next_request_at) FROM hosts WHERE queued > 0 AND iif(@render, render_queued, queued - render_queued) > 0
         AND (@shard IS NULL OR shard = @shard)`,
    ).pluck(),
    taken: db.prepare('SELECT taken FROM hosts WHERE host = ?').pluck(),
    keyQueued: db.prepare('SELECT iif(?, render_queued, queued - render_queued) FROM hosts WHERE host = ?').pluck(),
    // The rows a claim just took, by the ids (a JSON array) its updates returned.
    claimCounts: db.prepare(claimHostCounts(SQLITE_COUNTS, { hosts: 'hosts', rows: 'urls WHERE id IN (SELECT value FROM json_each(?))' })).pluck(),
    // The host counts read the batch's claimed rows before `releaseBatch` queues them again.
    releaseBatchCounts: db.prepare(requeueHostCounts(SQLITE_COUNTS, { hosts: 'hosts', rows: `urls WHERE batch_id = ? AND state = ${CLAIMED}` })).pluck(),
    releaseBatch: db.prepare(`UPDATE urls SET ${requeuedUrl('@url', '@attempts')} WHERE batch_id = @batchId AND state = ${CLAIMED}`),
    releaseKeyCounts: db.prepare(requeueHostCounts(SQLITE_COUNTS, { hosts: 'hosts', rows: `urls WHERE batch_id = ? AND host = ? AND state = ${CLAIMED}` })).pluck(),
    releaseKey: db.prepare(`UPDATE urls SET ${requeuedUrl('@url', '@attempts')} WHERE batch_id = @batchId AND host = @key AND state = ${CLAIMED}`),
    releaseAllCounts: db.prepare(requeueHostCounts(SQLITE_COUNTS, { hosts: 'hosts', rows: `urls WHERE state = ${CLAIMED}` })).pluck(),
    releaseAll: db.prepare(`UPDATE urls SET ${requeuedUrl('NULL', 'attempts')} WHERE state = ${CLAIMED}`),
    insertGone: db.prepare(
      `INSERT INTO urls (url, host, depth, state, change, fetched_at) VALUES (?, ?, ?, ${GONE}, 'gone', ?) ON CONFLICT (url) DO NOTHING`,
    ),
  };
}

/** Statements that finish URLs and read the crawl back: records, totals, views of its shards. */
function recordStatements(db: Database.Database) {
  return {
    // Returns the key's shard, whose totals count the URL: no second lookup of the row.
    complete: db
      .prepare(
        `UPDATE urls SET state = ${DONE}, ${COMPLETED_FIELDS.map((field) => `${field.column} = ?`).join(', ')}
         WHERE url = ? AND batch_id = ? AND state = ${CLAIMED}
         RETURNING (SELECT shard FROM hosts WHERE hosts.host = urls.host)`,
      )
      .pluck(),
    countFinished: db.prepare(
      `INSERT INTO shards (shard, version, processed, fetched, errors, skipped, bytes) VALUES (@shard, 1, @processed, @fetched, @errors, @skipped, @bytes)
       ON CONFLICT (shard) DO UPDATE SET version = version + 1, processed = processed + excluded.processed, fetched = fetched + excluded.fetched,
         errors = errors + excluded.errors, skipped = skipped + excluded.skipped, bytes = bytes + excluded.bytes`,
    ),
    unfinishedTotals: db.prepare(
      `SELECT count(*) AS processed, 0 AS fetched, coalesce(sum(skipped IS NULL), 0) AS errors,
         coalesce(sum(skipped IS NOT NULL), 0) AS skipped, 0 AS bytes FROM urls WHERE batch_id = ? AND state = ${CLAIMED}`,
    ),
    // A URL claimed only to be skipped keeps that record: it was never going to be fetched.
    abandonBatch: db.prepare(
      `UPDATE urls SET state = ${DONE}, error = iif(skipped IS NULL, ?, NULL), fetched_at = ? WHERE batch_id = ? AND state = ${CLAIMED}`,
    ),
    crawlState: db.prepare(SHARD_STATE),
    shardState: db.prepare(`${SHARD_STATE} WHERE shard = ?`),
    // Keys of ended shards are left out: a shard that spent its budget leaves its backlog queued.
    quiet: db.prepare(
      `SELECT NOT EXISTS (SELECT 1 FROM hosts WHERE queued > 0 AND shard NOT IN (SELECT shard FROM shards WHERE ended = 1))
         AND NOT EXISTS (SELECT 1 FROM urls JOIN hosts ON hosts.host = urls.host
           WHERE urls.state = ${CLAIMED} AND hosts.shard NOT IN (SELECT shard FROM shards WHERE ended = 1))`,
    ).pluck(),
    backlog: db.prepare('SELECT host, queued, render_queued AS rendering FROM hosts WHERE queued > 0 ORDER BY queued DESC, host LIMIT ?'),
    totalQueued: db.prepare('SELECT coalesce(sum(queued), 0) FROM hosts WHERE queued > 0').pluck(),
    shardBacklog: db.prepare('SELECT host, queued, render_queued AS rendering FROM hosts WHERE shard = ? AND queued > 0 ORDER BY queued DESC, host LIMIT ?'),
    shardQueued: db.prepare('SELECT coalesce(sum(queued), 0) FROM hosts WHERE shard = ? AND queued > 0').pluck(),
    batchTotals: db.prepare(`SELECT ${batchTotalsColumns(SQLITE_COUNTS)} FROM urls WHERE batch_id = ? AND state = ${DONE}`),
    totals: db.prepare(`SELECT ${crawlTotalsColumns(SQLITE_COUNTS)} FROM urls`),
    recordsPage: db.prepare(`SELECT id, ${recordColumns()} FROM urls WHERE id > ? AND state IN (${DONE}, ${GONE}) ORDER BY id LIMIT ?`),
    record: db.prepare(`SELECT ${recordColumns()} FROM urls WHERE url = ? AND state = ${DONE}`),
    // The URLs (a JSON array: one parameter, however many links a page has) each looked up in
    // the seen-set's index; only the row's state is read, none of the record's columns.
    recordedAmong: db.prepare(`SELECT url FROM urls WHERE url IN (SELECT value FROM json_each(?)) AND state = ${DONE}`).pluck(),
    stopRun: db.prepare('INSERT INTO shards (shard, handover) VALUES (?, ?) ON CONFLICT (shard) DO UPDATE SET handover = excluded.handover'),
    stopOrder: db.prepare('SELECT handover FROM shards WHERE shard = ?').pluck(),
    endShard: db.prepare('INSERT INTO shards (shard, ended) VALUES (?, 1) ON CONFLICT (shard) DO UPDATE SET ended = 1'),
  };
}

/** Statements about a key's pacing and robots.txt, and the crawl's configs, seed scope and end. */
function hostStatements(db: Database.Database) {
  return {
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
    saveConfig: db.prepare('INSERT INTO configs (version, config) VALUES (?, ?) ON CONFLICT (version) DO NOTHING'),
    latestConfig: db.prepare('SELECT version, config FROM configs ORDER BY version DESC LIMIT 1'),
    configVersion: db.prepare('SELECT coalesce(max(version), 0) AS version FROM configs').pluck(),
    addSeedScope: db.prepare('INSERT INTO seed_scope (key) VALUES (?) ON CONFLICT (key) DO NOTHING'),
    seedScope: db.prepare('SELECT key FROM seed_scope').pluck(),
    recordEnd: db.prepare(
      `INSERT INTO crawl_end (id, end_status, failure_code, failure_message, ended_at) VALUES (1, @status, @failureCode, @failureMessage, @endedAt)
       ON CONFLICT (id) DO UPDATE SET end_status = excluded.end_status, failure_code = excluded.failure_code,
         failure_message = excluded.failure_message, ended_at = excluded.ended_at`,
    ),
    crawlEnd: db.prepare(`SELECT ${END_COLUMNS} FROM crawl_end`),
    clearEnd: db.prepare('DELETE FROM crawl_end'),
  };
}

export type SqliteStatements = ReturnType<typeof prepareStatements>;

export function prepareStatements(db: Database.Database) {
  return { ...queueStatements(db), ...recordStatements(db), ...hostStatements(db) };
}
