/**
 * A sharded crawl as its shards tell it. The crawl's own workflow reads its view every few
 * seconds and runs no batch; its shards (`<crawl ID>/shard-<n>`) run them, so what is in
 * flight, failing or held is theirs. Pure: the crawl's workflow merges its shards' failures
 * with it, and `status` the shards' live progress and frontiers.
 */
import type { CrawlProgress, FailureTally, FrontierStats } from './crawl-types';

/** The backlog entries a frontier lists (the frontier query's). */
const FRONTIER_HOSTS = 50;

/** One tally per cause, the batches of each added up. */
export function mergedFailures(tallies: readonly FailureTally[]): FailureTally[] {
  const byCode = new Map<string, FailureTally>();
  for (const tally of tallies) {
    const seen = byCode.get(tally.code);
    byCode.set(tally.code, seen ? { ...seen, batches: seen.batches + tally.batches } : { ...tally });
  }
  return [...byCode.values()];
}

const sum = (shards: readonly CrawlProgress[], field: 'processed' | 'fetched' | 'errors' | 'skipped' | 'bytes' | 'queued' | 'batchesInFlight' | 'batchesCompleted'): number =>
  shards.reduce((total, shard) => total + shard[field], 0);

/**
 * The crawl's progress from its shards': their counts added up (each shard counts the URLs of
 * its own keys), their batches and failures, the first store wait any has. The crawl's status
 * (running, paused), start and ID stay its own.
 */
export function mergedProgress(crawl: CrawlProgress, shards: readonly CrawlProgress[]): CrawlProgress {
  return {
    ...crawl,
    processed: sum(shards, 'processed'),
    fetched: sum(shards, 'fetched'),
    errors: sum(shards, 'errors'),
    skipped: sum(shards, 'skipped'),
    bytes: sum(shards, 'bytes'),
    queued: sum(shards, 'queued'),
    batchesInFlight: sum(shards, 'batchesInFlight'),
    batchesCompleted: sum(shards, 'batchesCompleted'),
    hostsInFlight: shards.flatMap((shard) => shard.hostsInFlight),
    run: Math.max(crawl.run, ...shards.map((shard) => shard.run)),
    storeWait: shards.find((shard) => shard.storeWait !== null)?.storeWait ?? null,
    failures: mergedFailures(shards.flatMap((shard) => shard.failures)),
  };
}

/** The crawl's frontier from its shards': a key is in one shard only, so their largest backlogs merge without repeats. */
export function mergedFrontier(shards: readonly FrontierStats[]): FrontierStats {
  const hosts = shards.flatMap((shard) => shard.hosts).sort((a, b) => b.queued - a.queued || a.host.localeCompare(b.host));
  return {
    queued: shards.reduce((total, shard) => total + shard.queued, 0),
    snapshotVersion: shards.reduce((total, shard) => total + shard.snapshotVersion, 0),
    hosts: hosts.slice(0, FRONTIER_HOSTS),
  };
}
