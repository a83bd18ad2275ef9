/**
 * A worker's /metrics endpoint (loopback) carries the app metrics, Node's default metrics
 * and the Temporal SDK's own metrics, with values that match the crawl that just ran.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startSyntheticSite } from '../src/sites/synthetic-site';
import type { WorkerHost } from '../src/workers/worker-host';
import { readRecords, startMeteredWorkerHost, uniqueQueue, type TestTemporal } from './helpers/temporal';
import { startCrawl } from '../src/client/crawl-client';
import { isLoopbackPeer } from '../src/observability/metrics-server';

/** The value of the sample `name` whose labels include `labels` (in any order), or NaN. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) return Number(match[3]);
  }
  return NaN;
}

describe('worker metrics endpoint', () => {
  let env: TestTemporal;
  let host: WorkerHost;
  const taskQueue = uniqueQueue('metrics');

  before(async () => {
    ({ env, host } = await startMeteredWorkerHost('metrics-test', taskQueue));
  });
  after(async () => {
    await host?.stop();
    await env?.close();
  });

  it('exposes task durations, queue length, page counters, Node and Temporal SDK metrics', async () => {
    assert.match(host.metricsUrl ?? '', /^http:\/\/127\.0\.0\.1:\d+\/metrics$/, 'bound to loopback');
    const site = await startSyntheticSite({ pages: 120 });
    try {
      await (await startCrawl(env.client, 'metrics-crawl', { seeds: [site.urlOf(0)] }, taskQueue)).result();
      const pages = (await readRecords(env.dataDir, 'metrics-crawl')).length;
      const text = await (await request(host.metricsUrl!)).body.text();

      assert.equal(sample(text, 'crawler_pages_total', { outcome: 'fetched', status_class: '2xx' }), pages);
      assert.equal(sample(text, 'crawler_task_duration_seconds_count', { status: '2xx', type: 'fetch' }), pages);
      assert.ok(sample(text, 'crawler_task_duration_seconds_count', { status: 'completed', type: 'batch' }) >= 1);
      assert.equal(sample(text, 'worker_queue_length', { worker_id: host.workerId }), 0, 'queue drained after the crawl');
      assert.ok(sample(text, 'crawler_bytes_total') > pages * 1_000);
      assert.equal(sample(text, 'crawler_active_crawls'), 0, 'no crawl has batches running any more');
      assert.equal(sample(text, 'crawler_frontier_queued'), 0);
      // Every page links to ~11 pages, nearly all of them seen before: each seen link is counted once.
      assert.ok(sample(text, 'crawler_urls_dropped_total', { reason: 'already-seen' }) > pages * 5);
      assert.ok(sample(text, 'process_resident_memory_bytes') > 0, 'Node default metrics');
      const sdk = { task_queue: taskQueue, activity_type: 'fetchBatch' };
      assert.equal(
        sample(text, 'temporal_activity_execution_latency_count', sdk),
        sample(text, 'crawler_task_duration_seconds_count', { status: 'completed', type: 'batch' }),
        'Temporal SDK metrics merged in, counting the same batches',
      );
      assert.ok(sample(text, 'temporal_activity_schedule_to_start_latency_count', { task_queue: taskQueue }) >= 1);
      assert.equal(sample(text, 'temporal_worker_task_slots_available', { task_queue: taskQueue, worker_type: 'ActivityWorker' }), 64, 'all batch slots free again');
    } finally {
      await site.close();
    }
  });

  it('takes a CPU profile and a heap snapshot on demand', async () => {
    const base = host.metricsUrl!.replace(/\/metrics$/, '');
    const profile = JSON.parse(await (await request(`${base}/debug/cpu-profile?seconds=1`)).body.text()) as { nodes: unknown[]; samples: unknown[] };
    assert.ok(profile.nodes.length > 0 && Array.isArray(profile.samples), 'a .cpuprofile');
    const snapshot = await request(`${base}/debug/heap-snapshot`);
    assert.equal(snapshot.statusCode, 200);
    const head = (await snapshot.body.text()).slice(0, 20);
    assert.match(head, /^\{"snapshot":/, 'a .heapsnapshot');
    assert.equal((await request(`${base}/debug/cpu-profile?seconds=600`)).statusCode, 400);
  });
});

describe('worker diagnostics answer loopback peers only', () => {
  it('takes a peer for loopback by its address, IPv4 mapped into IPv6 included, and nothing else', () => {
    const peers = ['127.0.0.1', '127.3.2.1', '::1', '::ffff:127.0.0.1', '192.0.2.10', '10.0.0.5', '::ffff:10.0.0.5', 'fd00::2', '2001:db8::1', '', undefined];
    assert.deepEqual(
      peers.map((peer) => [peer, isLoopbackPeer(peer)]),
      peers.map((peer, i) => [peer, i < 4]),
    );
  });
});
