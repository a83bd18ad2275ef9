/**
 * A small loopback site whose pages change between two crawls, for the recrawl tests. Each
 * page may carry an ETag and/or a Last-Modified date, and answers a matching conditional
 * request with 304 as a real server does. Every request is logged with its headers, and
 * every body served with 200 is kept, so tests can compare stored bodies with what was sent.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

export interface SitePage {
  html: string;
  etag?: string;
  lastModified?: string;
  /** Served with Content-Encoding: gzip. */
  gzip?: boolean;
  /** Served with this status instead, with no validators (a page that fails: 503, 500; a redirect). */
  status?: number;
  /** The Location header sent with `status` (a 3xx). */
  location?: string;
  /** Answered this long after the request arrived (a slow page). */
  delayMs?: number;
}

export interface LoggedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  status: number;
}

export class ChangingSite {
  private server: Server | undefined;
  private port = 0;
  /** The pages served now, by path; set a new map to change the site. */
  pages: Record<string, SitePage> = {};
  readonly requests: LoggedRequest[] = [];
  /** The last body served with 200 for each path. */
  readonly served = new Map<string, Buffer>();

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const page = this.pages[path];
      if (page?.delayMs === undefined) this.answer(req, res, path, page);
      else setTimeout(() => this.answer(req, res, path, page), page.delayMs);
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  private answer(req: IncomingMessage, res: ServerResponse, path: string, page: SitePage | undefined): void {
    const log = (status: number) => this.requests.push({ path, headers: req.headers, status });
    if (!page) {
      log(404);
      res.writeHead(404, { 'content-type': 'text/html' }).end('<title>not found</title>');
      return;
    }
    if (page.status !== undefined) {
      log(page.status);
      res.writeHead(page.status, { 'content-type': 'text/html; charset=utf-8', ...(page.location === undefined ? {} : { location: page.location }) }).end(page.html);
      return;
    }
    const validators: Record<string, string> = {};
    if (page.etag) validators.etag = page.etag;
    if (page.lastModified) validators['last-modified'] = page.lastModified;
    const etagMatches = page.etag !== undefined && req.headers['if-none-match'] === page.etag;
    const dateMatches = page.lastModified !== undefined && req.headers['if-none-match'] === undefined && req.headers['if-modified-since'] === page.lastModified;
    if (etagMatches || dateMatches) {
      log(304);
      res.writeHead(304, validators).end();
      return;
    }
    log(200);
    const body = Buffer.from(page.html);
    this.served.set(path, body);
    const headers = { 'content-type': 'text/html; charset=utf-8', ...validators };
    if (page.gzip) res.writeHead(200, { ...headers, 'content-encoding': 'gzip' }).end(gzipSync(body));
    else res.writeHead(200, headers).end(body);
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Requests for `path` since the log was last cleared. */
  requestsFor(path: string): LoggedRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
