/**
 * The frontier store contract, run against every implementation (SQLite file, SQLite
 * :memory:, PostgreSQL): dedup, claim/resume/complete/release semantics, the per-host cap,
 * politeness slots, snapshots and totals; and two connections (two worker processes on one
 * file, or two machines on one database) racing, never claiming the same URL or passing the
 * cap; record(url), recordedAmong and recordGone (a recrawl's reads and its gone URLs, counted apart); claims
 * by kind (fetch or render) and the render backlog; a column for every record field in a new
 * SQLite file, a migrated one and a migrated PostgreSQL database. Then what only one
 * implementation has: SQLite's group commit of concurrent completions (one transaction, savepoints only after a write
 * failed, a locked file), URLs a SQLite store knows to be seen not written again, migration of SQLite files made by the 0.1.0 and 0.2.0 releases and of older PostgreSQL
 * schemas, PostgreSQL's crawls sharing one database, concurrent schema set-up and store URL
 * handling.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { Client } from 'pg';
import { hostKey } from '../src/policy/normalize-url';
import Database from 'better-sqlite3';
import { SqliteFrontierStore } from '../src/store/sqlite-store';
import { SQLITE_SCHEMA_VERSION } from '../src/store/sqlite-schema';
import { HOST_PAGE_CAP, INITIAL_PACING, stopOrderAddresses, type FrontierEntry, type FrontierStore, type HostPacing, type PageRecord, type ReadyClaim } from '../src/store/frontier-store';
import { openStoreBackend } from '../src/store/open-store-backend';
import { UnknownCrawlError, type StoreBackend } from '../src/store/store-backend';
import { redactStoreUrl, storeLocation, StoreUrlError } from '../src/store/store-url';
import { CONNECT_TIMEOUT_MS, PostgresDatabase, SCHEMA_VERSION, STATEMENT_ANSWER_TIMEOUT_MS } from '../src/store/postgres-database';
import { storeOutage, StoreUnavailableError } from '../src/store/store-errors';
import { READY_CANDIDATES } from '../src/store/claim-rules';
import { CLAIMED } from '../src/store/url-states';
import { patientStore, storeWaitMetrics } from '../src/store/patient-store';
import { CrawlMetrics } from '../src/observability/metrics';
import { freeServerPort } from '../src/workers/runtime';
import { drainHost, type RaceSide } from './helpers/store-race';
import { sleep, waitFor } from './helpers/fixtures';
import { startFreezingProxy } from './helpers/freezing-proxy';
import { PASSWORD, postgresBinary, startTestPostgres, type TestPostgres } from './helpers/postgres';
import { FIXTURE_DIR, POSTGRES_DUMP } from './tools/make-release-stores';
import { RELEASES } from './helpers/releases';
import { RECORD_FIELDS } from '../src/store/record-fields';

const tempDirs: string[] = [];
after(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** The change totals of a crawl that is not a recrawl. */
const NO_CHANGES = { new: 0, changed: 0, unchanged: 0, gone: 0 };

/** Columns added with extraction, recrawl and stored bodies, which an old store lacks. */
const CONTENT_COLUMNS = ['fields', 'etag', 'last_modified', 'content_hash', 'change', 'body_ref'];

function tempStoreFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crawlflow-unit-store-'));
  tempDirs.push(dir);
  return join(dir, 'nested', 'crawl.sqlite'); // the store creates missing directories
}

/** A column of a store's `urls` table: whether it may be null, and its default as the database spells it. */
interface UrlsColumn {
  name: string;
  notNull: boolean;
  default: string | null;
}

/** The columns of a SQLite store file's `urls` table. */
function sqliteUrlsColumns(file: string): UrlsColumn[] {
  const raw = new Database(file, { readonly: true });
  try {
    const rows = raw.prepare('SELECT name, "notnull", dflt_value FROM pragma_table_info(?)').all('urls') as Array<{ name: string; notnull: number; dflt_value: string | null }>;
    return rows.map((row) => ({ name: row.name, notNull: row.notnull === 1, default: row.dflt_value }));
  } finally {
    raw.close();
  }
}

/**
 * What record-fields.ts declares of each record column: a field the URL is queued with is never
 * null, and one with a default is NOT NULL and has it (`literal`: the dialect's spelling).
 */
function assertRecordColumns(columns: readonly UrlsColumn[], literal: (value: number | boolean) => string): void {
  const byName = new Map(columns.map((column) => [column.name, column]));
  assert.deepEqual(RECORD_FIELDS.filter((field) => !byName.has(field.column)).map((field) => field.column), [], 'every record field has a column');
  for (const field of RECORD_FIELDS) {
    const column = byName.get(field.column)!;
    if (field.default !== undefined) assert.deepEqual(column, { name: field.column, notNull: true, default: literal(field.default) }, field.column);
    else assert.equal(column.notNull, field.queued === true, `${field.column} is NOT NULL only if queued with the URL`);
  }
}

/** SQLite spells a default as written in its DDL, flags as 1 or 0. */
const sqliteLiteral = (value: number | boolean): string => String(Number(value));

function entry(url: string, depth = 0): FrontierEntry {
  return { url, host: hostKey(url), depth };
}

function pageRecord(url: string, overrides: Partial<PageRecord> = {}): PageRecord {
  return {
    url,
    depth: 0,
    status: 200,
    error: null,
    skipped: null,
    title: `title of ${url}`,
    links: [],
    fetchedAt: '2024-01-01T00:00:00.000Z',
    finalUrl: null,
    contentType: 'text/html',
    bytes: 100,
    canonical: null,
    noindex: false,
    fields: {},
    etag: null,
    lastModified: null,
    contentHash: null,
    change: null,
    bodyRef: null,
    payloadRecord: null,
    ...overrides,
  };
}

const A = 'a.test';
const B = 'b.test:8080';
const urlA = (n: number) => `http://a.test/p/${n}`;
const urlB = (n: number) => `http://b.test:8080/p/${n}`;
/** A URL of host A by name, for tests where the name says what the URL is (f1 to fetch, r1 to render). */
const urlOf = (name: string) => `http://a.test/${name}`;
async function readRecords(store: FrontierStore): Promise<PageRecord[]> {
  const records: PageRecord[] = [];
  for await (const record of store.records()) records.push(record);
  return records;
}

const urlsOf = (claimed: ReadonlyArray<{ url: string }>) => claimed.map((item) => item.url);
/** A ready claim's keys, each with its URLs. */
const claimedKeys = (claims: readonly ReadyClaim[]) => claims.map(({ key, urls }) => ({ key, urls: urlsOf(urls) }));

/** One implementation of FrontierStore, as the contract suite drives it. */
interface Implementation {
  name: string;
  /** A fresh, empty crawl store. */
  fresh(): Promise<FrontierStore>;
  /** Two stores of one fresh crawl on separate connections, as two worker processes or machines have. */
  twins?(): Promise<[FrontierStore, FrontierStore]>;
  /** Two racers, each on its own connection, draining host A of a crawl holding `seed`; then a store to check it with. */
  race?(seed: FrontierEntry[], maxPagesPerHost?: number): Promise<{ sides: RaceSide[]; check: FrontierStore }>;
}

let postgres: TestPostgres | undefined;
/** One pool for every PostgreSQL crawl of the suite, as a worker process has. */
let sharedBackend: StoreBackend | undefined;
const backends: StoreBackend[] = [];
let crawlCounter = 0;
const nextCrawlId = (): string => `unit-crawl-${(crawlCounter += 1)}`;

before(async () => {
  postgres = await startTestPostgres();
  sharedBackend = await postgresBackend();
});
after(async () => {
  for (const backend of backends) await backend.close();
  await postgres?.close();
});

async function postgresBackend(url = postgres!.url): Promise<StoreBackend> {
  const backend = await openStoreBackend({ dataDir: '/nonexistent', storeUrl: url });
  backends.push(backend);
  return backend;
}

/**
 * Two worker threads, each a separate connection like a separate worker process, drain one
 * file's host A at once (starting together).
 */
async function raceTwoThreads(file: string, maxPagesPerHost?: number): Promise<RaceSide[]> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { SqliteFrontierStore } = require(workerData.store);
    const { drainHost } = require(workerData.race);
    const store = new SqliteFrontierStore(workerData.file);
    // Start together: each thread waits at a barrier until both have opened the file, and again
    // until both have claimed a first batch (one thread could otherwise drain the host alone).
    const gate = new Int32Array(workerData.gate);
    const barrier = (slot) => {
      Atomics.add(gate, slot, 1);
      const until = Date.now() + 10000;
      while (Atomics.load(gate, slot) < 2 && Date.now() < until) Atomics.wait(gate, slot, Atomics.load(gate, slot), 5);
    };
    barrier(0);
    drainHost(store, workerData.name, workerData.host, workerData.maxPagesPerHost, () => barrier(1)).then(async (side) => {
      await store.close();
      parentPort.postMessage(side);
    });
  `;
  const gate = new SharedArrayBuffer(8);
  const run = (name: string) =>
    new Promise<RaceSide>((resolve, reject) => {
      const workerData = { name, file, host: A, maxPagesPerHost, gate, store: require.resolve('../src/store/sqlite-store'), race: require.resolve('./helpers/store-race') };
      const worker = new Worker(code, { eval: true, workerData });
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  return Promise.all([run('left'), run('right')]);
}

const sqliteFile: Implementation = {
  name: 'SQLite file',
  fresh: async () => new SqliteFrontierStore(tempStoreFile()),
  twins: async () => {
    const file = tempStoreFile();
    return [new SqliteFrontierStore(file), new SqliteFrontierStore(file)];
  },
  race: async (seed, maxPagesPerHost) => {
    const file = tempStoreFile();
    const store = new SqliteFrontierStore(file);
    await store.enqueue(seed);
    await store.close();
    return { sides: await raceTwoThreads(file, maxPagesPerHost), check: new SqliteFrontierStore(file) };
  },
};

const sqliteMemory: Implementation = { name: 'SQLite :memory:', fresh: async () => new SqliteFrontierStore(':memory:') };

const postgresql: Implementation = {
  name: 'PostgreSQL',
  fresh: async () => sharedBackend!.open(nextCrawlId()),
  // Two pools: two machines, sharing nothing but the database.
  twins: async () => {
    const crawlId = nextCrawlId();
    return [(await postgresBackend()).open(crawlId), (await postgresBackend()).open(crawlId)];
  },
  race: async (seed, maxPagesPerHost) => {
    const crawlId = nextCrawlId();
    await sharedBackend!.open(crawlId).enqueue(seed);
    // Two machines with three concurrent batches each.
    const machines = [await postgresBackend(), await postgresBackend()];
    const perMachine = await Promise.all(
      machines.map(async (machine, m) => {
        const store = machine.open(crawlId);
        const sides = await Promise.all([0, 1, 2].map((n) => drainHost(store, `${m === 0 ? 'left' : 'right'}-${n}`, A, maxPagesPerHost)));
        return { fetched: sides.flatMap((side) => side.fetched), skipped: sides.flatMap((side) => side.skipped) };
      }),
    );
    return { sides: perMachine, check: sharedBackend!.open(crawlId) };
  },
};

const IMPLEMENTATIONS = [sqliteFile, sqliteMemory, postgresql];

for (const impl of IMPLEMENTATIONS) {
describe(`FrontierStore contract: ${impl.name}`, () => {
  it('enqueue adds each URL once, however often it is offered', async () => {
    const store = await impl.fresh();
    try {
      assert.equal(await store.enqueue([entry(urlA(0)), entry(urlA(0)), entry(urlA(1))]), 2, 'duplicate within one call');
      assert.equal(await store.enqueue([entry(urlA(1), 5), entry(urlA(0))]), 0, 'duplicates of earlier calls');
      assert.equal(await store.enqueue([entry(urlA(2)), entry(urlB(0))]), 2);
      const totals = await store.totals();
      assert.equal(totals.discovered, 4);
      assert.equal(totals.queued, 4);
      assert.deepEqual((await store.snapshot(10)).hosts, [
        { host: A, queued: 3 },
        { host: B, queued: 1 },
      ]);
      assert.equal((await store.claim('batch', A, 10)).find((item) => item.url === urlA(1))?.depth, 0, 'the first depth seen wins');
    } finally {
      await store.close();
    }
  });

  it('claim hands out a host\'s most important URLs first, equal ones in discovery order', async () => {
    const store = await impl.fresh();
    try {
      const at = (url: string, priority: number) => ({ ...entry(url), priority });
      await store.enqueue([at(urlA(0), 0.1), at(urlA(1), 0.5), entry(urlA(2)), at(urlA(3), 0.5), at(urlA(4), 0.001)]);
      assert.deepEqual(urlsOf(await store.claim('batch-1', A, 3)), [urlA(2), urlA(1), urlA(3)]);
      assert.deepEqual((await store.claim('batch-1', A, 3)).map((claimed) => claimed.priority), [1, 0.5, 0.5], 'a retried batch gets them back in that order');
      assert.deepEqual(urlsOf(await store.claim('batch-2', A, 10)), [urlA(0), urlA(4)]);
    } finally {
      await store.close();
    }
  });

  it('claim hands one host its URLs in discovery order, up to the limit', async () => {
    const store = await impl.fresh();
    try {
      await store.enqueue([entry(urlA(0)), entry(urlB(0)), entry(urlA(1), 1)]);
      await store.enqueue([entry(urlA(2), 2), entry(urlB(1)), entry(urlA(3))]);
      const claimed = await store.claim('batch-1', A, 3);
      assert.deepEqual(claimed, [
        { url: urlA(0), depth: 0, attempts: 0, priority: 1 },
        { url: urlA(1), depth: 1, attempts: 0, priority: 1 },
        { url: urlA(2), depth: 2, attempts: 0, priority: 1 },
      ]);
      assert.deepEqual(urlsOf(await store.claim('batch-2', B, 10)), [urlB(0), urlB(1)], 'only the named host');
      assert.deepEqual(await store.claim('batch-3', 'nobody.test', 10), []);
      assert.equal((await store.totals()).queued, 1);
    } finally {
      await store.close();
    }
  });

  it('one batch claims from several hosts, each within its own limit, and a retry gets each host back', async () => {
    const store = await impl.fresh();
    try {
      await store.enqueue([0, 1, 2, 3].flatMap((n) => [entry(urlA(n)), entry(urlB(n))]));
      assert.deepEqual(urlsOf(await store.claim('multi', A, 2)), [urlA(0), urlA(1)]);
      assert.deepEqual(urlsOf(await store.claim('multi', B, 3)), [urlB(0), urlB(1), urlB(2)], "the first host's claims do not use up the second's limit");
      await store.complete('multi', pageRecord(urlA(0)), []);
      assert.deepEqual(urlsOf(await store.claim('multi', A, 2)), [urlA(1)], 'a retry gets back what it had not finished of A');
      assert.deepEqual(urlsOf(await store.claim('multi', B, 3)), [urlB(0), urlB(1), urlB(2)], 'and of B');
      assert.equal(await store.release('multi'), 4, 'a release gives back the unfinished URLs of every host');
      assert.equal((await store.totals()).queued, 7);
    } finally {
      await store.close();
    }
  });

  it('bounds a claim by the key\'s holders and by the batch\'s own limit over all its keys', async () => {
    const store = await impl.fresh();
    try {
      await store.enqueue([0, 1, 2, 3, 4, 5].flatMap((n) => [entry(urlA(n)), entry(urlB(n))]));
      assert.equal((await store.claim('one', A, 1, undefined, false, { holders: 2 })).length, 1);
      assert.equal((await store.claim('two', A, 1, undefined, false, { holders: 2 })).length, 1);
      assert.deepEqual(await store.claim('three', A, 1, undefined, false, { holders: 2 }), [], 'two batches hold A: a third may not');
      assert.deepEqual(urlsOf(await store.claim('one', A, 2, undefined, false, { holders: 1 })), [urlA(0), urlA(2)], 'a holder tops up whatever the others');
      await store.complete('two', pageRecord(urlA(1)), []);
      assert.equal((await store.claim('three', A, 1, undefined, false, { holders: 2 })).length, 1, 'once a holder has finished the key, another may take it');
      assert.equal((await store.claim('four', B, 4, undefined, false, { batchLimit: 3 })).length, 3, 'within the batch limit');
      await store.complete('four', pageRecord(urlB(0)), []);
      assert.deepEqual(urlsOf(await store.claim('four', A, 4, undefined, false, { batchLimit: 3 })), [], 'finished URLs count against the batch limit too');
    } finally {
      await store.close();
    }
  });

  it('hands a filling batch several keys at once where many are ready, within the batch limit, and one where few are', async () => {
    const store = await impl.fresh();
    // Two keys more than a claim asks for, each with a backlog one bigger than the key before:
    // h0 has one URL, the last key the most.
    const keys = READY_CANDIDATES + 2;
    const half = READY_CANDIDATES / 2;
    const urlOf = (key: number, n: number) => `http://h${key}.test/p/${n}`;
    const backlog = (key: number) => Array.from({ length: key + 1 }, (_, n) => urlOf(key, n));
    // The biggest `half` keys, the last of them cut to three URLs by the batch limit.
    const biggest = Array.from({ length: half }, (_, n) => keys - 1 - n);
    const batchLimit = biggest.slice(0, -1).reduce((sum, key) => sum + key + 1, 0) + 3;
    try {
      await store.enqueue(Array.from({ length: keys }, (_, key) => backlog(key).map((url) => entry(url))).flat());
      const query = { render: false, freeBy: Date.now() + 10_000, batchLimit, maxPagesPerHost: 100, holdersOf: () => 1, maxHolders: 1 };
      const wide = biggest.map((key, n) => ({ key: `h${key}.test`, urls: n === half - 1 ? backlog(key).slice(0, 3) : backlog(key) }));
      assert.deepEqual(claimedKeys(await store.claimReady('wide', query)), wide, 'half the keys found, biggest backlog first, the last cut to the batch limit');
      const resumed = claimedKeys(await store.claimReady('wide', query)).sort((x, y) => Number(y.key.slice(1, -5)) - Number(x.key.slice(1, -5)));
      assert.deepEqual(resumed, wide, 'a retried attempt gets every key it holds back, and no more');
      const next = keys - 1 - half;
      assert.deepEqual(claimedKeys(await store.claimReady('next', query)), [{ key: `h${next}.test`, urls: backlog(next) }], 'fewer keys left free than a claim asks for: one at a time');
    } finally {
      await store.close();
    }
  });

  it("spreads a waiting batch's claims: each takes its even part of the key's queue in its lane", async () => {
    const store = await impl.fresh();
    try {
      await store.enqueue([...[0, 1, 2, 3, 4].map((n) => entry(urlB(n))), { ...entry(urlB(5)), render: true }]);
      const query = { render: false, freeBy: Date.now() + 10_000, batchLimit: 50, maxPagesPerHost: 100, holdersOf: () => 4, maxHolders: 4, spread: true };
      assert.deepEqual(claimedKeys(await store.claimReady('w1', query)), [{ key: B, urls: [urlB(0), urlB(1)] }], '5 queued to fetch over 4 holders: 2 (the render URL not counted)');
      assert.deepEqual(claimedKeys(await store.claimReady('w2', query)), [{ key: B, urls: [urlB(2)] }], '3 left: 1');
      assert.deepEqual(claimedKeys(await store.claimReady('w3', { ...query, spread: undefined })), [{ key: B, urls: [urlB(3), urlB(4)] }], 'not spread: all there is');
    } finally {
      await store.close();
    }
  });

  it("claims a batch's shares in one call, each as its own claim would: its limit, its holders, a retried attempt's claims back", async () => {
    const store = await impl.fresh();
    try {
      await store.enqueue([...[0, 1, 2].map((n) => entry(urlA(n))), ...[0, 1, 2, 3, 4].map((n) => entry(urlB(n)))]);
      const shares = [{ host: B, limit: 2, holders: 1 }, { host: A, limit: 5 }, { host: 'none.test', limit: 3 }];
      const claimed = (batchId: string, of = shares) => store.claimShares(batchId, of).then((lists) => lists.map(urlsOf));
      assert.deepEqual(await claimed('shares'), [[urlB(0), urlB(1)], [0, 1, 2].map(urlA), []], 'in the order of the shares, each within its limit');
      assert.deepEqual(await claimed('shares'), [[urlB(0), urlB(1)], [0, 1, 2].map(urlA), []], 'a retried attempt gets its claims back');
      assert.deepEqual(await claimed('other', [{ host: B, limit: 2, holders: 1 }]), [[]], "B's one holder is taken");
      assert.deepEqual(await claimed('other', [{ host: B, limit: 2, holders: 2 }]), [[urlB(2), urlB(3)]], 'a second holder allowed: the next two');
      assert.deepEqual(await store.claimShares('empty', []), []);
    } finally {
      await store.close();
    }
  });

  it('hands a batch waiting for its own keys (besidesHeld) only keys it holds nothing of', async () => {
    const store = await impl.fresh();
    try {
      await store.enqueue([...[0, 1, 2].map((n) => entry(urlA(n))), ...[0, 1, 2, 3, 4].map((n) => entry(urlB(n)))]);
      const query = { render: false, freeBy: Date.now() + 10_000, batchLimit: 10, maxPagesPerHost: 100, holdersOf: () => 2, maxHolders: 2 };
      assert.deepEqual(claimedKeys(await store.claimReady('waiting', query)), [{ key: B, urls: [0, 1, 2, 3, 4].map(urlB) }], 'the biggest backlog first');
      await store.complete('waiting', pageRecord(urlB(0)), []);
      const besides = { ...query, besidesHeld: true };
      assert.deepEqual(claimedKeys(await store.claimReady('waiting', besides)), [{ key: A, urls: [0, 1, 2].map(urlA) }], 'not B, which it holds and which has a holder to spare');
      assert.deepEqual(await store.claimReady('waiting', besides), [], 'both keys held: nothing besides them');
      assert.deepEqual(claimedKeys(await store.claimReady('waiting', query)), [{ key: A, urls: [0, 1, 2].map(urlA) }, { key: B, urls: [1, 2, 3, 4].map(urlB) }], 'asked plainly, its own unfinished claims come back');
    } finally {
      await store.close();
    }
  });

  it('hands a filling batch ready work: its own keys first, then free ones by backlog, within every bound', async () => {
    const store = await impl.fresh();
    const C = 'c.test';
    const urlC = (n: number) => `http://${C}/p/${n}`;
    try {
      await store.enqueue([...[0, 1, 2].map((n) => entry(urlA(n))), ...[0, 1, 2, 3, 4].map((n) => entry(urlB(n))), entry(urlC(0)), { ...entry(urlC(1)), render: true }]);
      const query = { render: false, freeBy: Date.now() + 10_000, batchLimit: 6, maxPagesPerHost: 100, holdersOf: () => 1, maxHolders: 1 };
      assert.deepEqual(claimedKeys(await store.claimReady('fill', query)), [{ key: B, urls: [0, 1, 2, 3, 4].map(urlB) }], 'the biggest backlog first, one key of three');
      assert.deepEqual(claimedKeys(await store.claimReady('fill', query)), [{ key: B, urls: [0, 1, 2, 3, 4].map(urlB) }], 'a retried attempt gets its own key back first');
      for (const n of [0, 1, 2, 3, 4]) await store.complete('fill', pageRecord(urlB(n)), []);
      assert.deepEqual(claimedKeys(await store.claimReady('fill', query)), [{ key: A, urls: [urlA(0)] }], 'what is left of the batch limit');
      assert.deepEqual(await store.claimReady('full', { ...query, holdersOf: (key) => (key === C ? 0 : 1) }), [], 'A is held, B is empty, C refuses every holder');
      assert.deepEqual(claimedKeys(await store.claimReady('other', query)), [{ key: C, urls: [urlC(0)] }], 'a fetch batch never takes render URLs');
      await store.updatePacing(A, () => ({ pacing: INITIAL_PACING, notBefore: Date.now() + 60_000 }));
      await store.release('fill');
      assert.deepEqual(await store.claimReady('late', query), [], 'A is held back past freeBy; nothing else is queued to fetch');
      assert.deepEqual(await store.claimReady('render', { ...query, render: true }), [], 'fetch and render batches count as holders alike');
      await store.complete('other', pageRecord(urlC(0)), []);
      assert.deepEqual(claimedKeys(await store.claimReady('render', { ...query, render: true })), [{ key: C, urls: [urlC(1)] }]);
    } finally {
      await store.close();
    }
  });

  it('hands a filling batch the keys no batch has claimed from first, then the biggest backlogs', async () => {
    const store = await impl.fresh();
    const C = 'c.test';
    const D = 'd.test';
    const urlOf = (host: string, n: number) => `http://${host}/p/${n}`;
    try {
      // A and B are being crawled: each had its first page claimed and done, which queued five
      // and three more. C and D have only their first pages queued, D two of them.
      await store.enqueue([entry(urlA(0)), entry(urlB(0)), entry(urlOf(C, 0)), entry(urlOf(D, 0)), entry(urlOf(D, 1))]);
      for (const [key, url, links] of [[A, urlA(0), 5], [B, urlB(0), 3]] as const) {
        await store.claim(`first-${key}`, key, 1);
        await store.complete(`first-${key}`, pageRecord(url), Array.from({ length: links }, (_, n) => entry(key === A ? urlA(n + 1) : urlB(n + 1), 1)));
      }
      const query = { render: false, freeBy: Date.now() + 10_000, batchLimit: 10, maxPagesPerHost: 100, holdersOf: () => 1, maxHolders: 1 };
      const order: string[] = [];
      for (const batch of ['w', 'x', 'y', 'z']) order.push(...claimedKeys(await store.claimReady(batch, query)).map(({ key }) => key));
      assert.deepEqual(order, [D, C, A, B], 'the uncrawled keys, bigger first, then the crawled ones by backlog, although theirs are bigger');
    } finally {
      await store.close();
    }
  });

  it('keeps running totals with every finished URL, and views read them with the frontier', async () => {
    const store = await impl.fresh();
    try {
      await store.enqueue([0, 1, 2, 3].map((n) => entry(urlA(n))));
      await store.claim('t', A, 3);
      const before = await store.view(10);
      await store.complete('t', pageRecord(urlA(0), { bytes: 100 }), []);
      await store.complete('t', pageRecord(urlA(1), { status: null, error: 'timeout', bytes: 0 }), []);
      await store.abandon('t', 'request-secret', '2024-01-01T00:00:00.000Z');
      const view = await store.view(10);
      assert.deepEqual(view.totals, { processed: 3, fetched: 1, errors: 2, skipped: 0, bytes: 100 });
      assert.ok(view.version > before.version, 'finishing URLs moves the version on');
      const { processed, fetched, errors, skipped, bytes } = await store.totals();
      assert.deepEqual({ processed, fetched, errors, skipped, bytes }, view.totals, 'the running totals agree with the records');
    } finally {
      await store.close();
    }
  });

  it('keeps the scope keys of seed-file seeds once each, long ones too', async () => {
    const store = await impl.fresh();
    try {
      assert.deepEqual(await store.seedScope(), []);
      const long = `http://a.test/${'d/'.repeat(3_000)}`;
      await store.addSeedScope([A, B, A]);
      await store.addSeedScope([B, long]);
      await store.addSeedScope([]);
      assert.deepEqual((await store.seedScope()).sort(), [A, B, long].sort());
    } finally {
      await store.close();
    }
  });

  it('keeps version, totals, backlog and hand-over per shard; the crawl view sums them', async () => {
    const store = await impl.fresh();
    try {
      const inShard = (url: string, shard: number) => ({ ...entry(url), shard });
      await store.enqueue([inShard(urlA(0), 0), inShard(urlA(1), 0), inShard(urlB(0), 1)]);
      await store.claim('a', A, 1);
      const before = await store.view(10, 1);
      // A page of shard 0 finds a URL of shard 1's key: shard 1's queue grows, its totals do not.
      await store.complete('a', pageRecord(urlA(0), { bytes: 10 }), [inShard(urlB(1), 1)]);
      const [zero, one, crawl] = [await store.view(10, 0), await store.view(10, 1), await store.view(10)];
      assert.deepEqual(zero.totals, { processed: 1, fetched: 1, errors: 0, skipped: 0, bytes: 10 });
      assert.deepEqual({ queued: zero.queued, hosts: zero.hosts }, { queued: 1, hosts: [{ host: A, queued: 1 }] });
      assert.deepEqual({ queued: one.queued, hosts: one.hosts, processed: one.totals.processed }, { queued: 2, hosts: [{ host: B, queued: 2 }], processed: 0 });
      assert.ok(one.version > before.version || (one.version === before.version && one.queued > before.queued), 'the later view of shard 1 is the newer');
      assert.equal(crawl.version, zero.version + one.version);
      assert.deepEqual({ queued: crawl.queued, processed: crawl.totals.processed }, { queued: 3, processed: 1 });
      await store.stopRun({ run: 'run-of-1', abort: false }, 1);
      assert.deepEqual(await store.stopOrder(1), { run: 'run-of-1', abort: false });
      assert.equal(await store.stopOrder(0), undefined, 'a shard hands over alone');
    } finally {
      await store.close();
    }
  });

  it('backlogFreeAt gives the earliest hold among the keys with backlog in the lane and shard; null where none has backlog', async () => {
    const store = await impl.fresh();
    try {
      assert.equal(await store.backlogFreeAt(false), null, 'an empty frontier');
      await store.enqueue([{ ...entry(urlA(0)), shard: 0 }, { ...entry(urlA(1)), shard: 0 }, { ...entry(urlB(0)), shard: 1 }, { ...entry(urlB(1)), shard: 1, render: true }]);
      assert.equal(await store.backlogFreeAt(false), 0, 'keys never held are free since the epoch');
      await store.holdHost(A, 9_000);
      await store.holdHost(B, 7_000);
      assert.equal(await store.backlogFreeAt(false), 7_000);
      assert.equal(await store.backlogFreeAt(false, 0), 9_000, "shard 0's key only");
      await store.claim('a', A, 2);
      assert.equal(await store.backlogFreeAt(false, 0), null, 'a key whose URLs are all claimed has no backlog');
      await store.claim('b', B, 1);
      assert.equal(await store.backlogFreeAt(false), null, "b.test's one URL left is to render");
      assert.equal(await store.backlogFreeAt(true), 7_000, 'the render lane');
    } finally {
      await store.close();
    }
  });

  it('is quiet once no live shard has URLs queued or claimed; an ended shard\'s backlog does not count', async () => {
    const store = await impl.fresh();
    try {
      await store.enqueue([{ ...entry(urlA(0)), shard: 0 }, { ...entry(urlB(0)), shard: 1 }]);
      assert.equal(await store.quiet(), false, 'both shards have work');
      await store.claim('a', A, 1);
      await store.endShard(1);
      assert.equal(await store.quiet(), false, 'a URL of shard 0 is claimed');
      await store.complete('a', pageRecord(urlA(0)), []);
      assert.equal(await store.quiet(), true, 'shard 1 ended with its URL queued');
    } finally {
      await store.close();
    }
  });

  it('records versions of the crawl config and the last stop order given to a run\'s batches', async () => {
    const store = await impl.fresh();
    try {
      assert.equal(await store.latestConfig(), undefined);
      assert.equal(await store.configVersion(), 0);
      await store.saveConfig(1, '{"v":1}');
      assert.equal(await store.configVersion(), 1);
      await store.saveConfig(1, '{"v":"again"}');
      await store.saveConfig(2, '{"v":2}');
      assert.deepEqual(await store.latestConfig(), { version: 2, config: '{"v":2}' });
      assert.equal(await store.configVersion(), 2);
      assert.equal(await store.stopOrder(), undefined);
      await store.stopRun({ run: 'run-1', abort: false });
      await store.stopRun({ run: 'run-2', abort: true });
      assert.deepEqual(await store.stopOrder(), { run: 'run-2', abort: true });
      await store.stopRun({ run: 'run-3', abort: false });
      assert.deepEqual(await store.stopOrder(), { run: 'run-3', abort: false });
      // A pause's order holds the batches running then, numbered up to 12, and not those after.
      await store.stopRun({ run: 'run-3', abort: false, upTo: 12 });
      const paused = await store.stopOrder();
      assert.deepEqual(paused, { run: 'run-3', abort: false, upTo: 12 });
      assert.deepEqual([11, 12, 13].map((seq) => stopOrderAddresses(paused, 'run-3', seq)), [true, true, false]);
      assert.equal(stopOrderAddresses(paused, 'run-4', 1), false, 'another run is not held');
      assert.equal(stopOrderAddresses({ run: 'run-3', abort: false }, 'run-3', 1_000), true, 'a hand-over holds every batch of its run');
    } finally {
      await store.close();
    }
  });

  it("records how the crawl ended, none until it has; a later end replaces the first; a crawl opened again has none", async () => {
    const store = await impl.fresh();
    try {
      await store.enqueue([entry(urlA(0))]);
      assert.equal(await store.crawlEnd(), undefined, 'a running crawl has no end');
      await store.recordEnd({ status: 'stopped', failure: null, endedAt: '2026-12-05T10:00:00.000Z' });
      assert.deepEqual(await store.crawlEnd(), { status: 'stopped', failure: null, endedAt: '2026-12-05T10:00:00.000Z' });
      const failure = { code: 'request-secret', message: 'every batch failed the same way, so the crawl stopped: "X" is not set' };
      await store.recordEnd({ status: 'failed', failure, endedAt: '2026-12-05T11:00:00.000Z' });
      assert.deepEqual(await store.crawlEnd(), { status: 'failed', failure, endedAt: '2026-12-05T11:00:00.000Z' });
      await store.recordEnd({ status: 'completed', failure: null, endedAt: '2026-12-05T12:00:00.000Z' });
      assert.deepEqual(await store.crawlEnd(), { status: 'completed', failure: null, endedAt: '2026-12-05T12:00:00.000Z' }, 'the failure goes with the end it belonged to');
      await store.clearEnd();
      assert.equal(await store.crawlEnd(), undefined, 'a crawl run again has no end until it ends again');
      await store.clearEnd();
      assert.equal(await store.crawlEnd(), undefined, 'clearing no end changes nothing');
      await store.recordEnd({ status: 'cancelled', failure: null, endedAt: '2026-12-05T13:00:00.000Z' });
      assert.deepEqual(await store.crawlEnd(), { status: 'cancelled', failure: null, endedAt: '2026-12-05T13:00:00.000Z' });
    } finally {
      await store.close();
    }
  });

  async function seeded(count: number): Promise<FrontierStore> {
    const store = await impl.fresh();
    await store.enqueue(Array.from({ length: count }, (_, n) => entry(urlA(n))));
    return store;
  }

  it('a retried batch (same id) gets back its unfinished URLs and never more than limit in total', async () => {
    const store = await seeded(10);
    try {
      const first = await store.claim('batch-1', A, 4);
      assert.deepEqual(urlsOf(first), [urlA(0), urlA(1), urlA(2), urlA(3)]);
      assert.deepEqual(await store.claim('batch-1', A, 4), first, 'resume returns the same claims');

      await store.complete('batch-1', pageRecord(urlA(0)), []);
      await store.complete('batch-1', pageRecord(urlA(1)), []);
      assert.deepEqual(urlsOf(await store.claim('batch-1', A, 4)), [urlA(2), urlA(3)], 'only unfinished URLs, none new');
      assert.equal((await store.totals()).queued, 6);

      const other = await store.claim('batch-2', A, 100);
      assert.deepEqual(urlsOf(other), [4, 5, 6, 7, 8, 9].map(urlA), "another batch never gets batch-1's URLs");
      assert.deepEqual(await store.claim('batch-3', A, 100), []);
    } finally {
      await store.close();
    }
  });

  it('a batch that found its host short tops up on a later call, still within limit', async () => {
    const store = await seeded(1);
    try {
      assert.deepEqual(urlsOf(await store.claim('batch', A, 3)), [urlA(0)]);
      await store.enqueue([1, 2, 3, 4].map((n) => entry(urlA(n))));
      assert.deepEqual(urlsOf(await store.claim('batch', A, 3)), [urlA(0), urlA(1), urlA(2)]);
      assert.deepEqual(urlsOf(await store.claim('batch', A, 3)), [urlA(0), urlA(1), urlA(2)]);
      assert.equal((await store.totals()).queued, 2);
    } finally {
      await store.close();
    }
  });

  it('complete writes once; a second completion and its links are ignored', async () => {
    const store = await seeded(2);
    try {
      await store.claim('batch', A, 1);
      const links = [urlA(0), urlA(50), urlB(0)];
      const first = pageRecord(urlA(0), { title: 'first', links });
      assert.equal(await store.complete('batch', first, [entry(urlA(50), 1), entry(urlB(0), 1), entry(urlA(1), 1)]), 2, 'known URLs are not re-added');
      const second = pageRecord(urlA(0), { title: 'second', status: 500 });
      assert.equal(await store.complete('batch', second, [entry(urlA(99), 1)]), 0);
      assert.equal(await store.complete('someone-else', pageRecord(urlA(1)), [entry(urlA(98), 1)]), 0, 'a URL the batch never claimed');

      const records = await readRecords(store);
      assert.equal(records.length, 1);
      assert.equal(records[0].title, 'first');
      assert.deepEqual(records[0].links, links);
      const totals = await store.totals();
      assert.equal(totals.discovered, 4, 'a.test/p/{0,1,50} and b.test/p/0; not 98 or 99');
      assert.equal(totals.queued, 3);
    } finally {
      await store.close();
    }
  });

  it('a link found on a page whose completion was not written (a zombie attempt) is queued when a page finds it later; counts stay exact', async () => {
    const store = await seeded(3);
    try {
      await store.claim('batch', A, 2);
      assert.equal(await store.complete('batch', pageRecord(urlA(0)), [entry(urlA(1), 1), entry(urlA(10), 1)]), 1, 'p/1 is known');
      // The zombie's second completion of p/0 in the same turn as the retry's completion of p/1 (one group commit).
      const [zombie, retry] = await Promise.all([
        store.complete('batch', pageRecord(urlA(0)), [entry(urlA(20), 1), entry(urlA(10), 1)]),
        store.complete('batch', pageRecord(urlA(1)), [entry(urlA(0), 1)]),
      ]);
      assert.deepEqual([zombie, retry], [0, 0]);
      assert.equal((await store.totals()).discovered, 4, 'p/0, p/1, p/2 and p/10; not p/20');
      assert.deepEqual(urlsOf(await store.claim('later', A, 10)), [urlA(2), urlA(10)]);
      const found = [entry(urlA(20), 1), entry(urlA(10), 1), entry(urlA(0), 1), entry(urlA(21), 1)];
      assert.equal(await store.complete('later', pageRecord(urlA(2)), found), 2, 'p/20 and p/21');
      assert.equal(await store.enqueue([entry(urlA(20)), entry(urlA(21)), entry(urlA(22)), entry(urlA(22))]), 1, 'p/22');
      assert.equal(await store.enqueue([entry(urlA(0)), entry(urlA(22))]), 0);
      assert.deepEqual(urlsOf(await store.claim('last', A, 10)), [urlA(20), urlA(21), urlA(22)]);
      assert.deepEqual(await store.totals(), { processed: 3, fetched: 3, errors: 0, skipped: 0, bytes: 300, queued: 0, discovered: 7, changes: NO_CHANGES });
    } finally {
      await store.close();
    }
  });

  it('release returns unfinished URLs to the queue and keeps the given attempt count', async () => {
    const store = await seeded(5);
    try {
      await store.claim('batch', A, 4);
      await store.complete('batch', pageRecord(urlA(0)), []);
      const before = (await store.snapshot(10)).version;
      assert.equal(await store.release('batch', { url: urlA(1), attempts: 2 }), 3);
      const snapshot = await store.snapshot(10);
      assert.ok(snapshot.version > before);
      assert.equal(snapshot.queued, 4);
      assert.deepEqual(snapshot.hosts, [{ host: A, queued: 4 }]);

      const next = await store.claim('batch-2', A, 10);
      assert.deepEqual(next, [
        { url: urlA(1), depth: 0, attempts: 2, priority: 1 },
        { url: urlA(2), depth: 0, attempts: 0, priority: 1 },
        { url: urlA(3), depth: 0, attempts: 0, priority: 1 },
        { url: urlA(4), depth: 0, attempts: 0, priority: 1 },
      ]);
      assert.equal(await store.complete('batch', pageRecord(urlA(2)), [entry(urlA(77))]), 0, 'the old batch can no longer complete a released URL');
      assert.equal(await store.complete('batch-2', pageRecord(urlA(2)), [entry(urlA(77))]), 1, 'its new owner can');
      assert.equal(await store.release('batch-without-claims'), 0);
    } finally {
      await store.close();
    }
  });

  it("releaseKey returns one key's unfinished URLs to the queue, with the given attempt count, and leaves the batch's other keys claimed", async () => {
    const store = await impl.fresh();
    try {
      await store.enqueue([...[0, 1, 2].map((n) => entry(urlA(n))), ...[0, 1].map((n) => entry(urlB(n)))]);
      await store.claim('batch', A, 3);
      await store.claim('batch', B, 2);
      await store.complete('batch', pageRecord(urlA(0)), []);
      const before = (await store.snapshot(10)).version;
      assert.equal(await store.releaseKey('batch', A, { url: urlA(1), attempts: 2 }), 2);
      const snapshot = await store.snapshot(10);
      assert.ok(snapshot.version > before);
      assert.deepEqual({ queued: snapshot.queued, hosts: snapshot.hosts }, { queued: 2, hosts: [{ host: A, queued: 2 }] }, "b.test's URLs stay claimed");
      assert.deepEqual(await store.claim('batch-2', A, 10), [
        { url: urlA(1), depth: 0, attempts: 2, priority: 1 },
        { url: urlA(2), depth: 0, attempts: 0, priority: 1 },
      ]);
      assert.equal(await store.complete('batch', pageRecord(urlB(0)), []), 0, 'the batch still completes its other key');
      assert.equal((await store.totals()).processed, 2);
      assert.equal(await store.releaseKey('batch', A), 0, 'nothing of a.test left to give back');
    } finally {
      await store.close();
    }
  });

  it('abandon records unfinished URLs as failed and never hands them out again', async () => {
    const store = await seeded(4);
    try {
      await store.claim('batch', A, 3);
      await store.complete('batch', pageRecord(urlA(0), { bytes: 7 }), []);
      assert.equal(await store.abandon('batch', 'batch-failed', '2024-02-02T00:00:00.000Z'), 2);
      assert.deepEqual(urlsOf(await store.claim('batch-2', A, 10)), [urlA(3)]);
      const records = await readRecords(store);
      assert.deepEqual(urlsOf(records), [urlA(0), urlA(1), urlA(2)]);
      assert.equal(records[1].error, 'batch-failed');
      assert.equal(records[1].fetchedAt, '2024-02-02T00:00:00.000Z');
      assert.equal(records[1].status, null);
      assert.deepEqual(await store.batchTotals('batch'), { processed: 3, fetched: 1, errors: 2, skipped: 0, bytes: 7 });
      assert.equal(await store.abandon('batch', 'again', 'x'), 0);
    } finally {
      await store.close();
    }
  });

  it('releaseAll puts every claimed, unfinished URL back on its host', async () => {
    const store = await impl.fresh();
    try {
      await store.enqueue([0, 1, 2].map((n) => entry(urlA(n))));
      await store.enqueue([0, 1].map((n) => entry(urlB(n))));
      await store.claim('x', A, 2);
      await store.claim('y', B, 2);
      await store.complete('y', pageRecord(urlB(0)), []);
      const before = await store.snapshot(10);
      assert.equal(before.queued, 1);
      assert.deepEqual(before.hosts, [{ host: A, queued: 1 }]);
      assert.equal(await store.releaseAll(), 3);
      assert.deepEqual((await store.snapshot(10)).hosts, [
        { host: A, queued: 3 },
        { host: B, queued: 1 },
      ]);
      assert.equal(await store.releaseAll(), 0);
      assert.deepEqual(urlsOf(await store.claim('z', B, 5)), [urlB(1)]);
    } finally {
      await store.close();
    }
  });

  it('snapshot versions grow with every queue change; host counts are exact and ordered', async () => {
    const store = await impl.fresh();
    try {
      const versions = [(await store.snapshot(10)).version];
      const step = async (change: () => Promise<unknown>) => {
        await change();
        versions.push((await store.snapshot(10)).version);
      };
      await step(() => store.enqueue([0, 1, 2].map((n) => entry(urlA(n)))));
      await step(() => store.enqueue([entry(urlB(0))]));
      await step(() => store.claim('b1', A, 2));
      await step(() => store.complete('b1', pageRecord(urlA(0)), [entry(urlB(1)), entry(urlB(2))]));
      await step(() => store.release('b1'));
      await step(() => store.claim('b2', B, 1));
      await step(() => store.releaseAll());
      for (let i = 1; i < versions.length; i++) assert.ok(versions[i] > versions[i - 1], `version grows at step ${i}: ${versions.join(',')}`);

      const snapshot = await store.snapshot(10);
      assert.equal(snapshot.queued, 5);
      assert.deepEqual(snapshot.hosts, [
        { host: B, queued: 3 },
        { host: A, queued: 2 },
      ]);
      assert.deepEqual((await store.snapshot(1)).hosts, [{ host: B, queued: 3 }], 'maxHosts keeps the largest backlogs');
      await store.claim('b3', A, 10);
      assert.deepEqual((await store.snapshot(10)).hosts, [{ host: B, queued: 3 }], 'an empty host drops out');
    } finally {
      await store.close();
    }
  });

  it('startRequest spaces request starts to a host by gapMs, counted from the actual start, and defers past maxWaitMs', async () => {
    const store = await seeded(1);
    const at = (now: number) => () => now;
    try {
      assert.deepEqual(await store.startRequest(A, 100, 1_000, at(10_000)), { takenAt: 10_000 });
      assert.deepEqual(await store.startRequest(A, 100, 1_000, at(10_000)), { waitMs: 100 });
      assert.deepEqual(await store.startRequest(A, 100, 1_000, at(10_050)), { waitMs: 50 }, 'a wait reserves nothing');
      assert.deepEqual(await store.startRequest(A, 100, 40, at(10_050)), { deferUntil: 10_100 }, 'a wait of 50 ms exceeds 40');
      assert.deepEqual(await store.startRequest(A, 100, 1_000, at(10_130)), { takenAt: 10_130 }, 'a deferral reserves nothing either');
      assert.deepEqual(await store.startRequest(A, 100, 1_000, at(10_200)), { waitMs: 30 }, 'a late start (30 ms after the host was free) moves the next one by as much');
      assert.deepEqual(await store.startRequest(A, 0, 1_000, at(10_200)), { waitMs: 30 }, 'gap 0 still waits for the host');
      assert.deepEqual(await store.startRequest(A, 0, 1_000, at(10_230)), { takenAt: 10_230 });
      assert.deepEqual(await store.startRequest(A, 0, 1_000, at(10_230)), { takenAt: 10_230 }, 'gap 0 takes nothing');
      assert.deepEqual(await store.startRequest(B, 100, 0, at(10_230)), { takenAt: 10_230 }, 'hosts are independent');
    } finally {
      await store.close();
    }
  });

  it('a start is never taken without keeping the host busy, however the clock moves during the call', async () => {
    const store = await seeded(1);
    try {
      assert.deepEqual(await store.startRequest(A, 100, 1_000, () => 10_000), { takenAt: 10_000 });
      // Busy at the first reading, free from the second on: a store that reads the clock more
      // than once must still write the start it hands out.
      const readings: number[] = [];
      const stepping = () => {
        readings.push(10_050 + 100 * readings.length);
        return readings[readings.length - 1];
      };
      const start = await store.startRequest(A, 100, 1_000, stepping);
      const latest = Math.max(...readings);
      if ('takenAt' in start) assert.ok(!('takenAt' in (await store.startRequest(A, 100, 1_000, () => latest))), `a second start at ${latest}, after readings ${readings}`);
      else assert.deepEqual(start, { waitMs: 50 }, 'or it answered from its one reading');
    } finally {
      await store.close();
    }
  });

  it('holdHost keeps the host busy until a later time, never shortening a wait', async () => {
    const store = await seeded(1);
    try {
      assert.deepEqual(await store.startRequest(A, 100, 1_000, () => 10_000), { takenAt: 10_000 });
      await store.holdHost(A, 10_140); // the request left 40 ms after its start was taken
      assert.deepEqual(await store.startRequest(A, 100, 1_000, () => 10_100), { waitMs: 40 });
      await store.holdHost(A, 10_050);
      assert.deepEqual(await store.startRequest(A, 100, 1_000, () => 10_100), { waitMs: 40 }, 'an earlier hold changes nothing');
      assert.deepEqual(await store.startRequest(A, 100, 1_000, () => 10_140), { takenAt: 10_140 });
    } finally {
      await store.close();
    }
  });

  it('updatePacing stores the host state and holds back every request start until notBefore, never shortening it', async () => {
    const store = await seeded(1);
    const deferTo = (notBefore: number) => (current: HostPacing) => ({ pacing: { ...current, errorStreak: current.errorStreak + 1 }, notBefore });
    try {
      assert.deepEqual(await store.hostPacing(A), INITIAL_PACING);
      await store.updatePacing(A, deferTo(5_000));
      assert.deepEqual(await store.updatePacing(A, deferTo(3_000)), { errorStreak: 2, throttleDelayMs: null }, 'each update sees the last');
      await store.updatePacing(A, (current) => ({ pacing: { ...current, throttleDelayMs: 750 }, notBefore: null }));
      assert.deepEqual(await store.hostPacing(A), { errorStreak: 2, throttleDelayMs: 750 });
      assert.deepEqual(await store.startRequest(A, 10, 60_000, () => 1_000), { waitMs: 4_000 });
      assert.deepEqual(await store.startRequest(A, 10, 1_000, () => 1_000), { deferUntil: 5_000 });
      assert.deepEqual(await store.startRequest(A, 10, 1_000, () => 5_000), { takenAt: 5_000 });
      await store.updatePacing('fresh.test', deferTo(9_000));
      assert.deepEqual(await store.startRequest('fresh.test', 0, 0, () => 1_000), { deferUntil: 9_000 }, 'works for a host with no URLs');
      assert.equal((await store.totals()).queued, 1, 'deferring does not touch the queue');
      assert.deepEqual((await store.snapshot(10)).hosts, [{ host: A, queued: 1 }]);
    } finally {
      await store.close();
    }
  });

  it('totals and batchTotals count outcomes exactly', async () => {
    const store = await seeded(6);
    try {
      await store.claim('b1', A, 4);
      await store.complete('b1', pageRecord(urlA(0), { bytes: 1_000 }), [entry(urlB(0), 1)]);
      await store.complete('b1', pageRecord(urlA(1), { status: 404, bytes: 20 }), []);
      await store.complete('b1', pageRecord(urlA(2), { status: null, error: 'timeout', bytes: 0 }), []);
      await store.complete('b1', pageRecord(urlA(3), { status: null, skipped: 'robots', bytes: 0 }), []);
      await store.claim('b2', A, 1);
      await store.complete('b2', pageRecord(urlA(4), { status: 503, error: null, bytes: 5 }), []);
      assert.deepEqual(await store.totals(), { processed: 5, fetched: 3, errors: 1, skipped: 1, bytes: 1_025, queued: 2, discovered: 7, changes: NO_CHANGES });
      assert.deepEqual(await store.batchTotals('b1'), { processed: 4, fetched: 2, errors: 1, skipped: 1, bytes: 1_020 });
      assert.deepEqual(await store.batchTotals('b2'), { processed: 1, fetched: 1, errors: 0, skipped: 0, bytes: 5 });
      assert.deepEqual(await store.batchTotals('none'), { processed: 0, fetched: 0, errors: 0, skipped: 0, bytes: 0 });
    } finally {
      await store.close();
    }
  });

  it('records() yields finished pages in discovery order with every field intact', async () => {
    const store = await seeded(3);
    try {
      await store.claim('b', A, 3);
      const full = pageRecord(urlA(0), {
        depth: 0,
        links: ['http://x.test/', 'http://y.test/?q=1'],
        finalUrl: 'http://a.test/p/0/',
        canonical: 'http://a.test/canonical',
        noindex: true,
        contentType: 'text/html; charset=utf-8',
        title: 'Ünïcödé «title»',
        fields: { heading: 'Ünï "q"', tags: ['x', 'y,z', ''], missing: null, empty: '' },
        etag: 'W/"e-1"',
        lastModified: 'Mon, 02 Feb 2026 00:00:00 GMT',
        contentHash: 'ab'.repeat(32),
        change: 'changed',
        bodyRef: 'b%201.attempt-1.warc.gz#0+123',
      });
      // Completed out of discovery order.
      await store.complete('b', pageRecord(urlA(2)), []);
      await store.complete('b', full, []);
      assert.deepEqual(urlsOf(await readRecords(store)), [urlA(0), urlA(2)], 'unfinished URLs are not records');
      await store.complete('b', pageRecord(urlA(1), { title: null, contentType: null }), []);
      const records = await readRecords(store);
      assert.deepEqual(urlsOf(records), [urlA(0), urlA(1), urlA(2)]);
      assert.deepEqual(records[0], full);
      assert.equal(records[1].title, null);
      assert.equal(records[1].noindex, false);
      assert.deepEqual(records[1].fields, {}, 'no extracted fields read back as an empty object');
      assert.equal(records[1].change, null);
      assert.deepEqual(await store.record(urlA(0)), full, 'record(url) reads the same record');
    } finally {
      await store.close();
    }
  });

  it('record(url) returns finished records only; recordGone adds URLs not seen, counted apart', async () => {
    const store = await seeded(2);
    try {
      const payloadRecord = { id: '<urn:uuid:00000000-0000-4000-8000-00000000000a>', uri: urlA(0), date: '2026-02-01T00:00:00Z' };
      const changed = pageRecord(urlA(0), { etag: '"e"', contentHash: 'h', fields: { x: ['1'] }, change: 'changed', bodyRef: 'f#0+1', payloadRecord });
      await store.claim('b1', A, 1);
      assert.equal(await store.record(urlA(0)), undefined, 'claimed, not finished');
      await store.complete('b1', changed, []);
      assert.deepEqual(await store.record(urlA(0)), changed);
      assert.equal(await store.record(urlA(1)), undefined, 'queued, not finished');
      assert.equal(await store.record('http://a.test/never-seen'), undefined);
      const version = (await store.snapshot(10)).version;
      assert.equal(await store.recordGone([urlA(0), urlA(1), urlA(2), urlA(2)].map((url) => entry(url, 1)), '2026-02-02T00:00:00.000Z'), 1, 'only the unseen URL, once');
      assert.equal(await store.recordGone([entry(urlA(2), 1)], 'later'), 0, 'a retry adds nothing');
      assert.equal(await store.recordGone([], 'later'), 0);
      assert.equal(await store.record(urlA(2)), undefined, 'a gone URL has no fetched record');
      assert.deepEqual(await store.snapshot(10), { version, queued: 1, hosts: [{ host: A, queued: 1 }] }, 'gone URLs are not queued and leave the snapshot alone');
      assert.deepEqual(await readRecords(store), [
        changed,
        pageRecord(urlA(2), { depth: 1, status: null, title: null, fetchedAt: '2026-02-02T00:00:00.000Z', contentType: null, bytes: 0, change: 'gone' }),
      ]);
      assert.deepEqual(urlsOf(await store.claim('b2', A, 10)), [urlA(1)], 'a gone URL is never handed out');
      assert.deepEqual(await store.totals(), {
        processed: 1, fetched: 1, errors: 0, skipped: 0, bytes: 100, queued: 0, discovered: 2,
        changes: { new: 0, changed: 1, unchanged: 0, gone: 1 },
      }, 'gone is neither processed nor discovered');
      await store.complete('b2', pageRecord(urlA(1), { change: 'new' }), [entry(urlA(2), 2)]);
      assert.equal((await store.totals()).queued, 0, 'a gone URL is in the seen-set: not enqueued again');
      assert.deepEqual((await store.totals()).changes, { new: 1, changed: 1, unchanged: 0, gone: 1 });
    } finally {
      await store.close();
    }
  });

  it('recordedAmong keeps the URLs record(url) finds, in the order given, repeats and all, however long the list', async () => {
    const store = await seeded(5);
    try {
      await store.claim('b', A, 3);
      await store.complete('b', pageRecord(urlA(2)), []);
      await store.complete('b', pageRecord(urlA(0), { status: 404 }), []);
      await store.recordGone([entry(urlB(0))], '2026-02-02T00:00:00.000Z');
      assert.deepEqual(await store.recordedAmong([]), []);
      const never = 'http://a.test/never-seen';
      // urlA(1) claimed, urlA(3) queued, urlB(0) gone: none of them has a record.
      const mixed = [urlA(2), urlA(1), urlB(0), urlA(3), never, urlA(0), urlA(2), never];
      assert.deepEqual(await store.recordedAmong(mixed), [urlA(2), urlA(0), urlA(2)]);
      const one = async (url: string) => ((await store.record(url)) === undefined ? [] : [url]);
      assert.deepEqual(await store.recordedAmong(mixed), (await Promise.all(mixed.map(one))).flat(), 'what a record(url) per URL finds');
      // More URLs than SQLite binds parameters in one statement (32,766), recorded ones on either side of that.
      const unseen = (from: number) => Array.from({ length: 20_000 }, (_, n) => `http://c.test/unseen/${from + n}`);
      const long = [urlA(0), ...unseen(0), urlA(4), urlA(2), ...unseen(20_000), urlA(0), urlA(1), urlA(2)];
      assert.deepEqual(await store.recordedAmong(long), [urlA(0), urlA(2), urlA(0), urlA(2)]);
    } finally {
      await store.close();
    }
  });

  it('keeps robots.txt per host', async () => {
    const store = await seeded(1);
    try {
      assert.equal(await store.robots(A), undefined, 'a known host without robots');
      await store.saveRobots(A, { status: 200, body: 'User-agent: *\nDisallow: /x\n', fetchedAt: 123, error: null });
      await store.saveRobots('new.test', { status: null, body: '', fetchedAt: 456, error: 'tls-certificate' });
      assert.deepEqual(await store.robots(A), { status: 200, body: 'User-agent: *\nDisallow: /x\n', fetchedAt: 123, error: null });
      assert.deepEqual(await store.robots('new.test'), { status: null, body: '', fetchedAt: 456, error: 'tls-certificate' });
      assert.deepEqual((await store.snapshot(10)).hosts, [{ host: A, queued: 1 }], 'saving robots does not touch the queue');
    } finally {
      await store.close();
    }
  });
  describe('per-host page cap (maxPagesPerHost)', () => {
    const skippedOf = (claimed: ReadonlyArray<{ url: string; skipped?: string }>) => claimed.filter((item) => item.skipped).map((item) => item.url);

    it('hands out at most the cap for fetching; past it, URLs come back marked to be skipped', async () => {
      const store = await seeded(10);
      try {
        await store.enqueue([entry(urlB(0))]);
        assert.deepEqual(await store.claim('b1', A, 4, 6), [0, 1, 2, 3].map((n) => ({ url: urlA(n), depth: 0, attempts: 0, priority: 1 })));
        const second = await store.claim('b2', A, 4, 6);
        assert.deepEqual(urlsOf(second), [4, 5, 6, 7].map(urlA), 'still within the batch limit');
        assert.deepEqual(skippedOf(second), [urlA(6), urlA(7)]);
        assert.ok(second.filter((item) => item.skipped).every((item) => item.skipped === HOST_PAGE_CAP));
        assert.deepEqual(await store.claim('b2', A, 4, 6), second, 'a resumed batch gets the same marks back');
        assert.deepEqual(skippedOf(await store.claim('b3', A, 10, 6)), [urlA(8), urlA(9)]);
        assert.deepEqual(urlsOf(await store.claim('b4', B, 10, 6)), [urlB(0)], 'other hosts have their own count');
        assert.equal((await store.totals()).queued, 0, 'nothing is left queued for a workflow to wait on');
      } finally {
        await store.close();
      }
    });

    it('release and releaseAll give back the queue, the render backlog and the places of fetched URLs only', async () => {
      const store = await impl.fresh();
      const backlog = async () => (await store.snapshot(10)).hosts;
      const fetchOf = (claimed: ReadonlyArray<{ skipped?: string }>) => claimed.map((item) => item.skipped ?? 'fetch');
      try {
        await store.enqueue([
          ...['f0', 'f1', 'f2', 'f3'].map((name) => entry(urlOf(name))),
          ...['r0', 'r1'].map((name) => ({ ...entry(urlOf(name)), render: true })),
          ...[0, 1, 2].map((n) => entry(urlB(n))),
        ]);
        assert.deepEqual(fetchOf(await store.claim('f', A, 10, 3)), ['fetch', 'fetch', 'fetch', HOST_PAGE_CAP]);
        assert.equal(await store.release('f'), 4);
        assert.deepEqual(await backlog(), [{ host: A, queued: 6, rendering: 2 }, { host: B, queued: 3 }]);
        assert.deepEqual(fetchOf(await store.claim('f2', A, 10, 3)), ['fetch', 'fetch', 'fetch', HOST_PAGE_CAP], 'the three fetched gave their places back, the skip had none');

        assert.deepEqual(fetchOf(await store.claim('r', A, 10, 4, true)), ['fetch', HOST_PAGE_CAP]);
        assert.deepEqual(fetchOf(await store.claim('b', B, 2, 1)), ['fetch', HOST_PAGE_CAP]);
        assert.deepEqual(await backlog(), [{ host: B, queued: 1 }]);
        assert.equal(await store.releaseAll(), 8);
        assert.deepEqual(await backlog(), [{ host: A, queued: 6, rendering: 2 }, { host: B, queued: 3 }]);
        assert.deepEqual(fetchOf(await store.claim('again', A, 10, 4)), ['fetch', 'fetch', 'fetch', 'fetch'], 'no place of A is left taken');
        assert.deepEqual(fetchOf(await store.claim('again-r', A, 10, 4, true)), [HOST_PAGE_CAP, HOST_PAGE_CAP]);
        assert.deepEqual(fetchOf(await store.claim('again-b', B, 10, 3)), ['fetch', 'fetch', 'fetch'], 'nor of B');
        assert.equal((await store.totals()).queued, 0);
      } finally {
        await store.close();
      }
    });

    it('counts done and claimed URLs, not released ones; abandoning keeps the skip', async () => {
      const store = await seeded(6);
      try {
        assert.equal((await store.claim('b1', A, 3, 3)).length, 3);
        await store.release('b1');
        const again = await store.claim('b2', A, 6, 3);
        assert.deepEqual(skippedOf(again), [urlA(3), urlA(4), urlA(5)], 'the released URLs freed their places');
        await store.complete('b2', pageRecord(urlA(0)), []);
        await store.complete('b2', pageRecord(urlA(3), { status: null, title: null, skipped: HOST_PAGE_CAP }), []);
        await store.abandon('b2', 'batch-failed', '2024-01-01T00:00:00.000Z');
        const records = new Map((await readRecords(store)).map((record) => [record.url, record]));
        assert.equal(records.get(urlA(1))?.error, 'batch-failed');
        assert.equal(records.get(urlA(4))?.error, null, 'a URL claimed only to be skipped stays skipped');
        assert.equal(records.get(urlA(4))?.skipped, HOST_PAGE_CAP);
        assert.deepEqual(await store.totals(), { processed: 6, fetched: 1, errors: 2, skipped: 3, bytes: 200, queued: 0, discovered: 6, changes: NO_CHANGES });
      } finally {
        await store.close();
      }
    });
  });

  describe('claims by kind: fetch batches and render batches', () => {
    const kinds: FrontierEntry[] = [
      { url: urlOf('f1'), host: A, depth: 0 },
      { url: urlOf('r1'), host: A, depth: 0, render: true },
      { url: urlOf('f2'), host: A, depth: 0 },
      { url: urlOf('r2'), host: A, depth: 0, render: true },
    ];
    const backlog = async (store: FrontierStore) => (await store.snapshot(10)).hosts;

    it('each batch claims only its kind; snapshots count the render backlog', async () => {
      const store = await impl.fresh();
      try {
        await store.enqueue(kinds);
        assert.deepEqual(await backlog(store), [{ host: A, queued: 4, rendering: 2 }]);
        assert.deepEqual(urlsOf(await store.claim('fetch', A, 10)), [urlOf('f1'), urlOf('f2')]);
        assert.deepEqual(await backlog(store), [{ host: A, queued: 2, rendering: 2 }]);
        assert.deepEqual(urlsOf(await store.claim('render', A, 1, undefined, true)), [urlOf('r1')]);
        assert.deepEqual(urlsOf(await store.claim('render', A, 1, undefined, true)), [urlOf('r1')], 'a retried render batch resumes its own claims');
        assert.deepEqual(await backlog(store), [{ host: A, queued: 1, rendering: 1 }]);
        await store.release('render');
        assert.deepEqual(await backlog(store), [{ host: A, queued: 2, rendering: 2 }], 'released render URLs are render backlog again');
        await store.releaseAll();
        assert.deepEqual(await backlog(store), [{ host: A, queued: 4, rendering: 2 }]);
      } finally {
        await store.close();
      }
    });

    it('the per-host page cap counts fetched and rendered URLs together', async () => {
      const store = await impl.fresh();
      try {
        await store.enqueue(kinds);
        assert.equal((await store.claim('fetch', A, 10, 3)).filter((item) => item.skipped === undefined).length, 2);
        const rendered = await store.claim('render', A, 10, 3, true);
        assert.deepEqual(rendered.map((item) => item.skipped ?? 'take'), ['take', HOST_PAGE_CAP]);
      } finally {
        await store.close();
      }
    });

    it('a URL keeps its kind through a retried release, discovery by a completed page and abandon', async () => {
      const store = await impl.fresh();
      try {
        await store.enqueue(kinds);
        assert.equal((await store.claim('r', A, 2, undefined, true)).length, 2);
        assert.equal(await store.release('r', { url: urlOf('r2'), attempts: 1 }), 2);
        assert.deepEqual(await backlog(store), [{ host: A, queued: 4, rendering: 2 }]);
        assert.deepEqual(await store.claim('r2', A, 10, undefined, true), [
          { url: urlOf('r1'), depth: 0, attempts: 0, priority: 1 },
          { url: urlOf('r2'), depth: 0, attempts: 1, priority: 1 },
        ]);
        const found: FrontierEntry[] = [
          { url: urlOf('r3'), host: A, depth: 1, render: true },
          { url: urlOf('f3'), host: A, depth: 1 },
        ];
        assert.equal(await store.complete('r2', pageRecord(urlOf('r1')), found), 2);
        assert.deepEqual(await backlog(store), [{ host: A, queued: 4, rendering: 1 }], 'f1, f2, f3 to fetch and r3 to render');
        assert.equal(await store.abandon('r2', 'batch-failed', '2024-01-01T00:00:00.000Z'), 1);
        assert.deepEqual(await backlog(store), [{ host: A, queued: 4, rendering: 1 }], 'an abandoned URL leaves no backlog behind');
        assert.deepEqual(urlsOf(await store.claim('f', A, 10)), [urlOf('f1'), urlOf('f2'), urlOf('f3')]);
        assert.deepEqual(await backlog(store), [{ host: A, queued: 1, rendering: 1 }]);
        assert.deepEqual(urlsOf(await store.claim('r3', A, 10, undefined, true)), [urlOf('r3')]);
        assert.deepEqual(await backlog(store), []);
      } finally {
        await store.close();
      }
    });
  });
});
}

/**
 * Store files made by the releases themselves (test/fixtures/stores, written by
 * test/tools/make-release-stores.ts: each release checked out from git, built, and run as
 * `crawlflow demo`), next to the results the release exported from them. Their schema lacks
 * everything added since (the per-host count of the cap, URL kinds, content columns, pacing
 * state, robots errors, totals, configs): today's store must migrate them when it opens them
 * and read what the release wrote. Each test opens its own copy, since opening migrates.
 */
for (const { version } of RELEASES) {
  describe(`a SQLite store file made by release ${version}`, () => {
    const exported = readFileSync(join(FIXTURE_DIR, `v${version}.records.jsonl`), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Partial<PageRecord>);
    const host = new URL(exported[0].url!).host;
    /** A fresh copy of the release's file, and the raw value of a column of it before any migration. */
    const copy = (): string => {
      const file = tempStoreFile();
      mkdirSync(dirname(file), { recursive: true });
      copyFileSync(join(FIXTURE_DIR, `v${version}.sqlite`), file);
      return file;
    };
    const withCopy = async (test: (store: SqliteFrontierStore, file: string) => Promise<void>): Promise<void> => {
      const file = copy();
      const store = new SqliteFrontierStore(file);
      try {
        await test(store, file);
      } finally {
        await store.close();
      }
    };

    it('is the crawl the release exported: every page crawled, none failed', () => {
      assert.equal(exported[0].url, `${new URL(exported[0].url!).origin}/page/0`);
      assert.ok(exported.length >= 10, `${exported.length} records`);
      assert.ok(exported.every((record) => record.status === 200 && record.error === null && record.title !== null), 'a complete crawl');
    });

    it('opens and reads every record as the release exported it, new fields empty', async () => {
      await withCopy(async (store) => {
        const records = await readRecords(store);
        // The fields added since are empty, as an old row has them; the rest is what the release wrote.
        assert.deepEqual(records, exported.map((record) => ({ ...record, fields: {}, etag: null, lastModified: null, contentHash: null, change: null, bodyRef: null, payloadRecord: null })));
        for (const record of exported) assert.deepEqual(await store.record(record.url!), records.find((candidate) => candidate.url === record.url));
      });
    });

    it('totals, the view and the frontier come from what the release recorded', async () => {
      await withCopy(async (store) => {
        const bytes = exported.reduce((sum, record) => sum + (record.bytes ?? 0), 0);
        const done = { processed: exported.length, fetched: exported.length, errors: 0, skipped: 0, bytes };
        assert.deepEqual(await store.totals(), { ...done, queued: 0, discovered: exported.length, changes: NO_CHANGES });
        const view = await store.view(10);
        assert.deepEqual({ queued: view.queued, hosts: view.hosts, totals: view.totals }, { queued: 0, hosts: [], totals: done });
        assert.equal(await store.latestConfig(), undefined, 'the release recorded no config: its crawls carried it in their input');
      });
    });

    it('has a column for every record field once migrated', async () => {
      await withCopy(async (_store, file) => {
        const names = new Set(sqliteUrlsColumns(file).map((column) => column.name));
        assert.deepEqual(RECORD_FIELDS.filter((field) => !names.has(field.column)).map((field) => field.column), []);
      });
    });

    it("counts the release's pages toward the per-host cap", async () => {
      await withCopy(async (store) => {
        assert.equal(await store.enqueue([entry(`http://${host}/new/1`), entry(`http://${host}/new/2`)]), 2);
        const claimed = await store.claim('after-upgrade', host, 10, exported.length + 1);
        assert.deepEqual(
          claimed.map(({ url, skipped }) => [url, skipped ?? null]),
          [
            [`http://${host}/new/1`, null],
            [`http://${host}/new/2`, HOST_PAGE_CAP],
          ],
          'one page left under the cap after the release crawled the others',
        );
      });
    });

    it("keeps the release's request time and robots.txt for the host, with fresh pacing state", async () => {
      const file = copy();
      const raw = new Database(file, { readonly: true });
      const old = raw.prepare('SELECT next_request_at, robots_status, robots_body, robots_fetched_at FROM hosts WHERE host = ?').get(host) as {
        next_request_at: number;
        robots_status: number | null;
        robots_body: string | null;
        robots_fetched_at: number;
      };
      raw.close();
      const store = new SqliteFrontierStore(file);
      try {
        assert.deepEqual(await store.robots(host), { status: old.robots_status, body: old.robots_body ?? '', fetchedAt: old.robots_fetched_at, error: null });
        assert.deepEqual(await store.hostPacing(host), INITIAL_PACING);
        const before = old.next_request_at - 250;
        assert.deepEqual(await store.startRequest(host, 0, 60_000, () => before), { waitMs: 250 }, 'the next request time survived');
      } finally {
        await store.close();
      }
    });

    it('takes new records with the content fields the release did not have', async () => {
      await withCopy(async (store) => {
        const url = `http://${host}/new/content`;
        await store.enqueue([entry(url)]);
        await store.claim('after-upgrade', host, 1);
        const record = pageRecord(url, { etag: '"new"', fields: { f: 'v' } });
        assert.equal(await store.complete('after-upgrade', record, []), 0);
        assert.deepEqual(await store.record(url), record);
      });
    });
  });
}

describe('SQLite store files: the schema version is the file\'s user_version', () => {
  const userVersion = (file: string): number => {
    const raw = new Database(file, { readonly: true });
    try {
      return raw.pragma('user_version', { simple: true }) as number;
    } finally {
      raw.close();
    }
  };

  it('a new file is at the current version once opened', async () => {
    const file = tempStoreFile();
    await new SqliteFrontierStore(file).close();
    assert.equal(userVersion(file), SQLITE_SCHEMA_VERSION);
  });

  /** The definitions of a file's indexes, by name. */
  const indexesOf = (file: string): Record<string, string> => {
    const raw = new Database(file, { readonly: true });
    try {
      const rows = raw.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name").all() as Array<{ name: string; sql: string }>;
      return Object.fromEntries(rows.map(({ name, sql }) => [name, sql.replace(/\s+/g, ' ')]));
    } finally {
      raw.close();
    }
  };

  it('a file at version 1 gets the batch and claim indexes with the key, as a new file has them, and keeps its claims', async () => {
    const fresh = tempStoreFile();
    await new SqliteFrontierStore(fresh).close();
    const file = tempStoreFile();
    const store = new SqliteFrontierStore(file);
    await store.enqueue([entry('http://a.test/1'), entry('http://a.test/2')]);
    assert.equal((await store.claim('b1', 'a.test', 1)).length, 1);
    await store.close();
    const raw = new Database(file);
    raw.exec(`DROP INDEX urls_by_batch; DROP INDEX urls_claimed;
      CREATE INDEX urls_by_batch ON urls (batch_id) WHERE batch_id IS NOT NULL;
      CREATE INDEX urls_claimed ON urls (host) WHERE state = 1;
      PRAGMA user_version = 1;`);
    raw.close();
    const reopened = new SqliteFrontierStore(file);
    try {
      assert.equal(userVersion(file), SQLITE_SCHEMA_VERSION);
      assert.deepEqual(indexesOf(file), indexesOf(fresh));
      assert.match(indexesOf(file).urls_claimed, /\(host, batch_id\)/);
      // The claim is the batch's still: a retried attempt gets it back, and no other batch may take it.
      const query = { render: false, freeBy: Date.now() + 10_000, batchLimit: 1, maxPagesPerHost: 100, holdersOf: () => 1, maxHolders: 1 };
      assert.deepEqual((await reopened.claimReady('b1', query)).flatMap((ready) => ready.urls.map((claimed) => claimed.url)), ['http://a.test/1']);
      assert.deepEqual(await reopened.claimReady('b2', query), [], 'a.test has its one holder');
      assert.deepEqual((await reopened.claim('b2', 'a.test', 5)).map((claimed) => claimed.url), ['http://a.test/2']);
    } finally {
      await reopened.close();
    }
  });

  it("batches' rows carry short keys that every process of the file reads alike; a file at version 5 keeps its batches' whole IDs, so a batch running across the upgrade finds its claims", async () => {
    const batchIdsOf = (file: string): Array<{ url: string; batch_id: string | null }> => {
      const raw = new Database(file, { readonly: true });
      try {
        return raw.prepare('SELECT url, batch_id FROM urls ORDER BY id').all() as Array<{ url: string; batch_id: string | null }>;
      } finally {
        raw.close();
      }
    };
    const oldBatch = 'crawl-x/5f0c1e2a-0000-4000-8000-000000000001/1';
    const file = tempStoreFile();
    const store = new SqliteFrontierStore(file);
    await store.enqueue([urlA(0), urlA(1), urlA(2), urlA(3)].map((url) => entry(url)));
    assert.deepEqual(urlsOf(await store.claim(oldBatch, 'a.test', 1)), [urlA(0)]);
    await store.close();
    // As release 0.3.0 left it: no keys, the batch's whole ID in its row.
    const raw = new Database(file);
    raw.exec(`UPDATE urls SET batch_id = '${oldBatch}' WHERE batch_id IS NOT NULL; DROP TABLE batch_keys; PRAGMA user_version = 5;`);
    raw.close();

    const first = new SqliteFrontierStore(file);
    const second = new SqliteFrontierStore(file);
    try {
      assert.equal(userVersion(file), SQLITE_SCHEMA_VERSION);
      assert.deepEqual(urlsOf(await second.claim(oldBatch, 'a.test', 1)), [urlA(0)], 'the old batch, retried on another worker, gets its claim back');
      const newBatch = 'crawl-x/5f0c1e2a-0000-4000-8000-000000000001/2';
      assert.deepEqual(urlsOf(await first.claim(newBatch, 'a.test', 2)), [urlA(1), urlA(2)]);
      assert.deepEqual(urlsOf(await second.claim(newBatch, 'a.test', 2)), [urlA(1), urlA(2)], 'the other process reads the same key: the claims are the batch\'s own');
      // A worker of release 0.3.0 sharing the file claims under the batch's whole ID, and a newer one retries it.
      const older = new Database(file);
      older.prepare(`UPDATE urls SET state = ${CLAIMED}, batch_id = 'crawl-x/other-run/1' WHERE url = ?`).run(urlA(3));
      older.close();
      assert.deepEqual(urlsOf(await first.claim('crawl-x/other-run/1', 'a.test', 1)), [urlA(3)], 'its claim is found under the ID it carries');
      await second.complete(oldBatch, pageRecord(urlA(0)), []);
      await first.complete(newBatch, pageRecord(urlA(1)), []);
      assert.equal((await first.batchTotals(newBatch)).processed, 1);
      assert.equal((await second.batchTotals(oldBatch)).processed, 1);
      assert.equal((await first.batchTotals('crawl-x/never-ran/9')).processed, 0);
      assert.deepEqual(batchIdsOf(file), [
        { url: urlA(0), batch_id: oldBatch },
        { url: urlA(1), batch_id: '#2' },
        { url: urlA(2), batch_id: '#2' },
        { url: urlA(3), batch_id: 'crawl-x/other-run/1' },
      ]);
      assert.equal(await second.release(newBatch), 1, "the new batch's unfinished URL goes back");
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('a file at version 2, from before ends were recorded, gets the table with no end in it: its crawl reads as not ended', async () => {
    const file = tempStoreFile();
    const store = new SqliteFrontierStore(file);
    await store.enqueue([entry('http://a.test/1')]);
    await store.close();
    const raw = new Database(file);
    raw.exec('DROP TABLE crawl_end; PRAGMA user_version = 2;');
    raw.close();
    const reopened = new SqliteFrontierStore(file);
    try {
      assert.equal(userVersion(file), SQLITE_SCHEMA_VERSION);
      assert.equal(await reopened.crawlEnd(), undefined);
      await reopened.recordEnd({ status: 'cancelled', failure: null, endedAt: '2026-12-05T10:00:00.000Z' });
      assert.deepEqual(await reopened.crawlEnd(), { status: 'cancelled', failure: null, endedAt: '2026-12-05T10:00:00.000Z' });
    } finally {
      await reopened.close();
    }
  });

  it("a release's file, at version 0, is brought up to date once and opens again as it is", async () => {
    const file = tempStoreFile();
    mkdirSync(dirname(file), { recursive: true });
    copyFileSync(join(FIXTURE_DIR, `v${RELEASES[0].version}.sqlite`), file);
    assert.equal(userVersion(file), 0);
    const first = new SqliteFrontierStore(file);
    const totals = await first.totals();
    await first.close();
    assert.equal(userVersion(file), SQLITE_SCHEMA_VERSION);
    const again = new SqliteFrontierStore(file);
    try {
      assert.deepEqual(await again.totals(), totals);
      assert.ok(totals.processed > 0);
    } finally {
      await again.close();
    }
  });
});

describe('both stores keep every record field (src/store/record-fields.ts) in a column of urls', () => {
  it('a new SQLite file', async () => {
    const file = tempStoreFile();
    await new SqliteFrontierStore(file).close();
    assertRecordColumns(sqliteUrlsColumns(file), sqliteLiteral);
  });

  it('a PostgreSQL database migrated from empty', async () => {
    await sharedBackend!.open(nextCrawlId()).totals(); // the schema is set up on first use
    const client = new Client({ connectionString: postgres!.url });
    await client.connect();
    try {
      const { rows } = await client.query<UrlsColumn>(
        `SELECT column_name AS name, is_nullable = 'NO' AS "notNull", column_default AS default
         FROM information_schema.columns WHERE table_schema = 'crawlflow' AND table_name = 'urls'`,
      );
      assertRecordColumns(rows, String);
    } finally {
      await client.end();
    }
  });
});

for (const impl of IMPLEMENTATIONS) {
  if (!impl.twins || !impl.race) continue;
  const { twins, race } = impl;
  describe(`${impl.name}: two connections on one crawl (two worker processes or machines)`, () => {
    it('interleaved claims from two connections never overlap and see each other', async () => {
      const [one, two] = await twins();
      try {
        await one.enqueue(Array.from({ length: 20 }, (_, n) => entry(urlA(n))));
        assert.equal(await two.enqueue([entry(urlA(3)), entry(urlA(20))]), 1, 'the seen-set is shared');
        const claimedByOne = urlsOf(await one.claim('one', A, 5));
        const claimedByTwo = urlsOf(await two.claim('two', A, 5));
        assert.deepEqual(claimedByOne, [0, 1, 2, 3, 4].map(urlA));
        assert.deepEqual(claimedByTwo, [5, 6, 7, 8, 9].map(urlA));
        assert.equal(await two.complete('two', pageRecord(urlA(0)), [entry(urlA(30))]), 0, "two cannot complete one's URL");
        assert.equal(await one.complete('one', pageRecord(urlA(0)), [entry(urlA(31))]), 1);
        assert.deepEqual(urlsOf(await one.claim('one', A, 5)), [1, 2, 3, 4].map(urlA), 'resume from the other connection too');
        assert.deepEqual(urlsOf(await readRecords(two)), [urlA(0)]);
        assert.equal((await two.totals()).queued, 12, 'p/10..20 and p/31');
      } finally {
        await one.close();
        await two.close();
      }
    });

    it('two connections asking for the same host at the same moment: one request starts, the other waits the gap', async () => {
      const [one, two] = await twins();
      try {
        await one.enqueue([entry(urlA(0))]);
        const starts = await Promise.all([one.startRequest(A, 200, 1_000, () => 50_000), two.startRequest(A, 200, 1_000, () => 50_000)]);
        assert.deepEqual(
          starts.map((start) => JSON.stringify(start)).sort(),
          [JSON.stringify({ takenAt: 50_000 }), JSON.stringify({ waitMs: 200 })].sort(),
        );
        assert.deepEqual(await one.startRequest(A, 200, 1_000, () => 50_200), { takenAt: 50_200 }, 'after the gap, the host is free for either');
        assert.deepEqual(await two.startRequest(A, 200, 1_000, () => 50_300), { waitMs: 100 });
      } finally {
        await one.close();
        await two.close();
      }
    });

    const seed = (total: number) => Array.from({ length: total }, (_, n) => entry(urlA(n)));

    it('racing connections claim each URL exactly once', async () => {
      const total = 400;
      const { sides, check } = await race(seed(total));
      const [left, right] = sides.map((side) => side.fetched);
      const all = [...left, ...right];
      assert.equal(all.length, total, `left ${left.length} + right ${right.length}`);
      assert.equal(new Set(all).size, total, 'no URL claimed twice');
      assert.ok(left.length > 0 && right.length > 0, `both sides got work (${left.length}, ${right.length})`);
      try {
        const records = await readRecords(check);
        assert.equal(records.length, total);
        const leftSet = new Set(left);
        assert.ok(records.every((record) => record.title?.startsWith(leftSet.has(record.url) ? 'left' : 'right')), 'each record written by its claimer');
        assert.deepEqual(await check.totals(), { processed: total, fetched: total, errors: 0, skipped: 0, bytes: total, queued: 0, discovered: total, changes: NO_CHANGES });
      } finally {
        await check.close();
      }
    });

    it('racing connections never fetch more than maxPagesPerHost URLs of a host', async () => {
      const total = 400;
      const cap = 150;
      const { sides, check } = await race(seed(total), cap);
      const [left, right] = sides;
      const fetched = [...left.fetched, ...right.fetched];
      const skipped = [...left.skipped, ...right.skipped];
      assert.equal(fetched.length, cap, `left ${left.fetched.length} + right ${right.fetched.length}`);
      assert.equal(skipped.length, total - cap);
      assert.equal(new Set([...fetched, ...skipped]).size, total, 'every URL handed out exactly once');
      try {
        assert.deepEqual(await check.totals(), { processed: total, fetched: cap, errors: 0, skipped: total - cap, bytes: total, queued: 0, discovered: total, changes: NO_CHANGES });
      } finally {
        await check.close();
      }
    });
  });
}

/** A transaction statement as the store ran it, savepoint names left out: `BEGIN IMMEDIATE`, `SAVEPOINT`, `COMMIT`... */
type TransactionStatement = string;

/**
 * Runs `work` and lists the transaction statements every better-sqlite3 connection ran
 * meanwhile, by wrapping the statements' shared `run`.
 */
async function transactionStatements(work: () => Promise<unknown>): Promise<TransactionStatement[]> {
  const probe = new Database(':memory:');
  const statements = Object.getPrototypeOf(probe.prepare('SELECT 1')) as { run(this: Database.Statement, ...params: unknown[]): Database.RunResult };
  probe.close();
  const run = statements.run;
  const seen: TransactionStatement[] = [];
  statements.run = function (this: Database.Statement, ...params: unknown[]) {
    if (/^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/.test(this.source)) seen.push(this.source.replace(/ `.*`$/, ''));
    return run.apply(this, params);
  };
  try {
    await work();
  } finally {
    statements.run = run;
  }
  return seen;
}

describe('SQLite store: completions of concurrent batches commit together', () => {
  /** A file store with hosts A and B queued and batches one and two holding a URL of A each, three one of B. */
  async function threeBatches(): Promise<{ store: SqliteFrontierStore; file: string }> {
    const file = tempStoreFile();
    const store = new SqliteFrontierStore(file);
    await store.enqueue([entry(urlA(0)), entry(urlA(1)), entry(urlB(0))]);
    assert.deepEqual(urlsOf(await store.claim('one', A, 1)), [urlA(0)]);
    assert.deepEqual(urlsOf(await store.claim('two', A, 1)), [urlA(1)]);
    assert.deepEqual(urlsOf(await store.claim('three', B, 1)), [urlB(0)]);
    return { store, file };
  }
  const completeAll = (store: FrontierStore, discoveredByTwo: FrontierEntry[]) => [
    store.complete('one', pageRecord(urlA(0)), [entry(urlA(10), 1), entry(urlA(11), 1)]),
    store.complete('two', pageRecord(urlA(1)), discoveredByTwo),
    store.complete('three', pageRecord(urlB(0)), [entry(urlA(10), 1)]),
  ];

  it('completions of one turn share one IMMEDIATE transaction, with no savepoints while none fails, and each caller gets its own count', async () => {
    const { store, file } = await threeBatches();
    try {
      let added: number[] = [];
      const statements = await transactionStatements(async () => {
        added = await Promise.all(completeAll(store, [entry(urlA(0), 1), entry(urlB(1), 1)]));
      });
      assert.deepEqual(added, [2, 1, 0], 'two new for one; p/0 known to two; p/10 already added by one');
      assert.deepEqual(statements, ['BEGIN IMMEDIATE', 'COMMIT']);
      // Committed when the callers are told: another connection reads all three.
      const other = new SqliteFrontierStore(file);
      try {
        assert.deepEqual(urlsOf(await readRecords(other)), [urlA(0), urlA(1), urlB(0)]);
        assert.equal((await other.totals()).queued, 3, 'p/10, p/11 and b.test/p/1');
      } finally {
        await other.close();
      }
    } finally {
      await store.close();
    }
  });

  it('a completion that fails rolls back alone and rejects only its own caller: the group is written again, a savepoint each', async () => {
    const { store } = await threeBatches();
    try {
      // A depth the schema refuses, after the page's record and a good link are written.
      const refused = { ...entry(urlB(2), 1), depth: null as unknown as number };
      let settled: Array<PromiseSettledResult<number>> = [];
      const statements = await transactionStatements(async () => {
        settled = await Promise.allSettled(completeAll(store, [entry(urlB(1), 1), refused]));
      });
      const savepoint = ['SAVEPOINT', 'RELEASE'];
      assert.deepEqual(statements, ['BEGIN IMMEDIATE', 'ROLLBACK', 'BEGIN IMMEDIATE', ...savepoint, 'SAVEPOINT', 'ROLLBACK TO', 'RELEASE', ...savepoint, 'COMMIT']);
      assert.deepEqual(
        settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : (outcome.reason as { code: string }).code)),
        [2, 'SQLITE_CONSTRAINT_NOTNULL', 0],
      );
      assert.deepEqual(urlsOf(await readRecords(store)), [urlA(0), urlB(0)]);
      assert.deepEqual(await store.totals(), { processed: 2, fetched: 2, errors: 0, skipped: 0, bytes: 200, queued: 2, discovered: 5, changes: NO_CHANGES });
      assert.deepEqual(urlsOf(await store.claim('two', A, 1)), [urlA(1)], 'the failed page is still the batch\'s to finish');
      assert.equal(await store.complete('two', pageRecord(urlA(1)), [entry(urlB(1), 1)]), 1, 'and its retry commits');
    } finally {
      await store.close();
    }
  });

  it('a file locked by another connection rejects every queued completion with SQLITE_BUSY; a retry, or a patient store, gets through', async () => {
    const { store, file } = await threeBatches();
    const holder = new Database(file);
    try {
      holder.exec('BEGIN IMMEDIATE');
      const settled = await Promise.allSettled(completeAll(store, []));
      assert.deepEqual(
        settled.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as { code: string }).code : outcome.value)),
        ['SQLITE_BUSY', 'SQLITE_BUSY', 'SQLITE_BUSY'],
      );
      holder.exec('ROLLBACK');
      assert.deepEqual(await readRecords(store), [], 'nothing of the failed group was written');
      assert.deepEqual(await Promise.all(completeAll(store, [])), [2, 0, 0], 'the retry commits all three');

      assert.deepEqual(urlsOf(await store.claim('four', A, 1)), [urlA(10)]);
      holder.exec('BEGIN IMMEDIATE');
      const waits: boolean[] = [];
      const onWait = (): (() => void) => {
        waits.push(true);
        return () => waits.push(false);
      };
      const patient = patientStore(store, { patienceMs: 5_000, signal: new AbortController().signal, onWait });
      setTimeout(() => holder.exec('COMMIT'), 400);
      assert.equal(await patient.complete('four', pageRecord(urlA(10)), [entry(urlB(5), 1)]), 1);
      assert.deepEqual(waits, [true, false], 'it waited the lock out');
      assert.deepEqual(urlsOf(await readRecords(store)), [urlA(0), urlA(1), urlB(0), urlA(10)]);
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK');
      holder.close();
      await store.close();
    }
  });

  it("a patient call's wait for a locked file is counted on the worker's metrics while it lasts, and once", async () => {
    const file = tempStoreFile();
    const store = new SqliteFrontierStore(file);
    const holder = new Database(file);
    const metrics = new CrawlMetrics();
    const scraped = async (name: string): Promise<number> => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(await metrics.registry.metrics())?.[1]);
    try {
      holder.exec('BEGIN IMMEDIATE');
      const began = Date.now();
      const patient = patientStore(store, { patienceMs: 10_000, signal: new AbortController().signal, onWait: storeWaitMetrics(metrics) });
      const enqueued = patient.enqueue([entry(urlA(0))]);
      await waitFor(async () => (await scraped('crawler_store_waiting_calls')) === 1, 5_000, 'the call waiting for the store');
      await sleep(1_000);
      const duringWait = await scraped('crawler_store_wait_seconds_total');
      assert.ok(duringWait >= 0.9 && duringWait <= (Date.now() - began) / 1000, `a second into the wait, ${duringWait} s counted`);
      holder.exec('COMMIT');
      assert.equal(await enqueued, 1);
      const waited = (Date.now() - began) / 1000;
      const total = await scraped('crawler_store_wait_seconds_total');
      assert.ok(total > duringWait && total <= waited, `${total} s counted for a wait of at most ${waited} s`);
      assert.equal(await scraped('crawler_store_waiting_calls'), 0);
      await sleep(300);
      assert.equal(await scraped('crawler_store_wait_seconds_total'), total, 'nothing counted once the wait is over');
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK');
      holder.close();
      await store.close();
    }
  });

  it('close commits the completions still queued before it closes the file', async () => {
    const { store, file } = await threeBatches();
    const completions = completeAll(store, []);
    await store.close();
    assert.deepEqual(await Promise.all(completions), [2, 0, 0]);
    const reopened = new SqliteFrontierStore(file);
    try {
      assert.deepEqual(urlsOf(await readRecords(reopened)), [urlA(0), urlA(1), urlB(0)]);
    } finally {
      await reopened.close();
    }
  });
});

describe('SQLite store: URLs it knows to be seen are not written again', () => {
  it('a row taken away behind its back (urls rows are never deleted) is not re-added by this store, only by another', async () => {
    const file = tempStoreFile();
    const store = new SqliteFrontierStore(file);
    const other = new Database(file);
    try {
      assert.equal(await store.enqueue([entry(urlA(0)), entry(urlA(1)), entry(urlA(3))]), 3);
      await store.claim('batch', A, 2);
      assert.equal(await store.complete('batch', pageRecord(urlA(0)), [entry(urlA(2), 1)]), 1);
      other.prepare('DELETE FROM urls WHERE url IN (?, ?)').run(urlA(2), urlA(3));
      assert.equal(await store.enqueue([entry(urlA(3)), entry(urlA(2))]), 0, 'known: not sent');
      assert.equal(await store.complete('batch', pageRecord(urlA(1)), [entry(urlA(2), 1), entry(urlA(3), 1)]), 0, 'known: not sent');
      const fresh = new SqliteFrontierStore(file);
      try {
        assert.equal(await fresh.enqueue([entry(urlA(2)), entry(urlA(3))]), 2, 'a store that knows nothing sends them');
      } finally {
        await fresh.close();
      }
    } finally {
      other.close();
      await store.close();
    }
  });
});

/**
 * Undoes schema version n (the key), so a test can put a database back as an older version
 * left it. PostgreSQL databases have no release to take them from (the PostgreSQL store came
 * after 0.2.0), so their older schemas are made this way: the content columns (2); the URL kinds, render backlog and kind-keyed queue index (3);
 * the per-host pacing state (4); the stored bodies (7); the crawl's end (11).
 */
const SCHEMA_UNDO: Record<number, string> = {
  2: `ALTER TABLE crawlflow.urls ${CONTENT_COLUMNS.map((column) => `DROP COLUMN ${column}`).join(', ')}`,
  3: `ALTER TABLE crawlflow.urls DROP COLUMN render;
      ALTER TABLE crawlflow.hosts DROP COLUMN render_queued;
      CREATE INDEX urls_queue ON crawlflow.urls (crawl, host, id) WHERE state = 0;`,
  4: 'ALTER TABLE crawlflow.hosts DROP COLUMN error_streak, DROP COLUMN throttle_delay_ms',
  5: `ALTER TABLE crawlflow.crawls DROP COLUMN processed, DROP COLUMN fetched, DROP COLUMN errors, DROP COLUMN skipped, DROP COLUMN bytes,
        DROP COLUMN handover;
      DROP TABLE crawlflow.configs;`,
  6: 'ALTER TABLE crawlflow.hosts DROP COLUMN robots_error',
  7: `ALTER TABLE crawlflow.urls DROP COLUMN priority;
      CREATE INDEX urls_queue_by_kind ON crawlflow.urls (crawl, host, render, id) WHERE state = 0;`,
  8: 'DROP TABLE crawlflow.bodies',
  9: 'DROP TABLE crawlflow.seed_scope',
  10: `DROP TABLE crawlflow.crawl_shards;
      DROP INDEX crawlflow.urls_claimed;
      ALTER TABLE crawlflow.hosts DROP COLUMN shard;`,
  11: 'ALTER TABLE crawlflow.crawls DROP COLUMN end_status, DROP COLUMN failure_code, DROP COLUMN failure_message, DROP COLUMN ended_at',
  12: 'ALTER TABLE crawlflow.urls DROP COLUMN payload_record',
  13: 'DROP INDEX crawlflow.hosts_fresh_backlog',
};

/** Takes the database at `url` back to schema `version`, newest change first. */
async function rollBackSchema(url: string, version: number): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ version: number }>('SELECT version FROM crawlflow.migrations WHERE version > $1 ORDER BY version DESC', [version]);
    for (const row of rows) {
      const undo = SCHEMA_UNDO[row.version];
      assert.ok(undo, `no undo for schema version ${row.version}: add it to SCHEMA_UNDO`);
      await client.query(undo);
    }
    await client.query('DELETE FROM crawlflow.migrations WHERE version > $1', [version]);
  } finally {
    await client.end();
  }
}

/**
 * The PostgreSQL database the last 0.2.0 on main left after its demo crawl (a `pg_dump` made by
 * test/tools/make-release-stores.ts), restored with psql: today's store migrates it on first
 * use and reads what that release wrote, with its totals counted from the rows.
 */
describe('a PostgreSQL database made by the last 0.2.0', () => {
  const exported = readFileSync(join(FIXTURE_DIR, 'v0.2.0-final.postgres.records.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Partial<PageRecord>);

  it('is migrated to the current schema and reads every record as the release exported it', async () => {
    const url = await postgres!.createDatabase('release_0_2_0_final');
    execFileSync(postgresBinary('psql'), ['-q', '-v', 'ON_ERROR_STOP=1', '-f', POSTGRES_DUMP, url], { stdio: ['ignore', 'ignore', 'inherit'] });
    const before = new Client({ connectionString: url });
    await before.connect();
    const { rows } = await before.query<{ version: number }>('SELECT max(version) AS version FROM crawlflow.migrations');
    await before.end();
    assert.equal(rows[0].version, 4, 'the release left schema version 4');

    const store = await (await postgresBackend(url)).openExisting('release-0.2.0-final');
    // That release already wrote every record field there is: the records read back are its export.
    assert.deepEqual(await readRecords(store), exported.map((record) => ({ ...record, payloadRecord: null })), 'every field it wrote, and the payload record it did not name');
    const bytes = exported.reduce((sum, record) => sum + (record.bytes ?? 0), 0);
    assert.deepEqual((await store.view(10)).totals, { processed: exported.length, fetched: exported.length, errors: 0, skipped: 0, bytes }, 'running totals counted from its rows');
    const check = new Client({ connectionString: url });
    await check.connect();
    const migrated = await check.query<{ version: number }>('SELECT max(version) AS version FROM crawlflow.migrations');
    await check.end();
    assert.equal(migrated.rows[0].version, SCHEMA_VERSION);
  });
});

describe('PostgreSQL: one database for many crawls and machines', () => {
  it('crawls sharing the database are isolated: same URLs, separate seen-sets, queues and records', async () => {
    const one = sharedBackend!.open(nextCrawlId());
    const two = sharedBackend!.open(nextCrawlId());
    assert.equal(await one.enqueue([entry(urlA(0)), entry(urlA(1))]), 2);
    assert.equal(await two.enqueue([entry(urlA(0))]), 1, 'a URL seen by another crawl is new here');
    await one.claim('same-batch-id', A, 10);
    assert.deepEqual(urlsOf(await two.claim('same-batch-id', A, 10)), [urlA(0)], 'batch ids are per crawl');
    await two.complete('same-batch-id', pageRecord(urlA(0), { title: 'two' }), []);
    assert.deepEqual(await readRecords(one), []);
    assert.deepEqual((await readRecords(two)).map((record) => record.title), ['two']);
    assert.equal((await one.totals()).discovered, 2);
  });

  /**
   * Read committed: a statement that waits for a row lock gets the row's newest version, but
   * reads every other table as of its start. Counted in the locking statement, the holders
   * missed the batch whose claim it had waited for, and a third batch took a host limited to two
   * (politeness.test.ts, CI at 18:21Z on Dec 4).
   */
  it("a claim that waited for another batch's claim of the host counts that batch as a holder", async () => {
    const crawlId = nextCrawlId();
    const store = sharedBackend!.open(crawlId);
    await store.enqueue([0, 1, 2].map((n) => entry(urlA(n))));
    const [other, watcher] = [new Client({ connectionString: postgres!.url }), new Client({ connectionString: postgres!.url })];
    await Promise.all([other.connect(), watcher.connect()]);
    try {
      const { rows } = await other.query<{ id: number }>('SELECT id FROM crawlflow.crawls WHERE name = $1', [crawlId]);
      // Another worker's claim, inside its transaction: the host's row locked, a URL taken.
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM crawlflow.hosts WHERE crawl = $1 AND host = $2 FOR UPDATE', [rows[0].id, A]);
      await other.query(`UPDATE crawlflow.urls SET state = ${CLAIMED}, batch_id = 'first' WHERE crawl = $1 AND url = $2`, [rows[0].id, urlA(0)]);
      const second = store.claim('second', A, 1, undefined, false, { holders: 1 });
      const waiting = async () => (await watcher.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")).rowCount === 1;
      await waitFor(waiting, 5_000, "the second claim waiting for the host's row");
      await other.query('COMMIT');
      assert.deepEqual(await second, [], 'the host allows one holder, and the first batch is it');
    } finally {
      await Promise.all([other.end(), watcher.end()]);
    }
  });

  it('records() pages through more than one page of rows in discovery order', async () => {
    const store = sharedBackend!.open(nextCrawlId());
    const total = 2_345;
    await store.enqueue(Array.from({ length: total }, (_, n) => entry(urlA(n))));
    const claimed = await store.claim('all', A, total);
    for (const item of claimed.reverse()) await store.complete('all', pageRecord(item.url), []);
    const urls = urlsOf(await readRecords(store));
    assert.equal(urls.length, total);
    assert.deepEqual(urls, Array.from({ length: total }, (_, n) => urlA(n)));
  });

  it('URLs longer than an index entry may be are deduplicated too', async () => {
    const store = sharedBackend!.open(nextCrawlId());
    const long = (n: number) => `http://a.test/${'x'.repeat(60_000)}?n=${n}`;
    assert.equal(await store.enqueue([entry(long(1)), entry(long(2)), entry(long(1))]), 2);
    assert.equal(await store.enqueue([entry(long(2))]), 0);
  });

  it('stored bodies are rows every machine reads; rows no record can name any more are discarded', async () => {
    const crawlId = nextCrawlId();
    const [fetcher, exporter] = [await postgresBackend(), await postgresBackend()];
    const store = fetcher.open(crawlId);
    await store.enqueue([entry(urlA(0)), entry(urlA(1)), entry(urlA(2))]);
    await store.claim('dead', A, 1);
    const dead = await fetcher.bodies.writer(crawlId, 'dead', 1).append(Buffer.from('never committed'));
    await store.release('dead');
    await store.claim('live', A, 2);
    const live = fetcher.bodies.writer(crawlId, 'live', 1);
    const committed = await live.append(Buffer.from('committed'));
    await store.complete('live', pageRecord(urlA(0), { bodyRef: committed }), []);
    const inFlight = await live.append(Buffer.from('not yet committed'));
    assert.match(committed, /^db:\d+$/);
    assert.deepEqual(await exporter.bodies.read(crawlId, committed), Buffer.from('committed'), 'another machine reads it');
    assert.equal(await exporter.bodies.discardUnreferenced!(crawlId), 1, 'only the released batch\'s row goes');
    assert.deepEqual(await exporter.bodies.read(crawlId, inFlight), Buffer.from('not yet committed'), 'a batch holding claims may still commit its rows');
    for (const bad of [dead, 'db:999999', 'db:x', '']) {
      await assert.rejects(exporter.bodies.read(crawlId, bad), (err: Error & { code?: string }) => err.code === 'bad-body-ref', bad);
    }
    await assert.rejects(exporter.bodies.read(nextCrawlId(), committed), (err: Error & { code?: string }) => err.code === 'bad-body-ref', 'per crawl');
  });

  it('workers starting at once on an empty database create the schema once', async () => {
    const url = await postgres!.createDatabase('crawlflow_fresh');
    const starting = await Promise.all(Array.from({ length: 4 }, () => postgresBackend(url)));
    await Promise.all(starting.map((backend) => backend.check()));
    const crawlId = nextCrawlId();
    await Promise.all(starting.map((backend, n) => backend.open(crawlId).enqueue([entry(urlA(n)), entry(urlA(99))])));
    assert.equal((await starting[0].open(crawlId).totals()).discovered, 5, 'one crawl, registered once, one seen-set');
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT version FROM crawlflow.migrations ORDER BY version');
      assert.deepEqual(rows, Array.from({ length: SCHEMA_VERSION }, (_, n) => ({ version: n + 1 })), 'each migration applied once');
    } finally {
      await client.end();
    }
  });

  it('a database from before the content columns is migrated by the next worker to start', async () => {
    const url = await postgres!.createDatabase('crawlflow_old');
    const crawlId = nextCrawlId();
    const old = (await postgresBackend(url)).open(crawlId);
    await old.enqueue([entry(urlA(0)), entry(urlA(1))]);
    await old.claim('b1', A, 2);
    await old.complete('b1', pageRecord(urlA(0)), []);
    await rollBackSchema(url, 1);
    const reopened = (await postgresBackend(url)).open(crawlId);
    assert.deepEqual(await reopened.record(urlA(0)), pageRecord(urlA(0)), 'old rows read with empty content fields');
    assert.equal(await reopened.complete('b1', pageRecord(urlA(1), { etag: '"new"', fields: { f: 'v' } }), []), 0);
    assert.deepEqual(await reopened.record(urlA(1)), pageRecord(urlA(1), { etag: '"new"', fields: { f: 'v' } }));
  });

  it('a database from before rendering is migrated by the next worker to start, every URL in it to be fetched', async () => {
    const url = await postgres!.createDatabase('crawlflow_before_render');
    const crawlId = nextCrawlId();
    const old = (await postgresBackend(url)).open(crawlId);
    await old.enqueue([0, 1, 2].map((n) => entry(urlA(n))));
    await old.claim('b1', A, 1);
    await rollBackSchema(url, 2);
    const reopened = (await postgresBackend(url)).open(crawlId);
    assert.deepEqual((await reopened.snapshot(10)).hosts, [{ host: A, queued: 2 }]);
    assert.equal(await reopened.release('b1'), 1);
    assert.deepEqual(urlsOf(await reopened.claim('b2', A, 10, undefined, true)), [], 'nothing old is to render');
    assert.deepEqual(urlsOf(await reopened.claim('b2', A, 10)), [0, 1, 2].map(urlA));
    await reopened.enqueue([{ ...entry(urlA(3)), render: true }]);
    assert.deepEqual((await reopened.snapshot(10)).hosts, [{ host: A, queued: 1, rendering: 1 }]);
    assert.deepEqual(urlsOf(await reopened.claim('b3', A, 10, undefined, true)), [urlA(3)]);
  });

  it('a database from before ends were recorded is migrated by the next worker to start, its crawls with no end', async () => {
    const url = await postgres!.createDatabase('crawlflow_before_ends');
    const crawlId = nextCrawlId();
    await (await postgresBackend(url)).open(crawlId).enqueue([entry(urlA(0))]);
    await rollBackSchema(url, 10);
    const reopened = (await postgresBackend(url)).open(crawlId);
    assert.equal(await reopened.crawlEnd(), undefined);
    await reopened.recordEnd({ status: 'max-pages-reached', failure: null, endedAt: '2026-12-05T10:00:00.000Z' });
    assert.deepEqual(await reopened.crawlEnd(), { status: 'max-pages-reached', failure: null, endedAt: '2026-12-05T10:00:00.000Z' });
    const other = (await postgresBackend(url)).open(nextCrawlId());
    await other.enqueue([entry(urlA(0))]);
    assert.equal(await other.crawlEnd(), undefined, "another crawl of the database has an end of its own");
    await other.recordEnd({ status: 'completed', failure: null, endedAt: '2026-12-05T11:00:00.000Z' });
    await other.clearEnd();
    assert.deepEqual(await reopened.crawlEnd(), { status: 'max-pages-reached', failure: null, endedAt: '2026-12-05T10:00:00.000Z' }, "clearing another crawl's end leaves this one's");
  });

  it('results of an unknown crawl are a clear error, and reading never registers it', async () => {
    await assert.rejects(sharedBackend!.openExisting('never-ran'), (err: Error) => err instanceof UnknownCrawlError && /never-ran/.test(err.message));
    await assert.rejects(sharedBackend!.openExisting('never-ran'), UnknownCrawlError);
    const crawlId = nextCrawlId();
    await sharedBackend!.open(crawlId).enqueue([entry(urlA(0))]);
    assert.equal((await (await sharedBackend!.openExisting(crawlId)).totals()).discovered, 1);
  });

  it('an unreachable database fails at startup with the URL, password redacted', async () => {
    const port = await freeServerPort();
    const backend = await postgresBackend(`postgres://crawlflow:${PASSWORD}@127.0.0.1:${port}/crawlflow`);
    await assert.rejects(backend.check(), (err: Error) => {
      assert.ok(err instanceof StoreUnavailableError, String(err));
      assert.match(err.message, new RegExp(`postgres://crawlflow:redacted@127\\.0\\.0\\.1:${port}/crawlflow`));
      assert.ok(!err.message.includes(PASSWORD), err.message);
      return true;
    });
  });

  it('a server that accepts connections but never answers fails a statement as an outage once the connect timeout has passed', async () => {
    // A frozen database server: the kernel completes the TCP handshake, nothing is ever said.
    const accepted = new Set<Socket>();
    const silent = createServer((socket) => void accepted.add(socket)).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const db = new PostgresDatabase(`postgres://crawlflow@127.0.0.1:${(silent.address() as AddressInfo).port}/crawlflow`, 'test', 2);
    try {
      const startedAt = Date.now();
      const answer = await Promise.race([
        db.query('SELECT 1', []).then(() => 'answered', (err: Error) => err),
        sleep(CONNECT_TIMEOUT_MS + 10_000).then(() => 'still waiting'),
      ]);
      const seconds = (Date.now() - startedAt) / 1000;
      assert.ok(answer instanceof Error, `the statement failed: ${String(answer)} after ${seconds.toFixed(1)} s`);
      assert.ok(answer instanceof StoreUnavailableError, String(answer));
      assert.equal(answer.message, `frontier store test: no answer within ${CONNECT_TIMEOUT_MS / 1000} s of connecting (timeout expired)`);
      assert.ok(seconds >= CONNECT_TIMEOUT_MS / 1000 - 0.5, `failed ${seconds.toFixed(1)} s after the attempt began, by the connect timeout`);
    } finally {
      for (const socket of accepted) socket.destroy();
      silent.close();
      await db.close();
    }
  });

  it('a server that stops answering on open connections fails a statement, and a transaction without a wait for its rollback, as an outage once the statement bound has passed; the pool answers again after', async () => {
    // A frozen server, or a network that drops its packets: the connections stay open, nothing comes back.
    const proxy = await startFreezingProxy(Number(new URL(postgres!.url).port));
    const db = new PostgresDatabase(`postgres://crawlflow@127.0.0.1:${proxy.port}/crawlflow`, 'test', 2);
    try {
      // Two statements at once leave two open connections in the pool, one for each call below.
      await Promise.all([db.query('SELECT pg_sleep(0.1)', []), db.query('SELECT pg_sleep(0.1)', [])]);
      proxy.freeze();
      const startedAt = Date.now();
      const secondsToFail = async (call: Promise<unknown>) => {
        const answer = await Promise.race([call.then(() => 'answered while frozen', (err: Error) => err), sleep(STATEMENT_ANSWER_TIMEOUT_MS + 30_000).then(() => 'still waiting')]);
        assert.ok(answer instanceof StoreUnavailableError, String(answer));
        assert.equal(answer.message, `frontier store test: no answer to a statement within ${STATEMENT_ANSWER_TIMEOUT_MS / 1000} s`);
        return (Date.now() - startedAt) / 1000;
      };
      const [statement, transaction] = await Promise.all([secondsToFail(db.query('SELECT 1', [])), secondsToFail(db.transaction((client) => client.query('SELECT 1')))]);
      const bound = STATEMENT_ANSWER_TIMEOUT_MS / 1000;
      for (const seconds of [statement, transaction]) assert.ok(seconds >= bound - 0.5 && seconds < bound + 5, `failed ${seconds.toFixed(1)} s after the freeze, by the statement bound (${bound} s)`);
      proxy.thaw();
      assert.deepEqual((await db.query<{ n: number }>('SELECT 2 AS n', [])).rows, [{ n: 2 }], 'a new connection answers once the server does');
    } finally {
      proxy.thaw();
      await db.close();
      await proxy.close();
    }
  });

  it('a connection the server ends between two queries of a transaction fails that transaction as an outage, and the process lives', async () => {
    const db = new PostgresDatabase(postgres!.url, 'test', 2);
    const admin = new Client({ connectionString: postgres!.url });
    await admin.connect();
    try {
      const failed = db.transaction(async (client) => {
        const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        // What a server shutdown does to each backend: FATAL 57P01, while this client has no query running.
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
        const gone = async () => (await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [rows[0].pid])).rowCount === 0;
        await waitFor(gone, 5_000, 'the terminated backend gone');
        // The backend sent its FATAL before it exited: give this process a turn to read it.
        await sleep(100);
        return client.query('SELECT 1');
      });
      await assert.rejects(failed, (err: Error) => storeOutage(err) !== undefined);
      assert.deepEqual((await db.query<{ one: number }>('SELECT 1 AS one', [])).rows, [{ one: 1 }], 'the next statement gets a new connection');
    } finally {
      await admin.end();
      await db.close();
    }
  });
});

describe('store URL configuration', () => {
  it('no URL means SQLite files under the data dir', () => {
    assert.deepEqual(storeLocation({ dataDir: '/d' }), { kind: 'sqlite', dataDir: '/d' });
    assert.deepEqual(storeLocation({ dataDir: '/d', storeUrl: ' ' }), { kind: 'sqlite', dataDir: '/d' });
  });

  it('a postgres URL is accepted with its pool size, and described without its password', () => {
    assert.deepEqual(storeLocation({ dataDir: '/d', storeUrl: 'postgresql://u:pw@db.internal:5433/crawls?pool_max=25&sslmode=require' }), {
      kind: 'postgres',
      url: 'postgresql://u:pw@db.internal:5433/crawls?sslmode=require',
      redacted: 'postgresql://u:redacted@db.internal:5433/crawls?sslmode=require',
      poolMax: 25,
    });
    assert.equal(redactStoreUrl('postgres://u@h/db?password=hunter2'), 'postgres://u@h/db?password=redacted');
  });

  for (const [storeUrl, why] of [
    ['not a url', /not a URL/],
    ['mysql://u:topsecret@h/db', /unsupported scheme "mysql:"/],
    ['postgres://u:topsecret@h', /no database name/],
    ['postgres://u:topsecret@h/db?pool_max=0', /pool_max must be an integer/],
  ] as const) {
    it(`rejects ${storeUrl.replace('topsecret', '***')} naming the flag, never echoing a password`, () => {
      assert.throws(
        () => storeLocation({ dataDir: '/d', storeUrl }),
        (err: Error) => err instanceof StoreUrlError && err.code === 'invalid-store-url' && why.test(err.message) && err.message.includes('--store') && !err.message.includes('topsecret'),
      );
    });
  }
});
