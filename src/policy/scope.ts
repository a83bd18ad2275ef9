/**
 * Crawl scope as a pure predicate built once from the seeds: `host` keeps a link on a seed's
 * host, `domain` on a seed's registrable domain (public-suffix aware), `prefix` under a seed's
 * directory, and `any` keeps every link (a broad crawl, bounded by depth, pages, pages per host
 * and the include/exclude patterns; the address guard still applies).
 */
import { getDomain } from 'tldts';
import type { Scope } from '../shared/crawl-config';

export type ScopePredicate = (url: URL) => boolean;

function registrableDomain(url: URL): string {
  // IP addresses and single-label hosts (localhost) have no registrable domain: use the host.
  return getDomain(url.hostname, { allowPrivateDomains: true }) ?? url.hostname;
}

function directoryPrefix(url: URL): string {
  return url.origin + url.pathname.slice(0, url.pathname.lastIndexOf('/') + 1);
}

export function buildScope(scope: Scope, seeds: readonly string[]): ScopePredicate {
  const seedUrls = seeds.map((seed) => new URL(seed));
  switch (scope) {
    case 'host': {
      const hosts = new Set(seedUrls.map((url) => url.host));
      return (url) => hosts.has(url.host);
    }
    case 'domain': {
      const domains = new Set(seedUrls.map(registrableDomain));
      return (url) => domains.has(registrableDomain(url));
    }
    case 'prefix': {
      const prefixes = [...new Set(seedUrls.map(directoryPrefix))];
      return (url) => prefixes.some((prefix) => url.href.startsWith(prefix));
    }
    case 'any':
      return () => true;
  }
}
