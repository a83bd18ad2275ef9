/**
 * How a crawl is split into shards: every politeness key belongs to one shard, by a stable
 * hash of the key, so a key's URLs, pacing and caps stay with one shard workflow whichever
 * worker or shard finds them. Pure (no Node API), so workflows and activities share it.
 */

/** FNV-1a, 32 bits: stable across processes and releases, which a key's shard must be. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** The shard (0 .. shards-1) of politeness key `key`. */
export function shardOf(key: string, shards: number): number {
  return shards <= 1 ? 0 : fnv1a(key) % shards;
}

/** `entries` with their key's shard, for the store to record on the key. */
export function inShards<T extends { host: string }>(entries: readonly T[], shards: number): Array<T & { shard: number }> {
  return entries.map((entry) => ({ ...entry, shard: shardOf(entry.host, shards) }));
}

/**
 * Shard `shard`'s part of `total` (a page budget, a concurrency): the parts differ by at most
 * one and add up to `total` exactly, so no shard needs to ask another what is left. `atLeast`
 * keeps a part from being 0 where 0 would mean the shard can never run (concurrency).
 */
export function partOf(total: number, shards: number, shard: number, atLeast = 0): number {
  const part = Math.floor(total / shards) + (shard < total % shards ? 1 : 0);
  return Math.max(atLeast, part);
}

/** The workflow ID of a crawl's shard. */
export function shardWorkflowId(crawlId: string, shard: number): string {
  return `${crawlId}/shard-${shard}`;
}
