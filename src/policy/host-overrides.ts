/**
 * Which per-host override (`hosts` in the crawl config) applies to a host. Pure and
 * deterministic, so the workflow's scheduler (per-host concurrency) and the batch activity
 * (delay, headers, cookies, user agent) read the same answer.
 */
import type { HostOverride } from '../shared/politeness-config';

/**
 * The `hosts` key that applies to `host` (a host key: hostname plus a non-default port, see
 * `hostKey`): its exact key, else the longest `*.domain` pattern it falls under (a pattern
 * matches subdomains, not the domain itself, and carries the port like any host key).
 */
export function hostOverrideKey(hosts: Readonly<Record<string, unknown>>, host: string): string | undefined {
  if (Object.hasOwn(hosts, host)) return host;
  let best: string | undefined;
  for (const pattern of Object.keys(hosts)) {
    if (pattern.startsWith('*.') && host.endsWith(pattern.slice(1)) && (best === undefined || pattern.length > best.length)) best = pattern;
  }
  return best;
}

/** The override for `host`, if any (see `hostOverrideKey`). */
export function hostOverride(hosts: Readonly<Record<string, HostOverride>>, host: string): HostOverride | undefined {
  const key = hostOverrideKey(hosts, host);
  return key === undefined ? undefined : hosts[key];
}
