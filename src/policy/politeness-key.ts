/**
 * The politeness key of a URL: what the store queues, claims, paces and caps it under. URLs
 * are found with their host as key (`FrontierEntry.host`); a crawl keyed by domain or IP
 * re-keys them here before they are queued, so every worker puts one host's URLs under one key.
 *
 * By IP, the key is decided once, when a host is first met: a host that later moves to another
 * address keeps its key, so its URLs never split across two keys (and two gaps).
 */
import { isIP } from 'node:net';
import { getDomain } from 'tldts';
import type { LookupAll } from '../fetch/transport';
import type { CrawlConfig } from '../shared/crawl-config';
import type { FrontierEntry } from '../store/frontier-store';
import { inShards } from '../scheduling/shards';

/** Re-keys entries found with their host as key, and gives them their key's shard. */
export type PolitenessKeys = (entries: FrontierEntry[]) => Promise<FrontierEntry[]> | FrontierEntry[];

/** By host on one shard, entries are already as they are queued. */
const asFound: PolitenessKeys = (entries) => entries;

/** `a.example.co.uk:8080` -> `example.co.uk`; an IP address or a bare name (localhost) is its own key. */
export function domainKey(host: string): string {
  const hostname = hostnameOf(host);
  return getDomain(hostname) ?? hostname;
}

/** The host key without its port (and an IPv6 literal without brackets). */
function hostnameOf(host: string): string {
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d+$/, '');
  return name.toLowerCase();
}

/** Hosts whose IP key a worker remembers; past it the memory starts over (keys are also in the store). */
const MAX_REMEMBERED_HOSTS = 100_000;

/**
 * Keys by the first address the host resolves to. A host that does not resolve keeps its host
 * as key: its fetch fails with the resolver's error, which is recorded where a user looks.
 */
function ipKeys(lookup: LookupAll): (host: string) => Promise<string> {
  const remembered = new Map<string, Promise<string>>();
  return (host) => {
    let key = remembered.get(host);
    if (key === undefined) {
      const hostname = hostnameOf(host);
      key = isIP(hostname) !== 0 ? Promise.resolve(hostname) : lookup(hostname).then((answers) => answers[0]?.address ?? host, () => host);
      if (remembered.size >= MAX_REMEMBERED_HOSTS) remembered.clear();
      remembered.set(host, key);
    }
    return key;
  };
}

function rekeyed(keyOf: (host: string) => string | Promise<string>): PolitenessKeys {
  return async (entries) => Promise.all(entries.map(async (entry) => ({ ...entry, host: await keyOf(entry.host) })));
}

/**
 * The crawl's re-keying, built once per crawl and worker: each entry gets its politeness key
 * and, on a sharded crawl, that key's shard. A config recorded before either setting existed
 * lacks it: by host, one shard.
 */
export function politenessKeys({ politenessKey, shards = 1 }: Pick<CrawlConfig, 'politenessKey' | 'shards'>, lookup: LookupAll): PolitenessKeys {
  const rekey = politenessKey === 'domain' ? rekeyed(domainKey) : politenessKey === 'ip' ? rekeyed(ipKeys(lookup)) : asFound;
  if (shards <= 1) return rekey;
  return async (entries) => inShards(await rekey(entries), shards);
}
