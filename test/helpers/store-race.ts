/**
 * One side of a race on a frontier store: claims small batches of one host until it is empty,
 * completing every URL it got (as skipped when the claim says so). Used by worker threads
 * (SQLite) and by separate connection pools (PostgreSQL) alike.
 */
import type { FrontierStore } from '../../src/store/frontier-store';

export interface RaceSide {
  fetched: string[];
  skipped: string[];
}

/**
 * `afterFirstClaim` runs once, after this side's first claim got URLs: a barrier there lets
 * every side in before any drains the host, so the race does not depend on thread scheduling.
 */
export async function drainHost(
  store: FrontierStore,
  name: string,
  host: string,
  maxPagesPerHost?: number,
  afterFirstClaim?: () => void,
): Promise<RaceSide> {
  const side: RaceSide = { fetched: [], skipped: [] };
  for (let batch = 0; ; batch++) {
    const batchId = `${name}-${batch}`;
    const claimed = await store.claim(batchId, host, 3, maxPagesPerHost);
    if (claimed.length === 0) return side;
    if (batch === 0) afterFirstClaim?.();
    for (const item of claimed) {
      (item.skipped ? side.skipped : side.fetched).push(item.url);
      await store.complete(
        batchId,
        { url: item.url, depth: item.depth, status: item.skipped ? null : 200, error: null, skipped: item.skipped ?? null, title: name, links: [], fetchedAt: '', finalUrl: null, contentType: null, bytes: 1, canonical: null, noindex: false,
          fields: {}, etag: null, lastModified: null, contentHash: null, change: null, bodyRef: null, payloadRecord: null },
        [],
      );
    }
  }
}
