/**
 * Many small hosts linked to one another, on loopback: each host is a port of its own (so a
 * politeness key of its own), `/` links to the host's pages and to the front pages of two
 * other hosts, so a crawl seeded on a few hosts reaches every one through links found by
 * batches of other hosts (on a sharded crawl, mostly of other shards). Every request is
 * counted by host and path, which is what "every page exactly once" is checked against.
 */
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { CrawlInput } from '../shared/crawl-config';

export interface LinkedHosts {
  /** `http://127.0.0.1:<port>` of each host. */
  origins: string[];
  /** Every page URL the hosts serve: what a crawl of them all fetches. */
  pages: string[];
  /** Requests per URL served. */
  requests: Map<string, number>;
  /** When each URL was first asked for (epoch ms, as the request arrived). */
  askedAt: Map<string, number>;
  /** The most requests each host had in flight at once, by origin. */
  maxInFlight: Map<string, number>;
  close(): Promise<void>;
}

/** The hosts `/` of host `n` of `hosts` links to: the next one, and one further off. */
function linkedHosts(n: number, hosts: number): number[] {
  return [(n + 1) % hosts, (n * 7 + 3) % hosts];
}

/** An answer a host gives instead of its page, the first time the page is asked for. */
export interface FirstAnswer {
  status: number;
  headers: Record<string, string>;
}

export interface LinkedHostsOptions {
  /** What host `host` answers the first request for `path` with, if not its page. */
  firstAnswer?: (host: number, path: string) => FirstAnswer | undefined;
}

export async function startLinkedHosts(hosts: number, pagesPerHost: number, { firstAnswer }: LinkedHostsOptions = {}): Promise<LinkedHosts> {
  const servers: Server[] = [];
  const origins: string[] = [];
  const requests = new Map<string, number>();
  const askedAt = new Map<string, number>();
  const maxInFlight = new Map<string, number>();
  for (let n = 0; n < hosts; n += 1) {
    let inFlight = 0;
    const server = createServer((req, res) => {
      const origin = origins[n];
      const url = `${origin}${req.url}`;
      const asked = (requests.get(url) ?? 0) + 1;
      requests.set(url, asked);
      if (asked === 1) askedAt.set(url, Date.now());
      inFlight += 1;
      maxInFlight.set(origin, Math.max(maxInFlight.get(origin) ?? 0, inFlight));
      res.on('close', () => void (inFlight -= 1));
      const links =
        req.url === '/'
          ? [...Array.from({ length: pagesPerHost }, (_, page) => `/p${page}`), ...linkedHosts(n, hosts).map((other) => `${origins[other]}/`)]
          : [];
      if (req.url !== '/' && !/^\/p\d+$/.test(req.url ?? '')) return void res.writeHead(404).end();
      const instead = asked === 1 ? firstAnswer?.(n, req.url ?? '/') : undefined;
      if (instead) return void res.writeHead(instead.status, instead.headers).end();
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>${origin}${req.url}</title>${links.map((href) => `<a href="${href}">x</a>`).join('')}`);
    });
    server.keepAliveTimeout = 1_000;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origins.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    servers.push(server);
  }
  const pages = origins.flatMap((origin) => [`${origin}/`, ...Array.from({ length: pagesPerHost }, (_, page) => `${origin}/p${page}`)]);
  return {
    origins,
    pages,
    requests,
    askedAt,
    maxInFlight,
    close: async () => {
      for (const server of servers) server.closeAllConnections();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}

/**
 * The crawl these hosts are made for, as the shard test and the shard bench run it: seeded on
 * every tenth host, following links to any host, one batch at a time per host, no retries.
 */
export function linkedHostsCrawl(site: Pick<LinkedHosts, 'origins'>, shards: number): CrawlInput {
  return {
    seeds: site.origins.filter((_, n) => n % 10 === 0).map((origin) => `${origin}/`),
    scope: 'any',
    shards,
    concurrency: 16,
    perHostConcurrency: 1,
    batchSize: 20,
    respectRobots: false,
    allowPrivateNetwork: true,
    maxRetries: 0,
  };
}
