/**
 * The terminal progress bar of `crawlflow crawl` (src/cli/progress.ts), drawn from the
 * workflow's progress query: what it shows as the frontier grows between polls. And the
 * lines `crawlflow status` prints of a running crawl (src/cli/crawl-report.ts) from the same
 * queries.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { followProgress } from '../src/cli/progress';
import { statusLines } from '../src/cli/crawl-report';
import type { CrawlProgress, KeyGap } from '../src/shared/crawl-types';

/** A terminal that keeps what is written to it. */
function capturingTerminal(): { stream: NodeJS.WritableStream; text(): string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  Object.assign(stream, { isTTY: true, columns: 200 });
  return { stream, text: () => chunks.join('') };
}

const progressOf = (processed: number, queued: number) => ({ crawlId: 'c1', status: 'running', processed, queued, errors: 0 }) as CrawlProgress;

describe('progress bar: done against total', () => {
  it('never shows more pages done than its total when the frontier grows between polls', async () => {
    const polls = [progressOf(100, 900), progressOf(1_500, 3_000), progressOf(4_000, 2_000)];
    let poll = 0;
    const handle = { query: async () => polls[Math.min(poll++, polls.length - 1)] } as unknown as Parameters<typeof followProgress>[0];
    const terminal = capturingTerminal();
    const progress = followProgress(handle, 5_000, terminal.stream);
    await sleep(1_700);
    progress.stop();
    const drawn = [...terminal.text().matchAll(/\] (\d+)\/(\d+) \|/g)].map((match) => [Number(match[1]), Number(match[2])]);
    assert.ok(poll >= 3, `three polls at least, got ${poll}`);
    assert.deepEqual(drawn.at(0), [100, 1_000], 'the first poll: 100 done of 100 + 900');
    assert.deepEqual(drawn.at(-1), [4_000, 5_000], 'the total capped at maxPages');
    assert.ok(drawn.some(([done, total]) => done === 1_500 && total === 4_500), 'the second poll: 1,500 done of 1,500 + 3,000');
    for (const [done, total] of drawn) assert.ok(done <= total, `drawn ${done}/${total}`);
  });
});

describe('status of a running crawl', () => {
  it('says until when the crawl holds a host of its largest backlogs (Retry-After, a long Crawl-delay)', () => {
    const startedAt = Date.now() - 60_000;
    const heldUntil = Date.parse('2026-12-05T06:35:27.948Z');
    const progress: CrawlProgress = {
      crawlId: 'held',
      status: 'running',
      processed: 1,
      fetched: 1,
      errors: 0,
      skipped: 0,
      bytes: 2_000,
      queued: 12,
      batchesInFlight: 0,
      batchesCompleted: 3,
      hostsInFlight: [],
      startedAt,
      run: 1,
      storeWait: null,
      failures: [],
    };
    const hosts = [
      { host: 'slow.test', queued: 9, batchesInFlight: 0, readyAt: heldUntil, holdReason: 'HTTP 503 with Retry-After 120 s' },
      { host: 'fine.test', queued: 3, batchesInFlight: 0, readyAt: null, holdReason: null },
    ];
    const linesOf = (shown: CrawlProgress, gaps: KeyGap[] = []) =>
      statusLines({
        crawlId: 'held',
        workflowStatus: 'RUNNING',
        outcome: 'running',
        startedAt,
        finishedAt: null,
        totals: null,
        failure: null,
        failedBatches: [],
        progress: shown,
        frontier: { queued: 12, snapshotVersion: 4, hosts },
        gaps,
        uiUrl: null,
      });
    assert.deepEqual(linesOf(progress).slice(2), ['  12 queued, 0 batches in flight', '  largest backlogs: slow.test (9, held until 2026-12-05T06:35:27.948Z: HTTP 503 with Retry-After 120 s), fine.test (3)']);
    assert.equal(linesOf({ ...progress, batchesInFlight: 1, hostsInFlight: ['fine.test'] })[2], '  12 queued, 1 batch in flight on fine.test');
    const gaps = [
      { key: 'fine.test', gapMs: 2_000, why: 'robots.txt Crawl-delay of 2 s' },
      { key: 'other.test', gapMs: 250, why: 'a delay of 0.3 s between requests' },
    ];
    assert.equal(linesOf(progress, gaps)[4], '  paced: fine.test (robots.txt Crawl-delay of 2 s), other.test (a delay of 0.3 s between requests)');
  });
});
