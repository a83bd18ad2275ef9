/**
 * The benchmark's target, run in its own process so its CPU never counts against a crawler:
 * the project's seeded synthetic site (src/sites/synthetic-site.ts), pages rendered on the
 * fly (~8 KB each, nothing cached, so a 1,000,000-page site costs only its link graph).
 *
 * It counts requests per page in a byte array (saturating at 255), which is how the bench
 * proves that every tool fetched each reachable page exactly once, and it times the first
 * page request and the last page response of each run: the crawl window that pages/s uses,
 * the same for every tool whatever its start-up costs.
 *
 *   node dist/bench/site-server.js --pages 20000 [--page-bytes 8192] [--seed 1] [--hosts 1]
 *
 * prints one JSON line `{"origin":"http://127.0.0.1:PORT","origins":[...],"pages":N}` once
 * listening. With `--hosts H` the pages are H sites of pages/H pages each (the same link
 * graph), each on its own loopback port, so each is a host of its own to a crawler; page j of
 * host i is counted as page i * pages/H + j. GET /__stats (on any origin) returns the counters
 * of the current run (counts base64-encoded); POST /__reset starts a new run.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { renderPage, SiteGraph } from '../src/sites/synthetic-site';

export interface SiteStats {
  pages: number;
  /** Requests for /page/N with N on the site. */
  pageRequests: number;
  /** Requests for anything else (robots.txt, unknown paths); served as 404. */
  otherRequests: number;
  /** Date.now() of the first page request and of the last page response of the run. */
  firstRequestAt: number | null;
  lastResponseAt: number | null;
  /** Per page, how many times it was requested (capped at 255), base64 of a Uint8Array. */
  countsBase64: string;
}

const PAGE_PATH = /^\/page\/(\d+)$/;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      pages: { type: 'string' },
      'page-bytes': { type: 'string', default: '8192' },
      seed: { type: 'string', default: '1' },
      hosts: { type: 'string', default: '1' },
    },
  });
  const pages = Number(values.pages);
  const pageBytes = Number(values['page-bytes']);
  const hosts = Number(values.hosts);
  if (!Number.isInteger(pages) || pages < 1) throw new Error(`--pages must be a positive integer, got "${values.pages}"`);
  if (!Number.isInteger(hosts) || hosts < 1 || pages % hosts !== 0) throw new Error(`--hosts must divide --pages, got "${values.hosts}"`);
  const perHost = pages / hosts;
  const graph = new SiteGraph({ pages: perHost, seed: Number(values.seed) });

  let counts = new Uint8Array(pages);
  let pageRequests = 0;
  let otherRequests = 0;
  let firstRequestAt: number | null = null;
  let lastResponseAt: number | null = null;

  const serve = (offset: number) => (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/__stats') {
      const stats: SiteStats = { pages, pageRequests, otherRequests, firstRequestAt, lastResponseAt, countsBase64: Buffer.from(counts).toString('base64') };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats));
      return;
    }
    if (path === '/__reset' && req.method === 'POST') {
      counts = new Uint8Array(pages);
      pageRequests = otherRequests = 0;
      firstRequestAt = lastResponseAt = null;
      res.writeHead(204).end();
      return;
    }
    const match = PAGE_PATH.exec(path);
    const local = match ? Number(match[1]) : -1;
    if (local < 0 || local >= perHost) {
      otherRequests += 1;
      res.writeHead(404, { 'content-type': 'text/html' }).end('<title>Not found</title>');
      return;
    }
    pageRequests += 1;
    firstRequestAt ??= Date.now();
    const page = offset + local;
    if (counts[page] < 255) counts[page] += 1;
    const body = Buffer.from(renderPage(graph, local, pageBytes));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length });
    res.end(body, () => {
      lastResponseAt = Date.now();
    });
  };
  const servers: Server[] = [];
  const origins: string[] = [];
  for (let host = 0; host < hosts; host += 1) {
    const server = createServer(serve(host * perHost));
    // Crawlers keep their connections open between requests; Node's 5 s default would close
    // idle ones of a crawler that pauses (e.g. crawlflow between batches) and cost reconnects.
    server.keepAliveTimeout = 60_000;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('site server did not bind');
    servers.push(server);
    origins.push(`http://127.0.0.1:${address.port}`);
  }
  process.stdout.write(`${JSON.stringify({ origin: origins[0], origins, pages })}\n`);
  let open = servers.length;
  const stop = (): void => {
    for (const server of servers) server.close(() => (open -= 1) === 0 && process.exit(0)).closeAllConnections();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`site-server: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
