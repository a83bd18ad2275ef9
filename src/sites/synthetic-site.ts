/**
 * A deterministic synthetic website served on loopback: the demo's target, the tests'
 * fixture and the benchmark's site. Page n lives at /page/n and links to pseudo-random
 * pages chosen by a seeded generator; every tenth page is an orphan nothing links to, so
 * "the reachable set" is a real, non-trivial answer. The server logs every request with
 * its start and end, which is what tests assert on.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';

export interface SiteGraphOptions {
  pages: number;
  linksPerPage?: number;
  seed?: number;
}

/** mulberry32: a tiny, good-enough seeded PRNG (also used by tests for fault schedules). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class SiteGraph {
  readonly pages: number;
  private readonly links: number[][];

  constructor(options: SiteGraphOptions) {
    this.pages = options.pages;
    const perPage = options.linksPerPage ?? 12;
    const random = seededRandom(options.seed ?? 1);
    this.links = Array.from({ length: this.pages }, (_, page) => {
      const targets = new Set<number>();
      // A link to the next page keeps most of the site reachable; the rest are random.
      if (page + 1 < this.pages) targets.add(page + 1);
      while (targets.size < Math.min(perPage, this.pages - 1)) targets.add(Math.floor(random() * this.pages));
      return [...targets].filter((target) => !SiteGraph.isOrphan(target) && target !== page);
    });
  }

  /** Pages nothing links to (every tenth, but never the home page). */
  static isOrphan(page: number): boolean {
    return page % 10 === 9;
  }

  linksOf(page: number): readonly number[] {
    return this.links[page] ?? [];
  }

  reachableFrom(start = 0): Set<number> {
    const seen = new Set([start]);
    const queue = [start];
    for (let page = queue.shift(); page !== undefined; page = queue.shift()) {
      for (const target of this.linksOf(page)) {
        if (!seen.has(target)) {
          seen.add(target);
          queue.push(target);
        }
      }
    }
    return seen;
  }
}

export function pagePath(page: number): string {
  return `/page/${page}`;
}

export interface RequestLogEntry {
  path: string;
  startedAt: number;
  /** When the response ended or the connection closed; null while in flight. */
  endedAt: number | null;
  /** True when the client went away before the response was complete. */
  aborted: boolean;
  userAgent: string | undefined;
  headers: IncomingHttpHeaders;
}

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface SyntheticSiteOptions extends SiteGraphOptions {
  /** Approximate HTML size of a page, padded with text. */
  pageBytes?: number;
  robotsTxt?: string;
  /** Extra routes by exact path, checked before the built-in ones. */
  routes?: Record<string, RouteHandler>;
  /** Delay before every page response (ms). */
  latencyMs?: number;
}

export interface SyntheticSite {
  origin: string;
  graph: SiteGraph;
  requests: RequestLogEntry[];
  urlOf(page: number): string;
  /** Requests currently in flight, and the most that ever were at once. */
  inFlight(): number;
  maxInFlight(): number;
  close(): Promise<void>;
}

function renderPage(graph: SiteGraph, page: number, pageBytes: number): string {
  const links = graph.linksOf(page).map((target) => `<li><a href="${pagePath(target)}">Page ${target}</a></li>`).join('');
  const head = `<!doctype html><html><head><meta charset="utf-8"><title>Page ${page}</title></head><body><h1>Page ${page}</h1><ul>${links}</ul>`;
  const filler = Math.max(0, pageBytes - head.length - 30);
  return `${head}<p>${'lorem ipsum '.repeat(Math.ceil(filler / 12)).slice(0, filler)}</p></body></html>`;
}

export async function startSyntheticSite(options: SyntheticSiteOptions): Promise<SyntheticSite> {
  const graph = new SiteGraph(options);
  const pageBytes = options.pageBytes ?? 2_000;
  const requests: RequestLogEntry[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const sockets = new Set<import('node:net').Socket>();

  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0];
    const custom = options.routes?.[path];
    if (custom) return custom(req, res);
    if (path === '/robots.txt') {
      res.writeHead(options.robotsTxt === undefined ? 404 : 200, { 'content-type': 'text/plain' });
      res.end(options.robotsTxt ?? 'not found');
      return;
    }
    const match = /^\/page\/(\d+)$/.exec(path);
    const page = match ? Number(match[1]) : -1;
    if (page < 0 || page >= graph.pages) {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<title>Not found</title>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(renderPage(graph, page, pageBytes));
  };

  const server: Server = createServer((req, res) => {
    const entry: RequestLogEntry = { path: req.url ?? '/', startedAt: Date.now(), endedAt: null, aborted: false, userAgent: req.headers['user-agent'], headers: req.headers };
    requests.push(entry);
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.once('close', () => {
      inFlight -= 1;
      entry.endedAt = Date.now();
      entry.aborted = !res.writableFinished;
    });
    if (options.latencyMs) setTimeout(() => serve(req, res), options.latencyMs);
    else serve(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('site did not bind');
  const origin = `http://127.0.0.1:${address.port}`;
  return {
    origin,
    graph,
    requests,
    urlOf: (page) => `${origin}${pagePath(page)}`,
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
