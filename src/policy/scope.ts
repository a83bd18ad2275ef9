/**
 * Crawl scope as a pure predicate built once from the seeds: `host` keeps a link on a seed's
 * host, `domain` on a seed's registrable domain (public-suffix aware), `prefix` under a seed's
 * directory, and `any` keeps every link (a broad crawl, bounded by depth, pages, pages per host
 * and the include/exclude patterns; the address guard still applies).
 *
 * Each scope is a set of keys, one per seed (its host, domain or directory), so a link is
 * checked by lookups, not by a scan of the seeds: a seed file's million seeds cost one set of
 * distinct keys, which the store keeps (`seedScope`) and workers load once per crawl.
 */
import { getDomain } from 'tldts';
import type { Scope } from '../shared/crawl-config';

export type ScopePredicate = (url: URL) => boolean;

function registrableDomain(url: URL): string {
  // IP addresses and single-label hosts (localhost) have no registrable domain: use the host.
  return getDomain(url.hostname, { allowPrivateDomains: true }) ?? url.hostname;
}

/** The key a seed adds to `scope` (undefined for `any`, which has none). */
export function scopeKey(scope: Scope, seed: URL): string | undefined {
  switch (scope) {
    case 'host':
      return seed.host;
    case 'domain':
      return registrableDomain(seed);
    case 'prefix':
      return seed.origin + seed.pathname.slice(0, seed.pathname.lastIndexOf('/') + 1);
    case 'any':
      return undefined;
  }
}

/** Every directory of `url`, as `prefix` keys: a link is under a seed's directory when one of them is that seed's key. */
function directoryPrefixes(url: URL): string[] {
  const prefixes: string[] = [];
  for (let at = url.pathname.indexOf('/'); at !== -1; at = url.pathname.indexOf('/', at + 1)) prefixes.push(url.origin + url.pathname.slice(0, at + 1));
  return prefixes;
}

/** The scope of `seeds`, widened by `moreKeys` (the scope keys of a seed file's seeds, as the store keeps them). */
export function buildScope(scope: Scope, seeds: readonly string[], moreKeys: Iterable<string> = []): ScopePredicate {
  const keys = new Set(moreKeys);
  for (const seed of seeds) {
    const key = scopeKey(scope, new URL(seed));
    if (key !== undefined) keys.add(key);
  }
  switch (scope) {
    case 'host':
      return (url) => keys.has(url.host);
    case 'domain':
      return (url) => keys.has(registrableDomain(url));
    case 'prefix':
      return (url) => directoryPrefixes(url).some((prefix) => keys.has(prefix));
    case 'any':
      return () => true;
  }
}
