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
  /**
   * Page n's links are targets[offsets[n] .. offsets[n + 1]): two typed arrays instead of an
   * array per page, so the benchmark's 1,000,000-page graph takes ~50 MB, not ~200 MB.
   */
  private readonly offsets: Uint32Array;
  private readonly targets: Int32Array;

  constructor(options: SiteGraphOptions) {
    this.pages = options.pages;
    const perPage = Math.min(options.linksPerPage ?? 12, Math.max(0, this.pages - 1));
    const random = seededRandom(options.seed ?? 1);
    this.offsets = new Uint32Array(this.pages + 1);
    const targets = new Int32Array(this.pages * perPage);
    let used = 0;
    for (let page = 0; page < this.pages; page += 1) {
      const chosen = new Set<number>();
      // A link to the next page keeps most of the site reachable; the rest are random.
      if (page + 1 < this.pages) chosen.add(page + 1);
      while (chosen.size < perPage) chosen.add(Math.floor(random() * this.pages));
      for (const target of chosen) if (!SiteGraph.isOrphan(target) && target !== page) targets[used++] = target;
      this.offsets[page + 1] = used;
    }
    this.targets = targets.slice(0, used);
  }

  /** Pages nothing links to (every tenth, but never the home page). */
  static isOrphan(page: number): boolean {
    return page % 10 === 9;
  }

  linksOf(page: number): readonly number[] {
    if (!(page >= 0 && page < this.pages)) return [];
    return Array.from(this.targets.subarray(this.offsets[page], this.offsets[page + 1]));
  }

  reachableFrom(start = 0): Set<number> {
    const seen = new Set([start]);
    const queue = [start];
    // An index, not queue.shift(): shift is linear in the queue's length on large arrays.
    for (let head = 0; head < queue.length; head += 1) {
      const page = queue[head];
      for (let i = this.offsets[page]; i < this.offsets[page + 1]; i += 1) {
        const target = this.targets[i];
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

const WORDS = (
  'the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were ' +
  'crawler frontier temporal workflow activity batch politeness robots sitemap canonical redirect header latency worker ' +
  'history signal queue schedule heartbeat durable replay store index fetch parse link anchor page host domain scope ' +
  'network socket timeout retry backoff budget depth limit deadline record snapshot cursor lease claim window'
).split(' ');

/** A paragraph of seeded prose, so pages look like text (word lengths, spaces) to parsers and gzip. */
function paragraph(random: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i += 1) out.push(WORDS[Math.floor(random() * WORDS.length)]);
  out[0] = out[0][0].toUpperCase() + out[0].slice(1);
  return `<p>${out.join(' ')}.</p>`;
}

/**
 * Page n's HTML: a title, a heading, paragraphs of seeded prose up to about `pageBytes`, and its
 * links (the graph's, and no others) in a list. The same page always renders to the same bytes.
 */
export function renderPage(graph: SiteGraph, page: number, pageBytes: number): string {
  const links = graph.linksOf(page).map((target) => `<li><a href="${pagePath(target)}">Page ${target}</a></li>`).join('');
  const head = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Page ${page}</title><meta name="viewport" content="width=device-width"></head><body><main><h1>Page ${page}</h1>`;
  const tail = `<nav><h2>Related pages</h2><ul>${links}</ul></nav></main></body></html>`;
  const random = seededRandom(page + 1);
  let text = '';
  for (let room = pageBytes - head.length - tail.length; room > 0; room = pageBytes - head.length - tail.length - text.length) {
    text += paragraph(random, Math.max(1, Math.min(90, Math.floor(room / 6))));
  }
  return head + text + tail;
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
