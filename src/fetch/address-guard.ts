/**
 * Which network addresses a crawl may connect to. A crawl follows links and redirects chosen
 * by the sites it visits, so without a guard any page could make a worker fetch its cloud
 * metadata endpoint (169.254.169.254), a service on loopback or a host on the internal
 * network (SSRF). By default only public unicast addresses are allowed. The exceptions are
 * chosen by whoever starts the crawl, never by a site: a seed URL whose host is itself a
 * non-public address allows exactly that address (a crawl seeded at http://127.0.0.1:8080/
 * may fetch 127.0.0.1), and `allowPrivateNetwork` allows everything.
 *
 * The guard judges addresses, not URL text: the transport resolves names itself and checks
 * every answer before it connects (see transport.ts), so a public-looking name that resolves
 * to 10.0.0.1 is refused like the literal address.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { FetchError } from './errors';

/** The NAT64 well-known prefix (RFC 6052) carries a public IPv4 address on IPv6-only networks. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 {
  const [high, low] = address.parts.slice(6);
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * The ipaddr.js range of an address ('unicast' means public). IPv4-mapped IPv6 addresses are
 * judged as the IPv4 address they carry, NAT64 addresses by their embedded IPv4 address.
 */
export function addressRange(address: string): string {
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv6' && parsed.range() === 'rfc6052') return embeddedIPv4(parsed as ipaddr.IPv6).range();
  return parsed.range();
}

/** One canonical spelling per address, so '::ffff:127.0.0.1' and '127.0.0.1' compare equal. */
function canonical(address: string): string {
  return ipaddr.process(address).toString();
}

/** A URL's hostname as an IP address, without the brackets of an IPv6 literal; null for names. */
function literalAddress(hostname: string): string | null {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : null;
}

export class AddressGuard {
  /** Everything is allowed: no lookup of our own, no check. */
  static readonly open = new AddressGuard(null);

  /**
   * Identifies the policy. Requests under one key share a connection pool, and requests
   * under different keys never do, so a connection opened under a looser policy is never
   * reused under a stricter one.
   */
  readonly key: string;

  private constructor(private readonly trusted: ReadonlySet<string> | null) {
    this.key = trusted === null ? 'open' : `guarded:${[...trusted].sort().join(',')}`;
  }

  /** Built once per crawl from its config, not per request. */
  static forCrawl(config: { seeds: readonly string[]; allowPrivateNetwork: boolean }): AddressGuard {
    if (config.allowPrivateNetwork) return AddressGuard.open;
    const trusted = new Set<string>();
    for (const seed of config.seeds) {
      const address = literalAddress(new URL(seed).hostname);
      if (address !== null && addressRange(address) !== 'unicast') trusted.add(canonical(address));
    }
    return new AddressGuard(trusted);
  }

  /** Whether this guard has anything to check; an open guard skips our own DNS lookup. */
  get checksAddresses(): boolean {
    return this.trusted !== null;
  }

  /** Throws `blocked-address` unless `address` (an answer for `hostname`) may be connected to. */
  check(hostname: string, address: string): void {
    if (this.trusted === null) return;
    const range = addressRange(address);
    if (range === 'unicast' || this.trusted.has(canonical(address))) return;
    const shown = hostname === address ? address : `${hostname} (${address})`;
    throw new FetchError('blocked-address', `${shown} is a ${range} address, which this crawl may not fetch`);
  }
}
