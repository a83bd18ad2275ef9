/**
 * The embedded frontier store: one SQLite file per crawl, in WAL mode so several worker
 * processes on one machine share it. The unique key on `urls.url` is the seen-set, with this
 * instance's cache of URLs known to be in it in front (known-urls.ts); a host's `queued`
 * counter is kept in the same transactions as the rows, so snapshots never scan the queue.
 */
import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { makeDirectory } from '../shared/make-directory';
import { dirname, join } from 'node:path';
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
  type StopOrder,
  type StoredConfig,
  type CrawlEnd,
} from './frontier-store';
import { endValues, recordedIn, recordsInPages, stopOrderText, toClaimed, toCrawlEnd, toStopOrder, toTotals, type ClaimRow, type EndRow, type TotalsRow } from './store-rows';
import { completedValues, toRecord, type RecordRow } from './record-fields';
import { commitTogether, GroupCommit } from './group-commit';
import { HOST_PAGE_CAP } from './url-states';
import { planClaim, READY_CANDIDATES, readyClaims } from './claim-rules';
import { hasTable, isCurrent, migrate, sqliteFlag } from './sqlite-schema';
import { prepareStatements, type SqliteStatements } from './sqlite-statements';
import { KnownUrls } from './known-urls';
import { BatchKeys } from './batch-keys';
import { crawlFileName } from '../shared/crawl-id';
import { CounterDeltas } from './counter-deltas';

/** A finished page of a batch and the links found on it not known to be seen (see `complete`). */
interface Completion {
  batchId: string;
  record: PageRecord;
  discovered: readonly FrontierEntry[];
}

/** A completion that was written: the links it added, and its changes to the counter rows. */
interface CompletionWritten {
  added: number;
  counters: CounterDeltas;
}

/** Most important first, then in discovery order: the order claims hand URLs out in (RETURNING keeps none). */
const inClaimOrder = (a: ClaimRow & { id: number }, b: ClaimRow & { id: number }): number => b.priority - a.priority || a.id - b.id;

/** Records `records()` reads per page; each page is a synchronous read that blocks the event loop. */
const RECORDS_PAGE = 500;
const BUSY_TIMEOUT_MS = 250;
/**
 * WAL frames after which a commit checkpoints them into the file (SQLite's default is 1,000).
 * A checkpoint copies each page once however often the frames rewrote it, and syncs both
 * files, all on the committing event loop: with 4,000 the store-only replay of the bench's
 * one-host crawl spent about 9% less of the main thread per page. Past one wal-index hash
 * table (4,096 frames) every read that misses the WAL searches one more table.
 */
const WAL_CHECKPOINT_FRAMES = 4_000;
/**
 * A crawl's working connection: its completions rewrite the same hot pages, which the cache
 * keeps. 16 MB holds the whole file of a 20,000-page crawl. On a 1,000,000-page crawl a 64 MB
 * cache filled with pages of the seen-set index that a lookup reads once in a long while (the
 * OS's page cache keeps those too): the worker's RSS was 50 MB higher, its pages/s no better.
 */
const CRAWL_CACHE_KIB = 16 * 1024;
/**
 * A connection that reads the file once through (the results exports): SQLite's default
 * cache. A crawl-sized cache filled up with pages read once and never again: 14 MB more peak
 * RSS for the 20,000-page bench crawl's export, and 10% slower.
 */
export const SCAN_CACHE_KIB = 2 * 1024;

/** Where a crawl's file lives (crawl-id.ts: crawl IDs are encoded for file names). */
export function crawlStorePath(dataDir: string, crawlId: string): string {
  return join(dataDir, 'crawls', `${crawlFileName(crawlId)}.sqlite`);
}

/** The crawl's file, opened in WAL mode and brought to today's schema, with a page cache of `cacheKiB`. */
function openDatabase(file: string, cacheKiB: number): Database.Database {
  if (file !== ':memory:') makeDirectory(dirname(file));
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // Every page's completion reads and writes the same few b-tree pages (the queue index, the
  // host's row, the totals): a cache that holds the crawl's hot pages saves a read per page.
  db.pragma(`cache_size = -${cacheKiB}`);
  db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_FRAMES}`);
  // Several worker processes may share the file: wait for a writer instead of failing. The
  // wait blocks the event loop (better-sqlite3 is synchronous), so it stays well under the
  // heartbeat timeout; a lock held longer surfaces as SQLITE_BUSY, which batches wait out
  // without blocking (see store-errors.ts).
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  migrate(db);
  return db;
}

/**
 * A crawl's file opened to read its results once through, with no crawl-sized cache. It is
 * opened read-only first: an empty file, or a database with no crawl in it, is no crawl's
 * store (`notACrawl` makes the error to throw), and is left as it was. A file an earlier
 * release wrote is then brought to today's schema in place, as a worker opening it would.
 * SQLite makes a WAL file's `-wal` and `-shm` if they are not there (a reader needs them to
 * share the file with writers); they hold nothing of the crawl.
 */
export function readStoreFile(file: string, notACrawl: (why: string) => Error): SqliteFrontierStore {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  let current: boolean;
  try {
    if (!hasTable(db, 'urls')) throw notACrawl(`${file} ${statSync(file).size === 0 ? 'is empty' : 'holds no crawl'}`);
    current = isCurrent(db);
  } catch (err) {
    db.close();
    throw err;
  }
  if (!current) {
    db.close();
    return new SqliteFrontierStore(file, SCAN_CACHE_KIB);
  }
  db.pragma(`cache_size = -${SCAN_CACHE_KIB}`);
  return new SqliteFrontierStore(db);
}

/** Each shard of the keys a claim or requeue changed (one per key, repeats and all) moves its version on once. */
function bumpShards(s: SqliteStatements, shards: readonly number[]): void {
  for (const shard of new Set(shards)) s.bumpVersion.run(shard);
}

/** Adds the entries not seen before, counting them in `counters`; returns how many were new. */
function insertEntries(s: SqliteStatements, entries: readonly FrontierEntry[], counters: CounterDeltas): number {
  let total = 0;
  for (const entry of entries) {
    const render = entry.render === true ? 1 : 0;
    if (s.insertUrl.run(entry.url, entry.host, entry.depth, render, entry.priority ?? 1).changes === 1) {
      counters.addQueued(entry.host, render, entry.shard ?? 0);
      total += 1;
    }
  }
  return total;
}

/** Writes the counter rows' changes: each shard's totals and version, each key's queued counts. */
function writeCounters(s: SqliteStatements, counters: CounterDeltas): void {
  for (const [host, { n, render, shard }] of counters.queued) s.addQueued.run(host, n, render, shard);
  // Counting finished URLs moves a shard's version on; so does a longer queue.
  for (const [shard, totals] of counters.finished) s.countFinished.run({ ...totals, shard });
  bumpShards(s, [...counters.queued.values()].map((change) => change.shard).filter((shard) => !counters.finished.has(shard)));
}

/** Adds the entries not seen before and counts them on their keys; returns how many were new. */
function enqueueNow(s: SqliteStatements, entries: readonly FrontierEntry[]): number {
  const counters = new CounterDeltas();
  const added = insertEntries(s, entries, counters);
  writeCounters(s, counters);
  return added;
}

/** One claim of a key, inside the caller's immediate transaction, whose write lock serializes claims. */
function claimNow(s: SqliteStatements, batchId: string, host: string, limit: number, maxPagesPerHost: number, render: 0 | 1, bounds: ClaimBounds): ClaimedUrl[] {
  const claimQueued = (n: number, skipped: string | null): Array<ClaimRow & { id: number }> =>
    n <= 0 ? [] : (s.claimQueued.all(batchId, skipped, host, render, n) as Array<ClaimRow & { id: number }>).sort(inClaimOrder);
  const own = s.ownClaims.all(batchId, host) as ClaimRow[];
  // Each count is read only if the rule asks for it.
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
      get queued() {
        return (s.keyQueued.get(render, host) as number | undefined) ?? 0;
      },
    },
  );
  if (plan === null) return own.map(toClaimed);
  const fresh = claimQueued(plan.fresh, null);
  // Fewer fresh URLs than planned: the queue ran out, and there is nothing left to skip.
  const capped = fresh.length === plan.fresh ? claimQueued(plan.capped, HOST_PAGE_CAP) : [];
  const claimed = [...fresh, ...capped];
  if (claimed.length > 0) bumpShards(s, s.claimCounts.all(JSON.stringify(claimed.map((row) => row.id))) as number[]);
  return [...own, ...claimed].map(toClaimed);
}

const nextRequestAtOf = (s: SqliteStatements, host: string): number => (s.nextRequestAt.get(host) as number | undefined) ?? 0;
const pacingOf = (s: SqliteStatements, host: string): HostPacing => (s.pacing.get(host) as HostPacing | undefined) ?? INITIAL_PACING;

/**
 * The store's writes, each a transaction its method runs IMMEDIATE; completions are grouped (see
 * group-commit.ts). Each turns the batch ID it is given into the batch's key first (`keys`), so a
 * new batch's key is made in its first claim's transaction.
 */
function writeTransactions(db: Database.Database, s: SqliteStatements, keys: BatchKeys) {
  const completeOne = ({ batchId, record, discovered }: Completion): CompletionWritten | null => {
    const shard = s.complete.get(...completedValues(record, sqliteFlag), record.url, keys.keyOf(batchId)) as number | undefined;
    // A URL completed twice (a zombie attempt racing its retry) keeps its first record.
    if (shard === undefined) return null;
    const counters = new CounterDeltas();
    counters.addFinished(shard, finishedTotals(record));
    return { added: insertEntries(s, discovered, counters), counters };
  };
  /** The counters of a group's written completions, summed: each row is written once per group. */
  const countGroup = (written: ReadonlyArray<CompletionWritten | null>): void => {
    const sum = new CounterDeltas();
    for (const completion of written) if (completion !== null) sum.add(completion.counters);
    writeCounters(s, sum);
  };
  return {
    enqueue: db.transaction((entries: readonly FrontierEntry[]) => enqueueNow(s, entries)),
    claim: db.transaction((batchId: string, host: string, limit: number, maxPagesPerHost: number, render: 0 | 1, bounds: ClaimBounds) =>
      claimNow(s, keys.keyOf(batchId), host, limit, maxPagesPerHost, render, bounds),
    ),
    claimShares: db.transaction((batchId: string, shares: readonly ShareClaim[], maxPagesPerHost: number, render: 0 | 1) => {
      const key = keys.keyOf(batchId);
      return shares.map(({ host, limit, holders }) => claimNow(s, key, host, limit, maxPagesPerHost, render, { holders }));
    }),
    claimReady: db.transaction((id: string, query: ReadyQuery): ReadyClaim[] => {
      const batchId = keys.keyOf(id);
      const render = query.render ? 1 : 0;
      const held = s.heldKeys.all({ batchId }) as string[];
      const candidates = () => s.readyKeys.all({ batchId, render, shard: query.shard ?? null, maxHolders: query.maxHolders, freeBy: query.freeBy, limit: READY_CANDIDATES }) as string[];
      // A held key is ready to its holder too (the holder count leaves the batch out): besides them, it is not.
      const ready = query.besidesHeld ? () => candidates().filter((key) => !held.includes(key)) : candidates;
      const walk = { held: query.besidesHeld ? [] : held, ready, room: query.batchLimit - (s.batchRows.get(batchId) as number) };
      return readyClaims(walk, (key) =>
        claimNow(s, batchId, key, query.batchLimit, query.maxPagesPerHost, render, { holders: query.holdersOf(key), batchLimit: query.batchLimit, spread: query.spread }),
      );
    }),
    /** Per completion, what it wrote (links added, counter changes), or null when its record was not written. */
    completions: new GroupCommit(commitTogether(db, completeOne, countGroup)),
    release: db.transaction((id: string, retried?: { url: string; attempts: number }) => {
      const batchId = keys.keyOf(id);
      bumpShards(s, s.releaseBatchCounts.all(batchId) as number[]);
      return s.releaseBatch.run({ batchId, url: retried?.url ?? null, attempts: retried?.attempts ?? 0 }).changes;
    }),
    releaseKey: db.transaction((id: string, key: string, retried?: { url: string; attempts: number }) => {
      const batchId = keys.keyOf(id);
      bumpShards(s, s.releaseKeyCounts.all(batchId, key) as number[]);
      return s.releaseKey.run({ batchId, key, url: retried?.url ?? null, attempts: retried?.attempts ?? 0 }).changes;
    }),
    abandon: db.transaction((id: string, error: string, at: string) => {
      const batchId = keys.keyOf(id);
      // A batch claims the keys of one shard only.
      const shard = (s.shardOfBatch.get(batchId) as number | undefined) ?? 0;
      s.countFinished.run({ ...(s.unfinishedTotals.get(batchId) as BatchTotals), shard });
      return s.abandonBatch.run(error, at, batchId).changes;
    }),
    releaseAll: db.transaction(() => {
      bumpShards(s, s.releaseAllCounts.all() as number[]);
      return s.releaseAll.run().changes;
    }),
    gone: db.transaction((entries: readonly FrontierEntry[], at: string) => {
      let added = 0;
      for (const entry of entries) added += s.insertGone.run(entry.url, entry.host, entry.depth, at).changes;
      return added;
    }),
    startRequest: db.transaction((host: string, gapMs: number, maxWaitMs: number, clock: () => number): RequestStart => {
      const now = clock();
      const start = requestStartAt(nextRequestAtOf(s, host), now, maxWaitMs);
      if ('takenAt' in start) s.setNextRequestAt.run(host, now + gapMs);
      return start;
    }),
    updatePacing: db.transaction((host: string, update: (current: HostPacing) => PacingUpdate): HostPacing => {
      const current = pacingOf(s, host);
      const next = update(current);
      if (!changesNothing(current, next)) s.setPacing.run({ host, ...next.pacing, notBefore: next.notBefore ?? 0 });
      return next.pacing;
    }),
  };
}

export class SqliteFrontierStore implements FrontierStore {
  private readonly db: Database.Database;
  private readonly statements: SqliteStatements;
  private readonly writes: ReturnType<typeof writeTransactions>;
  /** URLs known to be in the seen-set, left out of writes (see known-urls.ts). */
  private readonly known = new KnownUrls();
  /** The short keys batches' rows carry instead of their IDs (see batch-keys.ts). */
  private readonly batchKeys: BatchKeys;

  /** The crawl's file (created if need be, brought to today's schema), or a database opened by readStoreFile. */
  constructor(file: string | Database.Database, cacheKiB = CRAWL_CACHE_KIB) {
    this.db = typeof file === 'string' ? openDatabase(file, cacheKiB) : file;
    this.statements = prepareStatements(this.db);
    this.batchKeys = new BatchKeys(this.db);
    this.writes = writeTransactions(this.db, this.statements, this.batchKeys);
  }

  async enqueue(entries: readonly FrontierEntry[]): Promise<number> {
    const unknown = this.known.unknown(entries);
    if (unknown.length === 0) return 0;
    const added = this.writes.enqueue.immediate(unknown);
    this.known.add(unknown);
    return added;
  }

  async claim(batchId: string, host: string, limit: number, maxPagesPerHost = Number.MAX_SAFE_INTEGER, render = false, bounds: ClaimBounds = {}): Promise<ClaimedUrl[]> {
    return this.writes.claim.immediate(batchId, host, limit, maxPagesPerHost, render ? 1 : 0, bounds);
  }

  async claimShares(batchId: string, shares: readonly ShareClaim[], maxPagesPerHost = Number.MAX_SAFE_INTEGER, render = false): Promise<ClaimedUrl[][]> {
    return this.writes.claimShares.immediate(batchId, shares, maxPagesPerHost, render ? 1 : 0);
  }

  async claimReady(batchId: string, query: ReadyQuery): Promise<ReadyClaim[]> {
    return this.writes.claimReady.immediate(batchId, query);
  }

  async backlogFreeAt(render: boolean, shard?: number): Promise<number | null> {
    return this.statements.backlogFreeAt.get({ render: render ? 1 : 0, shard: shard ?? null }) as number | null;
  }

  /**
   * Links known to be seen are left out of the write. The others are known once the group's
   * transaction has committed (the write settles after its COMMIT), and only if the record was
   * written: a zombie attempt's completion looks at none of its links.
   */
  async complete(batchId: string, record: PageRecord, discovered: readonly FrontierEntry[]): Promise<number> {
    const unknown = this.known.unknown(discovered);
    const written = await this.writes.completions.write({ batchId, record, discovered: unknown });
    if (written === null) return 0;
    this.known.add(unknown);
    return written.added;
  }

  async release(batchId: string, retried?: { url: string; attempts: number }): Promise<number> {
    return this.writes.release.immediate(batchId, retried);
  }

  async releaseKey(batchId: string, key: string, retried?: { url: string; attempts: number }): Promise<number> {
    return this.writes.releaseKey.immediate(batchId, key, retried);
  }

  async abandon(batchId: string, error: string, at: string): Promise<number> {
    return this.writes.abandon.immediate(batchId, error, at);
  }

  async releaseAll(): Promise<number> {
    return this.writes.releaseAll.immediate();
  }

  async startRequest(host: string, gapMs: number, maxWaitMs: number, clock: () => number): Promise<RequestStart> {
    // With no gap there is nothing to write: a plain read still sees a deferral (Retry-After,
    // backoff), without taking the file's write lock for every request.
    if (gapMs === 0) return requestStartAt(nextRequestAtOf(this.statements, host), clock(), maxWaitMs);
    return this.writes.startRequest.immediate(host, gapMs, maxWaitMs, clock);
  }

  async holdHost(host: string, until: number): Promise<void> {
    this.statements.holdHost.run({ host, until });
  }

  async hostPacing(host: string): Promise<HostPacing> {
    return pacingOf(this.statements, host);
  }

  async updatePacing(host: string, update: (current: HostPacing) => PacingUpdate): Promise<HostPacing> {
    return this.writes.updatePacing.immediate(host, update);
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

  async configVersion(): Promise<number> {
    return this.statements.configVersion.get() as number;
  }

  async recordEnd(end: CrawlEnd): Promise<void> {
    this.statements.recordEnd.run(endValues(end));
  }

  async crawlEnd(): Promise<CrawlEnd | undefined> {
    return toCrawlEnd(this.statements.crawlEnd.get() as EndRow | undefined);
  }

  async clearEnd(): Promise<void> {
    this.statements.clearEnd.run();
  }

  async addSeedScope(keys: readonly string[]): Promise<void> {
    this.db.transaction(() => {
      for (const key of keys) this.statements.addSeedScope.run(key);
    })();
  }

  async seedScope(): Promise<string[]> {
    return this.statements.seedScope.all() as string[];
  }

  async stopRun(order: StopOrder, shard = 0): Promise<void> {
    this.statements.stopRun.run(shard, stopOrderText(order));
  }

  async stopOrder(shard = 0): Promise<StopOrder | undefined> {
    return toStopOrder(this.statements.stopOrder.get(shard) as string | null | undefined);
  }

  async batchTotals(batchId: string): Promise<BatchTotals> {
    return this.statements.batchTotals.get(this.batchKeys.keyIfAny(batchId)) as BatchTotals;
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

  async recordedAmong(urls: readonly string[]): Promise<string[]> {
    return recordedIn(urls, (distinct) => this.statements.recordedAmong.all(JSON.stringify(distinct)) as string[]);
  }

  async recordGone(entries: readonly FrontierEntry[], at: string): Promise<number> {
    return this.writes.gone.immediate(entries, at);
  }

  async close(): Promise<void> {
    // Completions already queued are committed, and their callers told, before the file closes.
    await this.writes.completions.settled();
    if (this.db.open) this.db.close();
  }
}
