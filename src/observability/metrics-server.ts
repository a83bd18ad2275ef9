/**
 * The worker's loopback endpoint. /metrics serves the app's prom-client registry followed by
 * the Temporal SDK's own metrics, read from the SDK's Prometheus endpoint, so one scrape
 * target per worker collects both. /debug/cpu-profile?seconds=N and /debug/heap-snapshot
 * take diagnostics on demand.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { isIP } from 'node:net';
import { request } from 'undici';
import type { Registry } from 'prom-client';
import { addressRange } from '../fetch/address-guard';
import { cpuProfile, heapSnapshot, MAX_PROFILE_SECONDS } from './diagnostics';

export interface MetricsEndpoint {
  url: string;
  close(): Promise<void>;
}

export function parseHostPort(address: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(address);
  if (!match) throw new Error(`metrics address must be host:port, got "${address}"`);
  return { host: match[1].replace(/^\[|\]$/g, ''), port: Number(match[2]) };
}

async function sdkMetrics(sdkMetricsUrl: string | undefined): Promise<string> {
  if (!sdkMetricsUrl) return '';
  try {
    const response = await request(sdkMetricsUrl, { headersTimeout: 2_000, bodyTimeout: 2_000 });
    return response.statusCode === 200 ? await response.body.text() : '';
  } catch {
    return '# Temporal SDK metrics unavailable\n';
  }
}

/**
 * Whether a peer is this machine, over loopback. A heap snapshot holds all the worker keeps,
 * the secrets it read from its environment included, so /debug answers loopback peers only,
 * even when the endpoint listens on another address for a Prometheus elsewhere.
 */
export function isLoopbackPeer(remoteAddress: string | undefined): boolean {
  return remoteAddress !== undefined && isIP(remoteAddress) !== 0 && addressRange(remoteAddress) === 'loopback';
}

/** The metrics endpoint's address is taken, or not this machine's: the address, and the error's code. */
export class MetricsListenError extends Error {
  readonly code = 'metrics-listen';
}

export async function serveMetrics(registry: Registry, address: string, sdkMetricsUrl?: string): Promise<MetricsEndpoint> {
  const { host, port } = parseHostPort(address);
  const fail = (res: ServerResponse) => (err: Error) => res.writeHead(500).end(`${err.message}\n`);
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://worker');
    if (url.pathname.startsWith('/debug/') && !isLoopbackPeer(req.socket.remoteAddress)) {
      res.writeHead(403).end('diagnostics are served over loopback only: ask from the worker\'s host\n');
      return;
    }
    switch (url.pathname) {
      case '/metrics':
        Promise.all([registry.metrics(), sdkMetrics(sdkMetricsUrl)]).then(
          ([app, sdk]) => res.writeHead(200, { 'content-type': registry.contentType }).end(`${app}\n${sdk}`),
          fail(res),
        );
        return;
      case '/debug/cpu-profile': {
        const seconds = Number(url.searchParams.get('seconds') ?? 10);
        if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_PROFILE_SECONDS) {
          res.writeHead(400).end(`seconds must be in (0, ${MAX_PROFILE_SECONDS}]\n`);
          return;
        }
        cpuProfile(seconds).then(
          (profile) => res.writeHead(200, { 'content-type': 'application/json', 'content-disposition': 'attachment; filename="worker.cpuprofile"' }).end(profile),
          fail(res),
        );
        return;
      }
      case '/debug/heap-snapshot':
        res.writeHead(200, { 'content-type': 'application/json', 'content-disposition': 'attachment; filename="worker.heapsnapshot"' });
        heapSnapshot().pipe(res);
        return;
      default:
        res.writeHead(404).end('not found\n');
    }
  });
  try {
    server.listen(port, host);
    await once(server, 'listening');
  } catch (err) {
    throw new MetricsListenError(`metrics endpoint ${address}: cannot listen there (${(err as NodeJS.ErrnoException).code ?? String(err)})`, { cause: err });
  }
  const bound = server.address();
  const boundPort = typeof bound === 'object' && bound ? bound.port : port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}/metrics`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
