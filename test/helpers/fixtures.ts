/** Shared helpers for tests that serve custom fixture routes and watch them over time. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RouteHandler } from '../../src/sites/synthetic-site';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
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
