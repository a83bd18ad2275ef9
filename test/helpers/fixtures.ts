/** Shared helpers for tests that serve custom fixture routes and watch them over time. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pagePath, type RouteHandler, type SiteGraph } from '../../src/sites/synthetic-site';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A loopback address no test server listens on: they listen on 127.0.0.1. */
export const UNSERVED_LOOPBACK = '127.61.13.7';

/**
 * An origin where nothing listens, so a connection is refused: a port the system handed out
 * on UNSERVED_LOOPBACK and took back. A test server that takes the same port meanwhile listens
 * on 127.0.0.1, and does not answer there.
 */
export async function refusingOrigin(): Promise<string> {
  const server = createServer().listen(0, UNSERVED_LOOPBACK);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://${UNSERVED_LOOPBACK}:${port}`;
}

/** Waits until `predicate` holds (it may ask a server), checking every 20 ms, failing after `timeoutMs`. */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A minimal HTML response for custom fixture routes. */
export function html(res: ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html><head><title>t</title></head><body>${body}</body></html>`);
}

/** Routes for a seed page at / that links to `n` pages `${prefix}0..n-1`, each served by `handler`. */
export function linkedRoutes(prefix: string, n: number, handler: RouteHandler): Record<string, RouteHandler> {
  const paths = Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  return {
    '/': (_req: IncomingMessage, res: ServerResponse) => html(res, paths.map((path) => `<a href="${path}">${path}</a>`).join('')),
    ...Object.fromEntries(paths.map((path) => [path, handler])),
  };
}

/*
 * Page-set oracles. A crawl's outcome is compared as sorted lists of paths, repeats kept: a
 * page lost, one never expected and one seen twice each show in the difference, where equal
 * counts let a lost page and a repeated one cancel out.
 */

/** The paths a crawl from page 0 of a synthetic site must reach, sorted. */
export function reachablePagePaths(site: { graph: SiteGraph }): string[] {
  return [...site.graph.reachableFrom(0)].map(pagePath).sort();
}

/** The paths of absolute URLs (records' `url`), sorted, repeats kept. */
export function sortedPaths(urls: Iterable<string>): string[] {
  return [...urls].map((url) => new URL(url).pathname).sort();
}

/** The paths under `prefix` a site served, from its `from`-th request on, sorted, repeats kept. */
export function requestedPagePaths(site: { requests: ReadonlyArray<{ path: string }> }, { from = 0, prefix = '/page/' } = {}): string[] {
  return site.requests.slice(from).map((request) => request.path).filter((path) => path.startsWith(prefix)).sort();
}
