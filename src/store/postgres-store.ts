/**
 * The frontier of one crawl in a PostgreSQL database shared by workers on many machines, with
 * the guarantees of the SQLite store (see frontier-store.ts), kept by the database rather than
 * by a single writer:
 * - the seen-set is a unique index, and new URLs go in with INSERT ... ON CONFLICT DO NOTHING;
 *   URLs this process knows to be in it (known-urls.ts) are not sent;
 * - a claim locks its host's row (SELECT ... FOR UPDATE), so claims of one host are serialized
 *   and the per-host cap counts exactly; the queued rows themselves are taken with
 *   FOR UPDATE SKIP LOCKED, so a claim never waits on another transaction's rows;
 * - every change to the queue bumps a shard's version in the same transaction, as its last
 *   lock, so versions order a shard's views, and lock order is always urls -> hosts ->
 *   crawl_shards (in shard order). A completion counts on its own shard's row only: URLs it
 *   finds for other shards' keys grow their queues without touching their rows (see
 *   FrontierStore.view), so no row is written by every page of the crawl.
 *
 * The per-page path is one statement each: `complete` (record + new links + host counts +
 * version) and `startRequest`. Several changes are one statement with data-modifying
 * CTEs; each CTE feeds the next, which fixes the order in which their locks are taken.
 */
import {
  type BatchTotals,
  type ClaimBounds,
  type ClaimedUrl,
  type ReadyClaim,
  type ReadyQuery,
  type ShareClaim,
  type CrawlTotals,
  type CrawlView,
  type FrontierEntry,
  type FrontierSnapshot,
  type FrontierStore,
  type HostPacing,
  changesNothing,
  INITIAL_PACING,
  type PacingUpdate,
  type PageRecord,
  type RobotsRecord,
  requestStartAt,
  type RequestStart,
  type StopOrder,
  type StoredConfig,
  type CrawlEnd,
} from './frontier-store';
import type { PostgresDatabase } from './postgres-database';
import type { PoolClient } from 'pg';
import {
  batchTotalsColumns,
  crawlTotalsColumns,
  END_COLUMNS,
  endValues,
  PACING_COLUMNS,
  recordedIn,
  recordsInPages,
  ROBOTS_COLUMNS,
  stopOrderText,
  toClaimed,
  toCrawlEnd,
  toStopOrder,
  toTotals,
  type ClaimRow,
  type CountDialect,
  type EndRow,
  type TotalsRow,
} from './store-rows';
import { COMPLETED_FIELDS, completedValues, recordColumns, toRecord, type RecordRow } from './record-fields';
import { CLAIMED, DONE, GONE, HOST_PAGE_CAP, QUEUED } from './url-states';
import { otherHoldersSql, planClaim, READY_CANDIDATES, READY_KEY_TIERS, readyClaims, type ClaimPlan, type ClaimRequest } from './claim-rules';
import { claimHostCounts, requeuedUrl, requeueHostCounts } from './requeue-rules';
import { KnownUrls } from './known-urls';

/** Records read per round trip by `records()`. */
const RECORDS_PAGE = 1_000;

/** Counts as int and byte sums as bigint (sum of a bigint is numeric, which pg reads as text). */
const PG_COUNTS: CountDialect = { count: (condition) => `(count(*) FILTER (WHERE ${condition}))::int`, sum: (column) => `coalesce(sum(${column}), 0)::bigint` };

/** Selects one URL of crawl $1 by its text in $n, through the unique hash index. */
const byUrl = (n: number) => `url_hash = md5($${n})::uuid AND url = $${n}`;

/**
 * CTEs that add the entries $2 (urls), $3 (hosts), $4 (depths), $5 (to render or not), $6 (priorities) to crawl
 * $1 unless seen, in the given order, and count them on their hosts, all and to render (in
 * host order, so concurrent enqueues lock host rows in one order); a new host gets its shard
 * from $`shards`. `gate` may hold back the insert (a WHERE on the entries).
 */
const insertEntries = (gate: string, shards: number) => `
  added AS (
    INSERT INTO crawlflow.urls (crawl, url, host, depth, render, priority)
    SELECT $1, e.url, e.host, e.depth, e.render, e.priority
    FROM unnest($2::text[], $3::text[], $4::int[], $5::boolean[], $6::float8[]) WITH ORDINALITY AS e (url, host, depth, render, priority, n)
    ${gate}
    ORDER BY e.n
    ON CONFLICT (crawl, url_hash) DO NOTHING
    RETURNING host, render),
  keys AS (SELECT DISTINCT ON (host) host, shard FROM unnest($3::text[], $${shards}::int[]) AS k (host, shard)),
  per_host AS (
    SELECT a.host, k.shard, count(*)::int AS n, (count(*) FILTER (WHERE a.render))::int AS rendering
    FROM added a JOIN keys k ON k.host = a.host GROUP BY a.host, k.shard),
  counted AS (
    INSERT INTO crawlflow.hosts (crawl, host, queued, render_queued, shard) SELECT $1, host, n, rendering, shard FROM per_host ORDER BY host
    ON CONFLICT (crawl, host) DO UPDATE SET queued = hosts.queued + excluded.queued, render_queued = hosts.render_queued + excluded.render_queued,
      shard = excluded.shard
    RETURNING shard)`;

/**
 * The last step of every queue change: bump the version of each shard the `changed` CTE
 * returned (a `shard` column) once it has run.
 */
const bumpShardsAfter = (changed: string, returning: string) => `
  INSERT INTO crawlflow.crawl_shards (crawl, shard, version)
  SELECT $1, shard, 1 FROM (SELECT DISTINCT shard FROM ${changed}) s ORDER BY shard
  ON CONFLICT (crawl, shard) DO UPDATE SET version = crawl_shards.version + 1
  RETURNING ${returning}`;

const ENQUEUE = `WITH ${insertEntries('', 7)} ${bumpShardsAfter('counted', '(SELECT sum(n) FROM per_host)::int AS added')}`;

/** The parameter of a completed field in COMPLETE: $7 is the URL, $8 the batch, then the fields in order. */
const completedParam = (name: string): string => `$${9 + COMPLETED_FIELDS.findIndex((field) => field.name === name)}`;
/** The parameter of COMPLETE's discovered entries' shards, after the completed fields. */
const COMPLETE_SHARDS_PARAM = 9 + COMPLETED_FIELDS.length;

const COMPLETE = `
  WITH done AS (
    UPDATE crawlflow.urls SET state = ${DONE}, ${COMPLETED_FIELDS.map((field) => `${field.column} = ${completedParam(field.name)}`).join(', ')}
    WHERE crawl = $1 AND ${byUrl(7)} AND batch_id = $8 AND state = ${CLAIMED}
    RETURNING host),
  ${insertEntries('WHERE EXISTS (SELECT 1 FROM done)', COMPLETE_SHARDS_PARAM)}
  INSERT INTO crawlflow.crawl_shards AS s (crawl, shard, version, processed, fetched, errors, skipped, bytes)
  SELECT $1, h.shard, 1, 1, CASE WHEN ${completedParam('status')}::int IS NULL THEN 0 ELSE 1 END, CASE WHEN ${completedParam('error')}::text IS NULL THEN 0 ELSE 1 END,
    CASE WHEN ${completedParam('skipped')}::text IS NULL THEN 0 ELSE 1 END, ${completedParam('bytes')}::bigint
  FROM done JOIN crawlflow.hosts h ON h.crawl = $1 AND h.host = done.host
  WHERE (SELECT count(*) FROM counted) >= 0
  ON CONFLICT (crawl, shard) DO UPDATE SET version = s.version + 1, processed = s.processed + 1, fetched = s.fetched + excluded.fetched,
    errors = s.errors + excluded.errors, skipped = s.skipped + excluded.skipped, bytes = s.bytes + excluded.bytes
  RETURNING (SELECT sum(n) FROM per_host)::int AS added`;

/**
 * A URL claimed only to be skipped keeps that record: it was never going to be fetched. The
 * batch's keys are all of one shard, whose row counts them.
 */
const ABANDON = `
  WITH failed AS (
    UPDATE crawlflow.urls SET state = ${DONE}, error = CASE WHEN skipped IS NULL THEN $3 END, fetched_at = $4
    WHERE crawl = $1 AND batch_id = $2 AND state = ${CLAIMED}
    RETURNING host, skipped)
  INSERT INTO crawlflow.crawl_shards AS s (crawl, shard, version, processed, errors, skipped)
  SELECT $1, coalesce((SELECT h.shard FROM crawlflow.hosts h WHERE h.crawl = $1 AND h.host = (SELECT host FROM failed LIMIT 1)), 0), 1,
    (SELECT count(*) FROM failed), (SELECT count(*) FROM failed WHERE skipped IS NULL), (SELECT count(*) FROM failed WHERE skipped IS NOT NULL)
  ON CONFLICT (crawl, shard) DO UPDATE SET version = s.version + 1, processed = s.processed + excluded.processed,
    errors = s.errors + excluded.errors, skipped = s.skipped + excluded.skipped
  RETURNING (SELECT count(*) FROM failed)::int AS abandoned`;

/**
 * Puts claimed URLs matching `filter` (of batch $2) back in the queue, as requeue-rules.ts says;
 * $3 names a URL whose attempt count becomes $4. The update returns each row's `skipped` as it
 * was claimed, which the host counts read.
 */
const requeue = (filter: string) => `
  WITH old AS (
    SELECT id, skipped FROM crawlflow.urls WHERE crawl = $1 AND ${filter} AND state = ${CLAIMED} ORDER BY id FOR UPDATE),
  back AS (
    UPDATE crawlflow.urls u SET ${requeuedUrl('$3', '$4')}
    FROM old WHERE u.crawl = $1 AND u.id = old.id
    RETURNING u.host, u.render, old.skipped),
  counted AS (${requeueHostCounts(PG_COUNTS, { hosts: 'crawlflow.hosts', crawl: 'h.crawl = $1', rows: 'back' })})
  ${bumpShardsAfter('counted', '(SELECT count(*) FROM back)::int AS released')}`;

const RELEASE = requeue('batch_id = $2');
const RELEASE_KEY = requeue('batch_id = $2 AND host = $5');
// $2 is unused (null), so both variants take the same parameters; batch_id IS NOT NULL lets the batch index serve.
const RELEASE_ALL = requeue('batch_id IS NOT NULL AND $2::text IS NULL');

/**
 * Claims up to $4 queued URLs of host $2 of one kind ($6: to render, or to fetch), the first
 * $5 of them within the host cap and the rest marked to be skipped; the host's counters move
 * by the rows claimed, as requeue-rules.ts says.
 */
const CLAIM_QUEUED = `
  WITH picked AS (
    SELECT id, row_number() OVER (ORDER BY priority DESC, id) AS n FROM (
      SELECT id, priority FROM crawlflow.urls WHERE crawl = $1 AND host = $2 AND render = $6 AND state = ${QUEUED}
      ORDER BY priority DESC, id LIMIT $4 FOR UPDATE SKIP LOCKED) q),
  claimed AS (
    UPDATE crawlflow.urls u SET state = ${CLAIMED}, batch_id = $3, skipped = CASE WHEN picked.n <= $5 THEN NULL ELSE '${HOST_PAGE_CAP}' END
    FROM picked WHERE u.crawl = $1 AND u.id = picked.id
    RETURNING u.id, u.url, u.host, u.depth, u.attempts, u.skipped, u.render, u.priority),
  counted AS (${claimHostCounts(PG_COUNTS, { hosts: 'crawlflow.hosts', crawl: 'h.crawl = $1', rows: 'claimed' })}),
  bumped AS (${bumpShardsAfter('counted', '1')})
  SELECT id, url, depth, attempts, skipped, priority FROM claimed ORDER BY priority DESC, id`;

/** The host's row, locked for a claim, with its page-cap count. */
const LOCK_HOST = 'SELECT taken, queued, render_queued FROM crawlflow.hosts WHERE crawl = $1 AND host = $2 FOR UPDATE';

/**
 * The row of a key the batch holds no claimed URL of, locked for a ready claim unless another
 * worker has it locked, with the batch's share of the key too (all of it finished).
 */
const LOCK_FREE_HOST = `SELECT taken, queued, render_queued, (SELECT count(*) FROM crawlflow.urls WHERE crawl = $1 AND batch_id = $3 AND host = $2)::int AS share
  FROM crawlflow.hosts WHERE crawl = $1 AND host = $2 FOR UPDATE SKIP LOCKED`;

/**
 * Batches other than $3 holding claimed URLs of host $2, read in a statement after the one that
 * locked the host's row. Under read committed, a statement that waited for a row lock gets that
 * row's newest version but reads every other table as of its own start: counted in the locking
 * statement, the holders would miss the claim it waited for, and one batch too many would hold
 * the key.
 */
const OTHER_HOLDERS = `SELECT ${otherHoldersSql('crawlflow.urls', '$2', '$3', 'crawl = $1')}::int AS holders`;

/** A key's row as a claim locks it: its counts under that lock. */
interface LockedHost {
  taken: number;
  queued: number;
  render_queued: number;
}

/** The key's URLs queued in a claim's lane. */
const laneQueued = (row: LockedHost, render: boolean): number => (render ? row.render_queued : row.queued - row.render_queued);

/** One claim's arguments, as `claim` takes them. */
interface KeyClaim extends ClaimRequest {
  batchId: string;
  host: string;
  render: boolean;
}

/**
 * The keys a ready claim tries ($2 the batch, $3 its lane, $4 its shard or null, $5 the holders
 * a key may have, $6 free-by, $7 how many, $8 ready ones only): those the batch holds, then
 * ready ones it does not hold, tier by tier (`READY_KEY_TIERS`).
 */
const READY_KEYS = `
  (SELECT DISTINCT host, true AS held, 0 AS tier, 0::bigint AS queued FROM crawlflow.urls WHERE crawl = $1 AND batch_id = $2 AND state = ${CLAIMED} AND NOT $8)
  ${READY_KEY_TIERS.map((taken, tier) => `UNION ALL
  (SELECT host, false, ${tier}, queued::bigint FROM crawlflow.hosts h WHERE crawl = $1 AND queued > 0 AND ${taken}
     AND CASE WHEN $3 THEN render_queued ELSE queued - render_queued END > 0
     AND ($4::int IS NULL OR shard = $4) AND next_request_at <= $6::bigint
     AND ${otherHoldersSql('crawlflow.urls', 'h.host', '$2', 'crawl = $1')} < $5
     AND NOT EXISTS (SELECT 1 FROM crawlflow.urls m WHERE m.crawl = $1 AND m.batch_id = $2 AND m.host = h.host AND m.state = ${CLAIMED})
     ORDER BY queued DESC LIMIT $7)`).join('\n  ')}
  ORDER BY held DESC, tier, queued DESC LIMIT $7`;

/** When the first key with backlog in lane $2 (render or not) and shard $3 (null: any) is free: see `backlogFreeAt`. */
const BACKLOG_FREE_AT = `
  SELECT min(next_request_at) AS at FROM crawlflow.hosts WHERE crawl = $1 AND queued > 0
    AND CASE WHEN $2 THEN render_queued ELSE queued - render_queued END > 0 AND ($3::int IS NULL OR shard = $3)`;

/**
 * Takes the host's next request start when the host is free at $3 (the caller's clock, read
 * once the statement had a connection), keeping it busy for $4 ms.
 */
const TAKE_REQUEST_START = `
  UPDATE crawlflow.hosts SET next_request_at = $3::bigint + $4
  WHERE crawl = $1 AND host = $2 AND next_request_at <= $3::bigint
  RETURNING 1`;

const SELECT_PACING = `SELECT ${PACING_COLUMNS} FROM crawlflow.hosts`;

/**
 * The view of the crawl, or with `shard` ('AND shard = $3') of one shard: version and totals
 * summed over the shard rows it covers. A host's `rendering` is left out when none of its
 * backlog is to render (json_strip_nulls).
 */
const viewOf = (shard: string) => `
  SELECT coalesce(sum(s.version), 0)::bigint AS version,
    (SELECT coalesce(sum(queued), 0)::int FROM crawlflow.hosts WHERE crawl = $1 ${shard} AND queued > 0) AS queued,
    (SELECT coalesce(json_agg(
         json_strip_nulls(json_build_object('host', b.host, 'queued', b.queued, 'rendering', nullif(b.render_queued, 0)))
         ORDER BY b.queued DESC, b.host COLLATE "C"), '[]')
       FROM (SELECT host, queued, render_queued FROM crawlflow.hosts WHERE crawl = $1 ${shard} AND queued > 0
             ORDER BY queued DESC, host COLLATE "C" LIMIT $2) b) AS hosts,
    json_build_object('processed', coalesce(sum(s.processed), 0), 'fetched', coalesce(sum(s.fetched), 0), 'errors', coalesce(sum(s.errors), 0),
      'skipped', coalesce(sum(s.skipped), 0), 'bytes', coalesce(sum(s.bytes), 0)) AS totals
  FROM crawlflow.crawl_shards s WHERE s.crawl = $1 ${shard}`;

const CRAWL_VIEW = viewOf('');
const SHARD_VIEW = viewOf('AND shard = $3');

/** The shards that have ended, whose keys' backlog no longer counts. */
const ENDED = 'SELECT shard FROM crawlflow.crawl_shards WHERE crawl = $1 AND ended';
const QUIET = `
  SELECT NOT EXISTS (SELECT 1 FROM crawlflow.hosts WHERE crawl = $1 AND queued > 0 AND shard NOT IN (${ENDED}))
    AND NOT EXISTS (SELECT 1 FROM crawlflow.urls u JOIN crawlflow.hosts h ON h.crawl = u.crawl AND h.host = u.host
      WHERE u.crawl = $1 AND u.state = ${CLAIMED} AND h.shard NOT IN (${ENDED})) AS quiet`;

/** The shared record columns, with noindex (boolean here) read as SQLite's 1/0. */
const RECORD_COLUMNS = recordColumns((column) => `${column}::int AS ${column}`);

/** Of the URLs $2, those of crawl $1 with a record: each looked up by its hash, reading no record column. */
const RECORDED_AMONG = `
  SELECT u.url FROM unnest($2::text[]) AS l (url)
  JOIN crawlflow.urls u ON u.crawl = $1 AND u.url_hash = md5(l.url)::uuid AND u.url = l.url
  WHERE u.state = ${DONE}`;

export class PostgresFrontierStore implements FrontierStore {
  private key: Promise<number> | undefined;
  /** URLs known to be in the crawl's seen-set, which this process need not send again. */
  private readonly known = new KnownUrls();

  /** `key`: the crawl's key when it is known to exist (see PostgresDatabase.existingCrawlKey). */
  constructor(
    private readonly db: PostgresDatabase,
    private readonly crawlId: string,
    key?: number,
  ) {
    if (key !== undefined) this.key = Promise.resolve(key);
  }

  private crawl(): Promise<number> {
    this.key ??= this.db.crawlKey(this.crawlId).catch((err: unknown) => {
      this.key = undefined;
      throw err;
    });
    return this.key;
  }

  /** `sql` with the crawl's key as $1; `params` may be a function (see PostgresDatabase.query). */
  private async run<R extends object>(sql: string, params: unknown[] | (() => unknown[])): Promise<{ rows: R[]; rowCount: number }> {
    const crawl = await this.crawl();
    return this.db.query<R>(sql, typeof params === 'function' ? () => [crawl, ...params()] : [crawl, ...params]);
  }

  /** The statement is its own transaction: once it returns, every entry it was sent is in the seen-set. */
  async enqueue(entries: readonly FrontierEntry[]): Promise<number> {
    const unknown = this.known.unknown(entries);
    if (unknown.length === 0) return 0;
    const { rows } = await this.run<{ added: number }>(ENQUEUE, [...columnsOf(unknown), shardsOf(unknown)]);
    this.known.add(unknown);
    return rows[0]?.added ?? 0;
  }

  async claim(batchId: string, host: string, limit: number, maxPagesPerHost = Number.MAX_SAFE_INTEGER, render = false, bounds: ClaimBounds = {}): Promise<ClaimedUrl[]> {
    const crawl = await this.crawl();
    return this.db.transaction((client) => this.claimWith(client, crawl, { batchId, host, limit, maxPagesPerHost, render, bounds }));
  }

  async claimShares(batchId: string, shares: readonly ShareClaim[], maxPagesPerHost = Number.MAX_SAFE_INTEGER, render = false): Promise<ClaimedUrl[][]> {
    // One transaction each: one over all of them would hold every key's row lock, and the
    // shard's version row, until the last was claimed, and completions would queue behind
    // them (bench:shards as one shard: a third of its rate).
    const claimed: ClaimedUrl[][] = [];
    for (const { host, limit, holders } of shares) claimed.push(await this.claim(batchId, host, limit, maxPagesPerHost, render, { holders }));
    return claimed;
  }

  async claimReady(batchId: string, query: ReadyQuery): Promise<ReadyClaim[]> {
    const crawl = await this.crawl();
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<{ host: string; held: boolean }>(READY_KEYS, [
        crawl,
        batchId,
        query.render,
        query.shard ?? null,
        query.maxHolders,
        query.freeBy,
        READY_CANDIDATES,
        query.besidesHeld === true,
      ]);
      // The batch's rows, counted under its lock once, then grown by each ready key's claim. A
      // held key's claim (a retried attempt, rare) counts them again after the others' top-ups.
      let batchRows = await this.batchRows(client, crawl, batchId);
      const held = rows.filter((row) => row.held).map((row) => row.host);
      const ready = () => rows.filter((row) => !row.held).map((row) => row.host);
      return readyClaims({ held, ready, room: query.batchLimit - batchRows }, async (host, holding) => {
        const bounds = { holders: query.holdersOf(host), batchLimit: query.batchLimit, spread: query.spread };
        const claim = { batchId, host, limit: query.batchLimit, maxPagesPerHost: query.maxPagesPerHost, render: query.render, bounds };
        if (holding) return this.claimWith(client, crawl, claim);
        const claimed = await this.claimFree(client, crawl, claim, batchRows);
        batchRows += claimed.length;
        return claimed;
      });
    });
  }

  async backlogFreeAt(render: boolean, shard?: number): Promise<number | null> {
    const { rows } = await this.run<{ at: number | null }>(BACKLOG_FREE_AT, [render, shard ?? null]);
    return rows[0].at;
  }

  /**
   * A ready claim of a key the batch does not hold. A key whose row another worker has locked
   * is being claimed right now: it is skipped, not waited for, so the filling batches of a
   * crawl never queue up behind its biggest backlog.
   */
  private async claimFree(client: PoolClient, crawl: number, claim: KeyClaim, batchRows: number): Promise<ClaimedUrl[]> {
    const { rows } = await client.query<LockedHost & { share: number }>(LOCK_FREE_HOST, [crawl, claim.host, claim.batchId]);
    if (rows.length === 0) return [];
    const { share, taken } = rows[0];
    const otherHolders = await this.otherHolders(client, crawl, claim, false);
    const plan = planClaim(claim, { share, batchRows, holding: false, otherHolders, taken, queued: laneQueued(rows[0], claim.render) });
    return plan === null ? [] : (await this.claimQueued(client, crawl, claim, plan)).map(toClaimed);
  }

  /**
   * One claim, in `client`'s transaction (see `claim`); `counted` is the batch's rows when the
   * caller has counted them under the batch's lock in this transaction already.
   */
  private async claimWith(client: PoolClient, crawl: number, claim: KeyClaim, counted?: number): Promise<ClaimedUrl[]> {
    const { batchId, host, bounds } = claim;
    // The host's row lock serializes claims of this host across workers, of both kinds: the
    // cap and the holders are counted under it.
    const locked = await client.query<LockedHost>(LOCK_HOST, [crawl, host]);
    const mine = await client.query<ClaimRow & { state: number }>(
      'SELECT url, depth, attempts, skipped, priority, state FROM crawlflow.urls WHERE crawl = $1 AND batch_id = $2 AND host = $3 ORDER BY priority DESC, id',
      [crawl, batchId, host],
    );
    const own = mine.rows.filter((row) => row.state === CLAIMED);
    // No row: no URL of the key was ever queued.
    if (locked.rows.length === 0) return own.map(toClaimed);
    // The batch's lock is taken only when the batch limit asks for its rows.
    const batchRows = counted ?? (bounds.batchLimit === undefined ? 0 : await this.batchRows(client, crawl, batchId));
    const { taken } = locked.rows[0];
    const holding = own.length > 0;
    const otherHolders = await this.otherHolders(client, crawl, claim, holding);
    const plan = planClaim(claim, { share: mine.rows.length, batchRows, holding, otherHolders, taken, queued: laneQueued(locked.rows[0], claim.render) });
    if (plan === null) return own.map(toClaimed);
    return [...own, ...(await this.claimQueued(client, crawl, claim, plan))].map(toClaimed);
  }

  /**
   * The other batches holding the key, counted once its row is locked (see OTHER_HOLDERS), and
   * only when a holder bound applies: one that holds the key already may always top it up.
   */
  private async otherHolders(client: PoolClient, crawl: number, { host, batchId, bounds }: KeyClaim, holding: boolean): Promise<number> {
    if (bounds.holders === undefined || holding) return 0;
    const { rows } = await client.query<{ holders: number }>(OTHER_HOLDERS, [crawl, host, batchId]);
    return rows[0].holders;
  }

  /** Claims what `plan` says of the key's queue, its host row locked. */
  private async claimQueued(client: PoolClient, crawl: number, { host, batchId, render }: KeyClaim, { fresh, capped }: ClaimPlan): Promise<ClaimRow[]> {
    return (await client.query<ClaimRow>(CLAIM_QUEUED, [crawl, host, batchId, fresh + capped, fresh, render])).rows;
  }

  /**
   * The URLs the batch holds, counted under a lock of the batch: a zombie attempt and its retry
   * share the batch ID, and claims of two keys would not wait on each other's host rows.
   */
  private async batchRows(client: PoolClient, crawl: number, batchId: string): Promise<number> {
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [crawl, batchId]);
    const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM crawlflow.urls WHERE crawl = $1 AND batch_id = $2', [crawl, batchId]);
    return rows[0].n;
  }

  /**
   * Links known to be seen are not sent. COMPLETE returns its row only when it wrote the record,
   * and only then did it insert the links (a zombie attempt's completion looks at none), so
   * only then are they known.
   */
  async complete(batchId: string, record: PageRecord, discovered: readonly FrontierEntry[]): Promise<number> {
    const unknown = this.known.unknown(discovered);
    const { rows } = await this.run<{ added: number | null }>(COMPLETE, [
      ...columnsOf(unknown),
      record.url,
      batchId,
      ...completedValues(record, (flag) => flag),
      shardsOf(unknown),
    ]);
    if (rows.length === 0) return 0;
    this.known.add(unknown);
    return rows[0].added ?? 0;
  }

  async release(batchId: string, retried?: { url: string; attempts: number }): Promise<number> {
    const { rows } = await this.run<{ released: number }>(RELEASE, [batchId, retried?.url ?? null, retried?.attempts ?? 0]);
    return rows[0]?.released ?? 0;
  }

  async abandon(batchId: string, error: string, at: string): Promise<number> {
    const { rows } = await this.run<{ abandoned: number }>(ABANDON, [batchId, error, at]);
    return rows[0]?.abandoned ?? 0;
  }

  async releaseKey(batchId: string, key: string, retried?: { url: string; attempts: number }): Promise<number> {
    const { rows } = await this.run<{ released: number }>(RELEASE_KEY, [batchId, retried?.url ?? null, retried?.attempts ?? 0, key]);
    return rows[0]?.released ?? 0;
  }

  async releaseAll(): Promise<number> {
    const { rows } = await this.run<{ released: number }>(RELEASE_ALL, [null, null, 0]);
    return rows[0]?.released ?? 0;
  }

  async startRequest(host: string, gapMs: number, maxWaitMs: number, clock: () => number): Promise<RequestStart> {
    if (gapMs > 0) {
      let now = 0;
      const { rowCount } = await this.run(TAKE_REQUEST_START, () => [host, (now = clock()), gapMs]);
      if (rowCount === 1) return { takenAt: now };
    }
    // Busy, deferred or nothing to write: next_request_at only ever grows, so a fresh read is at
    // least as late as what the update saw.
    const { rows } = await this.run<{ next_request_at: number }>('SELECT next_request_at FROM crawlflow.hosts WHERE crawl = $1 AND host = $2', [host]);
    if (rows.length === 0 && gapMs > 0) {
      await this.run('INSERT INTO crawlflow.hosts (crawl, host) VALUES ($1, $2) ON CONFLICT DO NOTHING', [host]);
      return this.startRequest(host, gapMs, maxWaitMs, clock);
    }
    const start = requestStartAt(rows[0]?.next_request_at ?? 0, clock(), maxWaitMs);
    // Free by now, but only the update may take a start that has a gap to keep.
    if ('takenAt' in start && gapMs > 0) return this.startRequest(host, gapMs, maxWaitMs, clock);
    return start;
  }

  async holdHost(host: string, until: number): Promise<void> {
    await this.run('UPDATE crawlflow.hosts SET next_request_at = greatest(next_request_at, $3) WHERE crawl = $1 AND host = $2', [host, until]);
  }

  async hostPacing(host: string): Promise<HostPacing> {
    const { rows } = await this.run<HostPacing>(`${SELECT_PACING} WHERE crawl = $1 AND host = $2`, [host]);
    return rows[0] ?? INITIAL_PACING;
  }

  async updatePacing(host: string, update: (current: HostPacing) => PacingUpdate): Promise<HostPacing> {
    const crawl = await this.crawl();
    return this.db.transaction(async (client) => {
      // The host's row lock makes the read-modify-write atomic across workers.
      await client.query('INSERT INTO crawlflow.hosts (crawl, host) VALUES ($1, $2) ON CONFLICT DO NOTHING', [crawl, host]);
      const { rows } = await client.query<HostPacing>(`${SELECT_PACING} WHERE crawl = $1 AND host = $2 FOR UPDATE`, [crawl, host]);
      const current = rows[0] ?? INITIAL_PACING;
      const next = update(current);
      if (!changesNothing(current, next)) {
        await client.query(
          'UPDATE crawlflow.hosts SET error_streak = $3, throttle_delay_ms = $4, next_request_at = greatest(next_request_at, $5) WHERE crawl = $1 AND host = $2',
          [crawl, host, next.pacing.errorStreak, next.pacing.throttleDelayMs, next.notBefore ?? 0],
        );
      }
      return next.pacing;
    });
  }

  async robots(host: string): Promise<RobotsRecord | undefined> {
    const { rows } = await this.run<RobotsRecord>(`SELECT ${ROBOTS_COLUMNS} FROM crawlflow.hosts WHERE crawl = $1 AND host = $2 AND robots_fetched_at IS NOT NULL`, [host]);
    return rows[0];
  }

  async saveRobots(host: string, record: RobotsRecord): Promise<void> {
    await this.run(
      `INSERT INTO crawlflow.hosts (crawl, host, robots_status, robots_body, robots_fetched_at, robots_error) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (crawl, host) DO UPDATE SET robots_status = excluded.robots_status, robots_body = excluded.robots_body,
         robots_fetched_at = excluded.robots_fetched_at, robots_error = excluded.robots_error`,
      [host, record.status, record.body, record.fetchedAt, record.error],
    );
  }

  async snapshot(maxHosts: number): Promise<FrontierSnapshot> {
    const { version, queued, hosts } = await this.view(maxHosts);
    return { version, queued, hosts };
  }

  async view(maxHosts: number, shard?: number): Promise<CrawlView> {
    const { rows } = await (shard === undefined ? this.run<CrawlView>(CRAWL_VIEW, [maxHosts]) : this.run<CrawlView>(SHARD_VIEW, [maxHosts, shard]));
    return rows[0];
  }

  async quiet(): Promise<boolean> {
    const { rows } = await this.run<{ quiet: boolean }>(QUIET, []);
    return rows[0].quiet;
  }

  async endShard(shard: number): Promise<void> {
    await this.run('INSERT INTO crawlflow.crawl_shards (crawl, shard, ended) VALUES ($1, $2, true) ON CONFLICT (crawl, shard) DO UPDATE SET ended = true', [shard]);
  }

  async saveConfig(version: number, config: string): Promise<void> {
    await this.run('INSERT INTO crawlflow.configs (crawl, version, config) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [version, config]);
  }

  async latestConfig(): Promise<StoredConfig | undefined> {
    const { rows } = await this.run<StoredConfig>('SELECT version, config FROM crawlflow.configs WHERE crawl = $1 ORDER BY version DESC LIMIT 1', []);
    return rows[0];
  }

  async configVersion(): Promise<number> {
    const { rows } = await this.run<{ version: number }>('SELECT coalesce(max(version), 0)::int AS version FROM crawlflow.configs WHERE crawl = $1', []);
    return rows[0].version;
  }

  /** On the crawl's own row, which exists once the store has a key for the crawl. */
  async recordEnd(end: CrawlEnd): Promise<void> {
    const { status, failureCode, failureMessage, endedAt } = endValues(end);
    await this.run('UPDATE crawlflow.crawls SET end_status = $2, failure_code = $3, failure_message = $4, ended_at = $5 WHERE id = $1', [
      status,
      failureCode,
      failureMessage,
      endedAt,
    ]);
  }

  async crawlEnd(): Promise<CrawlEnd | undefined> {
    const { rows } = await this.run<EndRow>(`SELECT ${END_COLUMNS} FROM crawlflow.crawls WHERE id = $1`, []);
    return toCrawlEnd(rows[0]);
  }

  async clearEnd(): Promise<void> {
    await this.run('UPDATE crawlflow.crawls SET end_status = NULL, failure_code = NULL, failure_message = NULL, ended_at = NULL WHERE id = $1', []);
  }

  async addSeedScope(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.run(
      'INSERT INTO crawlflow.seed_scope (crawl, key) SELECT $1, k FROM unnest($2::text[]) AS k ON CONFLICT (crawl, (md5(key)::uuid)) DO NOTHING',
      [keys],
    );
  }

  async seedScope(): Promise<string[]> {
    const { rows } = await this.run<{ key: string }>('SELECT key FROM crawlflow.seed_scope WHERE crawl = $1', []);
    return rows.map((row) => row.key);
  }

  async stopRun(order: StopOrder, shard = 0): Promise<void> {
    await this.run(
      'INSERT INTO crawlflow.crawl_shards (crawl, shard, handover) VALUES ($1, $2, $3) ON CONFLICT (crawl, shard) DO UPDATE SET handover = excluded.handover',
      [shard, stopOrderText(order)],
    );
  }

  async stopOrder(shard = 0): Promise<StopOrder | undefined> {
    const { rows } = await this.run<{ handover: string | null }>('SELECT handover FROM crawlflow.crawl_shards WHERE crawl = $1 AND shard = $2', [shard]);
    return toStopOrder(rows[0]?.handover);
  }

  async batchTotals(batchId: string): Promise<BatchTotals> {
    const { rows } = await this.run<BatchTotals>(`SELECT ${batchTotalsColumns(PG_COUNTS)} FROM crawlflow.urls WHERE crawl = $1 AND batch_id = $2 AND state = ${DONE}`, [batchId]);
    return rows[0];
  }

  async totals(): Promise<CrawlTotals> {
    const { rows } = await this.run<TotalsRow>(`SELECT ${crawlTotalsColumns(PG_COUNTS)} FROM crawlflow.urls WHERE crawl = $1`, []);
    return toTotals(rows[0]);
  }

  /** In pages (see `recordsInPages`) over the primary key. */
  records(): AsyncGenerator<PageRecord> {
    const page = `SELECT id, ${RECORD_COLUMNS} FROM crawlflow.urls WHERE crawl = $1 AND state IN (${DONE}, ${GONE}) AND id > $2 ORDER BY id LIMIT $3`;
    return recordsInPages(async (after, size) => (await this.run<RecordRow & { id: number }>(page, [after, size])).rows, RECORDS_PAGE);
  }

  async record(url: string): Promise<PageRecord | undefined> {
    const { rows } = await this.run<RecordRow>(`SELECT ${RECORD_COLUMNS} FROM crawlflow.urls WHERE crawl = $1 AND ${byUrl(2)} AND state = ${DONE}`, [url]);
    return rows[0] && toRecord(rows[0]);
  }

  async recordedAmong(urls: readonly string[]): Promise<string[]> {
    return recordedIn(urls, async (distinct) => (await this.run<{ url: string }>(RECORDED_AMONG, [distinct])).rows.map((row) => row.url));
  }

  /**
   * One statement: the seen-set's unique index makes it insert-or-ignore, so a retry adds none
   * twice. A gone URL is never claimed, so it has no kind (render stays at its default).
   */
  async recordGone(entries: readonly FrontierEntry[], at: string): Promise<number> {
    if (entries.length === 0) return 0;
    const { rowCount } = await this.run(
      `INSERT INTO crawlflow.urls (crawl, url, host, depth, state, change, fetched_at)
       SELECT $1, e.url, e.host, e.depth, ${GONE}, 'gone', $5 FROM unnest($2::text[], $3::text[], $4::int[]) WITH ORDINALITY AS e (url, host, depth, n)
       ORDER BY e.n
       ON CONFLICT (crawl, url_hash) DO NOTHING`,
      [...columnsOf(entries).slice(0, 3), at],
    );
    return rowCount;
  }

  /** The pool is the database's, shared by every crawl of the process: nothing to close per crawl. */
  async close(): Promise<void> {}
}

/** The shard of each entry's key, the column `insertEntries` reads as $`shards`. */
function shardsOf(entries: readonly FrontierEntry[]): number[] {
  return entries.map((entry) => entry.shard ?? 0);
}

/** The entries as the column arrays `insertEntries` unnests: urls, hosts, depths, to render, priorities. */
function columnsOf(entries: readonly FrontierEntry[]): [string[], string[], number[], boolean[], number[]] {
  return [
    entries.map((entry) => entry.url),
    entries.map((entry) => entry.host),
    entries.map((entry) => entry.depth),
    entries.map((entry) => entry.render === true),
    entries.map((entry) => entry.priority ?? 1),
  ];
}
