/**
 * Serves /metrics on loopback by default: the app's prom-client registry followed by the
 * Temporal SDK's own metrics, read from the SDK's Prometheus endpoint, so one scrape target
 * per worker collects both.
 */
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { request } from 'undici';
import type { Registry } from 'prom-client';

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

export async function serveMetrics(registry: Registry, address: string, sdkMetricsUrl?: string): Promise<MetricsEndpoint> {
  const { host, port } = parseHostPort(address);
  const server: Server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end('not found\n');
      return;
    }
    Promise.all([registry.metrics(), sdkMetrics(sdkMetricsUrl)]).then(
      ([app, sdk]) => res.writeHead(200, { 'content-type': registry.contentType }).end(`${app}\n${sdk}`),
      (err: Error) => res.writeHead(500).end(`${err.message}\n`),
    );
  });
  server.listen(port, host);
  await once(server, 'listening');
  const bound = server.address();
  const boundPort = typeof bound === 'object' && bound ? bound.port : port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}/metrics`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
