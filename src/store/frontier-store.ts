/**
 * The frontier store: the crawl's URL set, its per-host politeness state and its page
 * records. Workflows never touch it; activities reach it through this interface, so a server
 * database can replace the embedded SQLite file for crawls that span machines.
 *
 * Every method is asynchronous, so a networked database fits the same interface.
 *
 * Its guarantees are what make the crawl correct with many workers and retries:
 * - `enqueue` is an atomic check-and-mark: a URL enters the frontier once per crawl.
 * - `claim` hands a URL to exactly one batch; a retried batch (same batch id) gets back the
 *   URLs it had claimed and not finished, so a dead worker's work resumes, never duplicates.
 *   It also enforces the per-host page cap, in the same atomic step, so the cap holds
 *   across workers.
 * - `complete` writes a URL's record once; a second completion of the same URL is ignored.
 *   It and `abandon` keep the running totals of the batch's shard in the same transaction, and
 *   every change to the queue or the totals moves a version on (see `view`).
 * - `startRequest` is the one place that spaces requests to a host; `updatePacing` is
 *   the one place that changes a host's shared pacing state (backoff, AutoThrottle), atomically.
 */
/**
 * What the batches of one workflow run are told through the store, which each batch's ticker
 * reads every second: Temporal's own word (a cancelled activity) reaches a batch only with a
 * heartbeat response, and heartbeats are throttled to a few seconds to spare the server.
 */
export interface StopOrder {
  run: string;
  /**
   * Abort the requests in flight and stop at once: the crawl was cancelled or ran out of time.
   * Without it, a batch stops after the page it is on: the run is about to continue-as-new.
   */
  abort: boolean;
  /**
   * Only the batches of the run numbered up to this one (a batch ID's last part): the crawl was
   * paused or stopped, so the batches running then stop after their page, and those launched
   * after a resume, numbered higher, are not held by it. Absent, every batch of the run.
   */
  upTo?: number;
}

/** Whether `order` is addressed to the batch `seq` of `run`. */
export function stopOrderAddresses(order: StopOrder | undefined, run: string, seq: number): order is StopOrder {
  return order !== undefined && order.run === run && (order.upTo === undefined || seq <= order.upTo);
}

export interface FrontierEntry {
  url: string;
  /**
   * The politeness key the URL is queued, claimed, paced and capped under: its host (with the
   * port), or its registrable domain or IP address when the crawl's `politenessKey` says so.
   */
  host: string;
  depth: number;
  /**
   * Rendered in a browser by a render batch (the crawl's `render.match` said so when the URL
   * was found), not fetched by a fetch batch. Decided once, at enqueue; absent means fetch.
   */
  render?: boolean;
  /**
   * How important the URL is: a host's queued URLs are claimed highest first, then in discovery
   * order. Set once, by the URL's first discovery (absent: 1, a seed's); see frontier-order.ts.
   */
  priority?: number;
  /**
   * The shard of the URL's politeness key (src/scheduling/shards.ts), recorded on the key when
   * it is first queued; absent: 0, a crawl of one shard.
   */
  shard?: number;
}

/** The `skipped` reason of a URL its host's page cap (`maxPagesPerHost`) left unfetched. */
export { HOST_PAGE_CAP } from './url-states';

/** Bounds a claim checks in the same atomic step as the host's page cap. */
export interface ClaimBounds {
  /**
   * At most this many batches, the claiming one included, hold claimed URLs of the key at
   * once: the key's concurrency, enforced where every worker's claims meet.
   */
  holders?: number;
  /** The batch holds at most this many URLs over all its keys, finished or not. */
  batchLimit?: number;
  /**
   * The claim takes at most its even part of the key's queue, one of `holders`: a queue
   * shorter than the batch's room is spread over the batches waiting for work, not taken
   * whole by the first to ask (`ReadyQuery.spread`).
   */
  spread?: boolean;
}

/** A key's share of a batch (`FrontierStore.claimShares`): up to `limit` URLs, with the key's holder bound. */
export interface ShareClaim {
  host: string;
  limit: number;
  holders?: number;
}

/** What a filling batch may claim (see `FrontierStore.claimReady`). */
export interface ReadyQuery {
  render: boolean;
  /** The batch's shard; absent: every key of the crawl. */
  shard?: number;
  /** Epoch ms by which a key must be free to be asked. */
  freeBy: number;
  /** URLs the batch may hold in all, over every key (`ClaimBounds.batchLimit`). */
  batchLimit: number;
  maxPagesPerHost: number;
  /** The key's concurrency (`ClaimBounds.holders`): its override's, or the crawl's. */
  holdersOf(key: string): number;
  /** The largest concurrency any key has, which bounds the store's search. */
  maxHolders: number;
  /** The batch's claims are spread (`ClaimBounds.spread`): it is one of several waiting for a short queue. */
  spread?: boolean;
  /**
   * Keys the batch holds no claimed URL of, only: a batch whose own keys' hosts are all busy
   * takes other work meanwhile, and waits for its own keys rather than topping them up.
   */
  besidesHeld?: boolean;
}

export interface ReadyClaim {
  key: string;
  urls: ClaimedUrl[];
}

export interface ClaimedUrl {
  url: string;
  depth: number;
  /** Fetch attempts made by earlier batches that gave the URL back (Retry-After, backoff). */
  attempts: number;
  /** Its `FrontierEntry.priority`, which the page's outlinks share. */
  priority: number;
  /** Set when the URL was claimed only to be recorded as skipped, never fetched (`host-page-cap`). */
  skipped?: string;
}

/** One line of the crawl's output: what the crawl decided about one URL. */
export interface PageRecord {
  url: string;
  depth: number;
  status: number | null;
  error: string | null;
  skipped: string | null;
  title: string | null;
  links: string[];
  fetchedAt: string;
  finalUrl: string | null;
  contentType: string | null;
  bytes: number;
  canonical: string | null;
  noindex: boolean;
  /** Values of the crawl's `extract` fields (empty when it extracts none). */
  fields: Record<string, string | string[] | null>;
  /** Validators of the response, sent back by a recrawl as If-None-Match / If-Modified-Since. */
  etag: string | null;
  lastModified: string | null;
  /** sha256 (hex) of the decoded body of an HTML page, which a recrawl compares. */
  contentHash: string | null;
  /** How the URL compares with the crawl's `recrawlOf` crawl; null when it is not a recrawl. */
  change: ChangeKind | null;
  /** Where the body was stored (`storeBodies`): an opaque reference for the body store. */
  bodyRef: string | null;
  /**
   * The WARC record holding the page's payload: the response stored with `bodyRef`, or for a
   * revisit the original capture it refers to, so a recrawl of a recrawl refers there too.
   */
  payloadRecord: PayloadRecordRef | null;
}

/** A WARC record as a revisit refers to it: WARC-Refers-To, WARC-Refers-To-Target-URI and WARC-Refers-To-Date. */
export interface PayloadRecordRef {
  /**
   * Its WARC-Record-ID (`<urn:uuid:...>`); null only when it was taken from a record stored
   * before records named their payload's record (its URI and date still name it).
   */
  id: string | null;
  /** Its WARC-Target-URI. */
  uri: string;
  /** Its WARC-Date, as written there. */
  date: string;
}

export const CHANGE_KINDS = ['new', 'changed', 'unchanged', 'gone'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];
export type ChangeTotals = Record<ChangeKind, number>;

export interface HostBacklog {
  host: string;
  /** Every unclaimed URL of the host, to fetch or to render. */
  queued: number;
  /** How many of `queued` are to be rendered; absent when none. */
  rendering?: number;
}

/**
 * The hosts that have URLs waiting, as of `version`. Versions grow with every change to the
 * queue, so of two snapshots the one with the larger version is the newer.
 */
export interface FrontierSnapshot {
  version: number;
  queued: number;
  hosts: HostBacklog[];
}

export interface BatchTotals {
  processed: number;
  fetched: number;
  errors: number;
  skipped: number;
  bytes: number;
}

/**
 * The crawl as the scheduler sees it: the frontier snapshot and the crawl's totals, read
 * together, so the totals a running crawl shows are the store's (one truth) and of two views
 * the one with the larger version is the newer.
 */
export interface CrawlView extends FrontierSnapshot {
  totals: BatchTotals;
}

export interface CrawlTotals extends BatchTotals {
  queued: number;
  discovered: number;
  /** Records by change kind (all zero unless the crawl is a recrawl); `gone` ones are not in `processed`. */
  changes: ChangeTotals;
}

/**
 * What `startRequest` decided: the request may start now (`takenAt`: the clock reading the
 * host's gap counts from), or the host is busy for another `waitMs` (ask again then), or for
 * longer than the caller will wait (`deferUntil`).
 */
export type RequestStart = { takenAt: number } | { waitMs: number } | { deferUntil: number };

/** The decision for a host that is free from `next` on, asked at `now`: the rule both stores share. */
export function requestStartAt(next: number, now: number, maxWaitMs: number): RequestStart {
  if (next <= now) return { takenAt: now };
  return next - now > maxWaitMs ? { deferUntil: next } : { waitMs: next - now };
}

/**
 * A host's pacing state, shared by every worker of the crawl. The store keeps it; what it
 * means is decided by the politeness policy (`src/policy/host-politeness.ts`).
 */
export interface HostPacing {
  /** Failed requests in a row (connection errors, timeouts, 429, 5xx); 0 after a success. */
  errorStreak: number;
  /** AutoThrottle's current delay for the host; null until a response was measured. */
  throttleDelayMs: number | null;
}

export const INITIAL_PACING: HostPacing = { errorStreak: 0, throttleDelayMs: null };

/** A host's next pacing state, and the earliest time it may be asked again (null: no change). */
export interface PacingUpdate {
  pacing: HostPacing;
  notBefore: number | null;
}

/** The common case, a success on a healthy host with AutoThrottle off: nothing to write. */
export function changesNothing(current: HostPacing, { pacing, notBefore }: PacingUpdate): boolean {
  return notBefore === null && pacing.errorStreak === current.errorStreak && pacing.throttleDelayMs === current.throttleDelayMs;
}

/** What finishing one URL with `record` adds to the crawl's totals. */
export function finishedTotals(record: Pick<PageRecord, 'status' | 'error' | 'skipped' | 'bytes'>): BatchTotals {
  return {
    processed: 1,
    fetched: record.status === null ? 0 : 1,
    errors: record.error === null ? 0 : 1,
    skipped: record.skipped === null ? 0 : 1,
    bytes: record.bytes,
  };
}

/** A version of the crawl's resolved config, as JSON (see activities/crawl-config-store.ts). */
export interface StoredConfig {
  version: number;
  config: string;
}

/** Ends a crawl was meant to reach: out of work, or at a limit it was given (`maxPages`, `deadline`). */
export const FINISHED_END_STATUSES = ['completed', 'max-pages-reached', 'deadline-exceeded'] as const;

/** How a crawl can end: finished (FINISHED_END_STATUSES), or cut short. */
export const CRAWL_END_STATUSES = [...FINISHED_END_STATUSES, 'stopped', 'cancelled', 'failed'] as const;
export type CrawlEndStatus = (typeof CRAWL_END_STATUSES)[number];

/**
 * How the crawl ended, recorded by its last activity once nothing more will be written: a store
 * with no end recorded belongs to a crawl that is still running, or one that ended without
 * reaching its last activity (terminated, or run by a release that recorded no end).
 */
export interface CrawlEnd {
  status: CrawlEndStatus;
  /** Why a failed crawl failed: the cause's stable code and its message; null for any other end. */
  failure: { code: string; message: string } | null;
  /** When the end was recorded (ISO 8601). */
  endedAt: string;
}

export interface RobotsRecord {
  /** HTTP status of robots.txt, or null when it could not be fetched at all. */
  status: number | null;
  body: string;
  fetchedAt: number;
  /** Why it could not be fetched (a fetch error code), when status is null. */
  error: string | null;
}

export interface FrontierStore {
  enqueue(entries: readonly FrontierEntry[]): Promise<number>;
  /**
   * Up to `limit` URLs of `host` for one batch (a batch may claim from several hosts, each with
   * its own limit; a retried batch gets back, per host, what it had claimed). Of one host, at most `maxPagesPerHost` URLs are
   * ever handed out to be fetched (claimed now or done, across all batches and workers; URLs
   * given back by `release` no longer count). Once the host is at its cap, further URLs are
   * handed out with `skipped: 'host-page-cap'`, still within `limit`, so the batch records
   * them as skipped. They are not left queued: the workflow would keep scheduling a host
   * whose backlog can never be claimed, and every URL still counts against `maxPages`.
   * A fetch batch claims only URLs enqueued without `render`, a render batch (`render`
   * true) only those enqueued with it; the page cap counts both.
   */
  claim(batchId: string, host: string, limit: number, maxPagesPerHost?: number, render?: boolean, bounds?: ClaimBounds): Promise<ClaimedUrl[]>;
  /**
   * Each share as `claim` claims it, the URLs in the shares' order. The SQLite store claims
   * them in one write transaction: a batch of a broad crawl holds many small keys, and a commit
   * each cost more than their claims. PostgreSQL claims each in its own, so that no batch holds
   * several keys' locks while it claims the next.
   */
  claimShares(batchId: string, shares: readonly ShareClaim[], maxPagesPerHost?: number, render?: boolean): Promise<ClaimedUrl[][]>;
  /**
   * The store hands a filling batch ready work: in one atomic step, the URLs of its keys, each
   * as `claim` would with the query's bounds, in the order the batch is to crawl them. First
   * the keys the batch holds already (a retried attempt resumes them); else, biggest backlog
   * first, keys of its lane and shard with backlog, held by fewer batches than their
   * concurrency, and free to be asked by `freeBy` (a key held back past it would only be
   * given back): several where many are ready (`keysPerReadyClaim`), within the batch limit.
   * Empty when no key has anything for the batch.
   */
  claimReady(batchId: string, query: ReadyQuery): Promise<ReadyClaim[]>;
  /**
   * When the first key of the lane (`render`) and shard with backlog is free to be asked: the
   * earliest hold among them, which may be past; null with no backlog. A filling batch that
   * found nothing reads it, so the crawl asks again when a key can be claimed, not sooner.
   */
  backlogFreeAt(render: boolean, shard?: number): Promise<number | null>;
  complete(batchId: string, record: PageRecord, discovered: readonly FrontierEntry[]): Promise<number>;
  /**
   * Puts a batch's unfinished URLs back in the queue for a later batch; `retried` is the URL
   * the batch was retrying, whose attempt count is kept so retries stay bounded across batches.
   */
  release(batchId: string, retried?: { url: string; attempts: number }): Promise<number>;
  /** As `release`, for the batch's URLs of one key only: the batch goes on with its other keys. */
  releaseKey(batchId: string, key: string, retried?: { url: string; attempts: number }): Promise<number>;
  /** Records a batch's unfinished URLs as failed, so a URL that kills workers cannot stall the crawl. */
  abandon(batchId: string, error: string, at: string): Promise<number>;
  /** Puts every claimed, unfinished URL back in the queue: the crawl has stopped. */
  releaseAll(): Promise<number>;
  /**
   * Takes the host's next request start, atomically across workers: when the host is free at
   * `clock()` the start is taken and the host stays busy for `gapMs` from that moment. The gap
   * counts from when a request actually starts, not from when it was planned, so a late timer
   * never brings two requests closer than the gap. Nothing is reserved by a wait or a
   * deferral: the caller asks again. With `gapMs` 0 nothing is written: only deferrals
   * (Retry-After, backoff) hold a request back.
   */
  startRequest(host: string, gapMs: number, maxWaitMs: number, clock: () => number): Promise<RequestStart>;
  /**
   * Keeps the host busy until at least `until` (never shortens a wait): a request that went out
   * later than its start was taken (a new connection, a slow store answer) holds the host for
   * the gap from when it really left.
   */
  holdHost(host: string, until: number): Promise<void>;
  /** The host's pacing state (`INITIAL_PACING` for a host never paced). */
  hostPacing(host: string): Promise<HostPacing>;
  /**
   * Read-modify-write of the host's pacing state in one transaction, so concurrent updates
   * from several workers never lose one another: `update` gets the current state, its result
   * is stored, and the host's next request time is moved to at least `notBefore` (never
   * earlier). Returns the stored state.
   */
  updatePacing(host: string, update: (current: HostPacing) => PacingUpdate): Promise<HostPacing>;
  robots(host: string): Promise<RobotsRecord | undefined>;
  saveRobots(host: string, record: RobotsRecord): Promise<void>;
  snapshot(maxHosts: number): Promise<FrontierSnapshot>;
  /**
   * The snapshot and the running totals, read together: of the whole crawl, or of shard
   * `shard` (its keys' backlog, its version, the totals of its batches). A shard's version
   * moves on with every change its own batches make and every enqueue outside a batch; URLs
   * another shard's batch finds for its keys may only grow its queue, so of two views of one
   * version the one with more queued is the newer.
   */
  view(maxHosts: number, shard?: number): Promise<CrawlView>;
  /**
   * Whether the crawl has no work left for any live shard: every shard has ended, or has
   * nothing queued and nothing claimed. Stable once true, since only claimed URLs find new ones
   * (a page's links are queued in the transaction that completes it).
   */
  quiet(): Promise<boolean>;
  /** Shard `shard` has ended: its backlog no longer keeps the crawl from being quiet. */
  endShard(shard: number): Promise<void>;
  /** Records a version of the crawl's config; a version already recorded is kept as it is. */
  saveConfig(version: number, config: string): Promise<void>;
  latestConfig(): Promise<StoredConfig | undefined>;
  /** The latest recorded config's version, 0 when none is: read after each claim, so it reads no config text. */
  configVersion(): Promise<number>;
  /** Records how the crawl ended; a later end (a run reset and ended again) replaces it. */
  recordEnd(end: CrawlEnd): Promise<void>;
  /** How the crawl ended, or undefined while no end is recorded. */
  crawlEnd(): Promise<CrawlEnd | undefined>;
  /**
   * Forgets the recorded end: the crawl is opened to run again (a new workflow under its ID, a
   * run reset to before its opening), so its store no longer holds every record it will write.
   */
  clearEnd(): Promise<void>;
  /**
   * Adds scope keys of the crawl's seed-file seeds (their hosts, domains or directories: see
   * policy/scope.ts); a key already kept is ignored. The seeds themselves are only queued,
   * never kept in the config, so this is what a million seeds leave for the scope.
   */
  addSeedScope(keys: readonly string[]): Promise<void>;
  /** Every scope key `addSeedScope` kept, in no particular order. */
  seedScope(): Promise<string[]>;
  /**
   * Tells the batches of one workflow run of shard `shard` (0 when the crawl has one) to stop
   * and give back what they had not finished; the last order given stands (see `StopOrder`).
   */
  stopRun(order: StopOrder, shard?: number): Promise<void>;
  /** The order standing for the batches of shard `shard`, if any. */
  stopOrder(shard?: number): Promise<StopOrder | undefined>;
  batchTotals(batchId: string): Promise<BatchTotals>;
  totals(): Promise<CrawlTotals>;
  /** Every record, in the order URLs were first seen; read in pages, so memory stays flat. */
  records(): AsyncIterable<PageRecord>;
  /** The finished record of one URL (a later crawl's recrawl reads its validators, hash and links). */
  record(url: string): Promise<PageRecord | undefined>;
  /**
   * Of `urls`, those `record` would find a record of, in their given order, repeats kept: a
   * recrawl asks it of an unchanged page's earlier links. One read for the whole list, of each
   * URL's key and state only, however many links the page has.
   */
  recordedAmong(urls: readonly string[]): Promise<string[]>;
  /**
   * Records URLs of an earlier crawl that this one never reached as `change: 'gone'`. URLs in
   * this crawl's seen-set are left alone (atomically: insert-or-ignore), so a retry adds none
   * twice. Gone records are listed by `records()` but are not counted as processed.
   */
  recordGone(entries: readonly FrontierEntry[], at: string): Promise<number>;
  close(): Promise<void>;
}
