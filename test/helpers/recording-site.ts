/**
 * Fixture servers for the politeness and request tests: a loopback site of custom routes
 * (the synthetic site, which records every request with its headers and timing), and a
 * loopback HTTP CONNECT proxy that records what it was asked to tunnel to and refuses
 * anything but loopback addresses.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, isIP, type AddressInfo, type Socket } from 'node:net';
import { startSyntheticSite, type RequestLogEntry, type RouteHandler } from '../../src/sites/synthetic-site';

/** A route handler that is also told how many times its path was requested (1 for the first). */
export type Handler = (req: IncomingMessage, res: ServerResponse, nth: number) => void;

export interface RecordingSite {
  origin: string;
  /** host:port, the crawl's host key for this site. */
  host: string;
  requests: RequestLogEntry[];
  /** Page requests (robots.txt left out), in arrival order. */
  pages(): RequestLogEntry[];
  close(): Promise<void>;
}

export function page(res: ServerResponse, links: readonly string[] = []): void {
  const body = links.map((href) => `<a href="${href}">${href}</a>`).join('');
  res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html><head><title>t</title></head><body>${body}</body></html>`);
}

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** `routes` by exact path; other paths get a 404 (robots.txt too, unless routed). `latencyMs` delays every response. */
export async function startRecordingSite(routes: Record<string, Handler>, latencyMs = 0): Promise<RecordingSite> {
  const counts = new Map<string, number>();
  const counted = Object.entries(routes).map(([path, handler]): [string, RouteHandler] => [
    path,
    (req, res) => {
      const nth = (counts.get(path) ?? 0) + 1;
      counts.set(path, nth);
      handler(req, res, nth);
    },
  ]);
  const site = await startSyntheticSite({ pages: 0, routes: Object.fromEntries(counted), latencyMs });
  return {
    origin: site.origin,
    host: new URL(site.origin).host,
    requests: site.requests,
    pages: () => site.requests.filter((request) => request.path !== '/robots.txt'),
    close: () => site.close(),
  };
}

/**
 * A host held by a 429 while another's batches report: `held` answers its /r/0 with 429 and
 * `Retry-After: retryAfterS` the first time; `busy` links ten pages of 150 ms each. `seeds`
 * and `input` make the crawl of both, in batches of two, one key at a time.
 */
export async function startHeldWhileBusy(retryAfterS: number) {
  const held = await startRecordingSite({
    '/': (_req, res) => page(res, ['/r/0']),
    '/r/0': (_req, res, nth) => (nth === 1 ? res.writeHead(429, { 'retry-after': String(retryAfterS) }).end() : page(res)),
  });
  const busyPaths = Array.from({ length: 10 }, (_, n) => `/b/${n}`);
  const busy = await startRecordingSite({ '/': (_req, res) => page(res, busyPaths), ...Object.fromEntries(busyPaths.map((path): [string, Handler] => [path, (_req, res) => page(res)])) }, 150);
  return {
    held,
    busy,
    input: { seeds: [`${held.origin}/`, `${busy.origin}/`], batchSize: 2, perHostConcurrency: 1, concurrency: 2, respectRobots: false },
    close: async () => {
      await held.close();
      await busy.close();
    },
  };
}

/** Gaps between the starts of consecutive requests, in order. */
export function startGaps(requests: readonly RequestLogEntry[]): number[] {
  return gapsBetween(requests.map((request) => request.startedAt));
}

/** The gaps between consecutive times, in time order. */
export function gapsBetween(times: readonly number[]): number[] {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted.slice(1).map((time, i) => time - sorted[i]);
}

export interface ConnectProxy {
  url: string;
  /** Every CONNECT target (host:port) asked for, and its Proxy-Authorization header. */
  tunnels: Array<{ target: string; authorization: string | undefined }>;
  close(): Promise<void>;
}

/**
 * A CONNECT proxy on loopback. With `requireAuthorization`, a CONNECT without that exact
 * Proxy-Authorization gets 407. Only loopback literal targets are tunnelled (502 otherwise),
 * so nothing it is asked for can leave the machine.
 */
export async function startConnectProxy(requireAuthorization?: string): Promise<ConnectProxy> {
  const tunnels: ConnectProxy['tunnels'] = [];
  const sockets = new Set<Socket>();
  const server = createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('error', () => undefined);
    const target = req.url ?? '';
    const authorization = req.headers['proxy-authorization'];
    tunnels.push({ target, authorization });
    if (requireAuthorization !== undefined && authorization !== requireAuthorization) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const at = target.lastIndexOf(':');
    const host = target.slice(0, at).replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) === 0 || !(host.startsWith('127.') || host === '::1')) {
      client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const upstream = connect(Number(target.slice(at + 1)), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('error', () => client.destroy());
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    tunnels,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
