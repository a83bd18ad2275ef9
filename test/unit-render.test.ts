/**
 * Rendering's pure policies and its store semantics: render.match patterns, the
 * render config's validation, which requests a rendered page may make, how the workflow
 * splits a host's backlog into fetch and render lanes, and a SQLite store file from before
 * rendering. Claims by kind are in the store contract suite (unit-store), run against every store.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { markRendered, renderMatcher } from '../src/policy/render-routing';
import { InvalidCrawlConfigError, parseCrawlConfig } from '../src/shared/crawl-config';
import { DEFAULT_RENDER_TASK_QUEUE } from '../src/shared/names';
import { judgeSubrequest, type Subrequest } from '../src/render/request-policy';
import { backlogLanes } from '../src/scheduling/lanes';
import { SqliteFrontierStore } from '../src/store/sqlite-store';
import type { FrontierEntry } from '../src/store/frontier-store';

const tempDirs: string[] = [];
after(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe('render.match patterns (the include/exclude syntax, see unit-discovery)', () => {
  const matcherOf = (match: string[]) => renderMatcher(parseCrawlConfig({ seeds: ['http://127.0.0.1:9/'], render: { match } }));

  it('a path glob, a whole-URL glob and a re: regex each select the URLs they match', () => {
    const matches = matcherOf(['/app/**', 'https://example.com/spa/*', 're:[?&]view=js']);
    assert.ok(matches);
    assert.equal(matches('http://127.0.0.1:8080/app/item/1'), true);
    assert.equal(matches('http://127.0.0.1:8080/apps/1'), false);
    assert.equal(matches('https://example.com/spa/page'), true);
    assert.equal(matches('https://example.com/spa/a/b'), false, '* stays within a segment');
    assert.equal(matches('http://x.test/list?view=js'), true);
    assert.equal(matches('http://x.test/list?view=html'), false);
  });
});

describe('render config', () => {
  const seeds = ['http://127.0.0.1:9/'];
  const failure = (input: unknown): InvalidCrawlConfigError => {
    try {
      parseCrawlConfig(input);
    } catch (err) {
      assert.ok(err instanceof InvalidCrawlConfigError);
      return err;
    }
    assert.fail('accepted');
  };

  it('is off by default and gets defaults when set', () => {
    assert.equal(parseCrawlConfig({ seeds }).render, undefined);
    assert.deepEqual(parseCrawlConfig({ seeds, render: { match: ['/**'] } }).render, {
      match: ['/**'],
      waitUntil: 'load',
      timeoutMs: 30_000,
      taskQueue: DEFAULT_RENDER_TASK_QUEUE,
      maxConcurrentPages: 2,
      maxRequestsPerPage: 100,
    });
  });

  it('names the field of every problem', () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ match: [] }, 'render.match', /at least one URL pattern/],
      [{}, 'render.match', /at least one URL pattern/],
      [{ match: ['re:('] }, 'render.match.0', /invalid regular expression/],
      [{ match: ['/**'], waitUntil: 'idle' }, 'render.waitUntil', /./],
      [{ match: ['/**'], timeoutMs: 10 }, 'render.timeoutMs', /./],
      [{ match: ['/**'], maxConcurrentPages: 0 }, 'render.maxConcurrentPages', /./],
      [{ match: ['/**'], taskQueue: '' }, 'render.taskQueue', /./],
      [{ match: ['/**'], mach: 1 }, 'render.mach', /unknown field/],
    ];
    for (const [render, field, reason] of cases) {
      const err = failure({ seeds, render });
      assert.equal(err.field, field, JSON.stringify(render));
      assert.match(err.reason, reason);
    }
  });

  it('marks the entries render.match selects, and nothing when the crawl does not render', () => {
    const entries: FrontierEntry[] = [
      { url: 'http://x.test/app/1', host: 'x.test', depth: 1 },
      { url: 'http://x.test/plain', host: 'x.test', depth: 1 },
    ];
    const config = parseCrawlConfig({ seeds, render: { match: ['/app/**'] } });
    assert.deepEqual(markRendered(entries, renderMatcher(config)), [{ ...entries[0], render: true }, entries[1]]);
    assert.equal(markRendered(entries, renderMatcher(parseCrawlConfig({ seeds }))), entries);
  });
});

describe('requests of a rendered page', () => {
  const rule = { inScope: (url: URL) => url.host === 'site.test', maxRequests: 2 };
  const request = (overrides: Partial<Subrequest>): Subrequest => ({ url: 'http://site.test/app.js', method: 'GET', resourceType: 'script', topNavigation: false, ...overrides });

  it('allows in-scope GETs of scripts, XHR/fetch and frames, within the per-page budget', () => {
    for (const resourceType of ['script', 'xhr', 'fetch', 'document']) assert.deepEqual(judgeSubrequest(request({ resourceType }), 0, rule), { allow: true });
    assert.deepEqual(judgeSubrequest(request({}), 2, rule), { allow: false, reason: 'too-many-requests' });
  });

  it('refuses everything else, off-site first', () => {
    const cases: Array<[Partial<Subrequest>, string]> = [
      [{ url: 'http://offsite.test/evil.js' }, 'out-of-scope'],
      [{ url: 'http://203.0.113.7/pixel.png', resourceType: 'image' }, 'out-of-scope'],
      [{ url: 'ftp://site.test/x' }, 'scheme'],
      [{ url: 'not a url' }, 'scheme'],
      [{ method: 'POST', resourceType: 'fetch' }, 'method'],
      [{ resourceType: 'image' }, 'resource-type'],
      [{ resourceType: 'stylesheet' }, 'resource-type'],
      [{ resourceType: 'ping' }, 'resource-type'],
      [{ resourceType: 'document', topNavigation: true }, 'navigation'],
    ];
    for (const [overrides, reason] of cases) assert.deepEqual(judgeSubrequest(request(overrides), 0, rule), { allow: false, reason }, JSON.stringify(overrides));
  });
});

describe('backlog lanes', () => {
  const hosts = [
    { host: 'a.test', queued: 5, rendering: 2 },
    { host: 'b.test', queued: 3 },
  ];

  it('without rendering: one lane per host, the snapshot as it is', () => {
    assert.deepEqual(backlogLanes(hosts, false), [
      { host: 'a.test', key: 'a.test', queued: 5, render: false },
      { host: 'b.test', key: 'b.test', queued: 3, render: false },
    ]);
  });

  it('with rendering: each host has a fetch lane and a render lane', () => {
    assert.deepEqual(backlogLanes(hosts, true), [
      { host: 'a.test', key: 'a.test', queued: 3, render: false },
      { host: 'a.test', key: 'a.test render', queued: 2, render: true },
      { host: 'b.test', key: 'b.test', queued: 3, render: false },
      { host: 'b.test', key: 'b.test render', queued: 0, render: true },
    ]);
  });
});

describe('SqliteFrontierStore: a file from before rendering', () => {
  const A = 'a.test';
  const url = (path: string): string => `http://${A}/${path}`;
  const entries: FrontierEntry[] = [1, 2, 3, 4].map((n) => ({ url: url(`f${n}`), host: A, depth: 0 }));
  const storeFile = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlflow-unit-render-'));
    tempDirs.push(dir);
    return join(dir, 'crawl.sqlite');
  };

  it('a store file from before rendering opens with every URL queued to be fetched', async () => {
    const file = storeFile();
    const old = new SqliteFrontierStore(file);
    await old.enqueue(entries);
    await old.close();
    const db = new Database(file);
    // Such a file is from before the schema numbering too.
    db.exec('DROP INDEX urls_queue; ALTER TABLE urls DROP COLUMN render; ALTER TABLE hosts DROP COLUMN render_queued; PRAGMA user_version = 0');
    db.close();

    const store = new SqliteFrontierStore(file);
    try {
      assert.deepEqual((await store.snapshot(10)).hosts, [{ host: A, queued: 4 }]);
      assert.equal((await store.claim('fetch', A, 10)).length, 4);
      await store.enqueue([{ url: url('r3'), host: A, depth: 1, render: true }]);
      assert.deepEqual((await store.snapshot(10)).hosts, [{ host: A, queued: 1, rendering: 1 }]);
    } finally {
      await store.close();
    }
  });
});
