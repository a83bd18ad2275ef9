/**
 * A fixture site for discovery and scope tests: the synthetic site (pages /page/N, every
 * tenth an orphan nothing links to) plus a robots.txt that lists a sitemap index, a gzipped
 * sitemap file and a sitemap served with Content-Encoding: gzip, pages that declare a
 * canonical URL, private pages that only excluded links lead to, and a never-ending PDF.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { startSyntheticSite, type SiteGraph, type SyntheticSite } from '../../src/sites/synthetic-site';

export const DISCOVERY_PAGES = 40;
/** Orphans the sitemap lists (39 with a tracking parameter, which normalization drops). */
export const SITEMAP_ORPHANS = [9, 19, 29, 39];
/** What the crawl of DISCOVERY_SETTINGS excludes: /private/** and pages 10-19. */
export const DISCOVERY_SETTINGS = { exclude: ['/private/**', 're:/page/1\\d$'], sitemaps: { fromRobots: true } };
export const isExcludedPage = (page: number): boolean => page >= 10 && page <= 19;

const html = (res: ServerResponse, body: string): void => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html><head>${body}</head></html>`);
};

export const urlset = (urls: readonly string[]): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.map((url) => `  <url><loc>${url}</loc></url>`).join('\n')}\n</urlset>\n`;

export const sitemapIndex = (urls: readonly string[]): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.map((url) => `  <sitemap><loc>${url}</loc></sitemap>`).join('\n')}\n</sitemapindex>\n`;

/** A PDF that never ends: reading its body would fail with too-large, not skip it. */
function endlessPdf(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/pdf' });
  const chunk = Buffer.alloc(64 * 1024, 'p');
  const pump = (): void => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
}

export async function startDiscoverySite(): Promise<SyntheticSite> {
  let origin = '';
  const routes = {
    '/robots.txt': (_req: IncomingMessage, res: ServerResponse) =>
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap-index.xml\n`),
    '/sitemap-index.xml': (_req: IncomingMessage, res: ServerResponse) =>
      res.writeHead(200, { 'content-type': 'application/xml' }).end(sitemapIndex([`${origin}/sitemaps/orphans.xml.gz`, `${origin}/sitemaps/more.xml`])),
    // A .xml.gz file: gzip bytes as the body, no Content-Encoding.
    '/sitemaps/orphans.xml.gz': (_req: IncomingMessage, res: ServerResponse) =>
      res.writeHead(200, { 'content-type': 'application/gzip' }).end(
        gzipSync(
          urlset([
            ...SITEMAP_ORPHANS.map((page) => `${origin}/page/${page}${page === 39 ? '?utm_source=sitemap' : ''}`),
            'http://elsewhere.test/out-of-scope',
            `${origin}/private/from-sitemap`,
          ]),
        ),
      ),
    // Content-Encoding: gzip, decoded by the transport.
    '/sitemaps/more.xml': (_req: IncomingMessage, res: ServerResponse) =>
      res
        .writeHead(200, { 'content-type': 'application/xml', 'content-encoding': 'gzip' })
        .end(gzipSync(urlset([`${origin}/dup/a`, `${origin}/dup/b`, `${origin}/files/report.pdf`]))),
    '/dup/a': (_req: IncomingMessage, res: ServerResponse) => html(res, `<title>dup a</title><link rel="canonical" href="/canonical-target"><a href="/private/linked">p</a>`),
    '/dup/b': (_req: IncomingMessage, res: ServerResponse) => html(res, `<title>dup b</title><link rel="canonical" href="${origin}/canonical-target?utm_medium=x">`),
    '/canonical-target': (_req: IncomingMessage, res: ServerResponse) => html(res, `<title>the canonical page</title><a href="/private/linked">p</a>`),
    '/private/linked': (_req: IncomingMessage, res: ServerResponse) => html(res, '<title>private</title>'),
    '/private/from-sitemap': (_req: IncomingMessage, res: ServerResponse) => html(res, '<title>private</title>'),
    '/files/report.pdf': endlessPdf,
  };
  const site = await startSyntheticSite({ pages: DISCOVERY_PAGES, routes });
  origin = site.origin;
  return site;
}

/** The pages a crawl from page 0 plus the sitemap orphans reaches when pages 10-19 are excluded. */
export function expectedPages(graph: SiteGraph): number[] {
  const start = [0, ...SITEMAP_ORPHANS].filter((page) => !isExcludedPage(page));
  const seen = new Set(start);
  const queue = [...start];
  for (let page = queue.shift(); page !== undefined; page = queue.shift()) {
    for (const target of graph.linksOf(page)) {
      if (!seen.has(target) && !isExcludedPage(target)) {
        seen.add(target);
        queue.push(target);
      }
    }
  }
  return [...seen].sort((a, b) => a - b);
}

/** /page/N paths requested, as page numbers, sorted (repeats kept). */
export function requestedPages(site: SyntheticSite): number[] {
  return site.requests.flatMap((request) => /^\/page\/(\d+)/.exec(request.path)?.[1] ?? []).map(Number).sort((a, b) => a - b);
}

