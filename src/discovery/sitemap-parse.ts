/**
 * Sitemap parsing (sitemaps.org protocol), pure: bytes in, URLs out. Handles `<urlset>`
 * sitemaps, `<sitemapindex>` indexes, gzipped files (by their magic bytes, whatever the URL
 * or Content-Type says) and plain-text sitemaps (one URL per line).
 *
 * XML is read with htmlparser2's streaming parser in XML mode (already a dependency): it
 * builds no tree, so a 50 MB sitemap costs one pass and the URL strings, and it is lenient, so
 * a sitemap with broken markup or cut short yields the entries before the damage, as search
 * engines read them. Entities and CDATA are decoded; namespace prefixes are ignored.
 */
import { gunzipSync } from 'node:zlib';
import { Parser } from 'htmlparser2';

/** The protocol's limits for one sitemap file: 50,000 URLs and 50 MB (52,428,800 bytes) uncompressed. */
export const SITEMAP_MAX_URLS = 50_000;
export const SITEMAP_MAX_BYTES = 50 * 1024 * 1024;

export type SitemapKind = 'urlset' | 'sitemapindex' | 'text';

export interface ParsedSitemap {
  kind: SitemapKind;
  /** `<loc>` values in document order (URLs for a urlset or text file, sitemap URLs for an index), trimmed. */
  locs: string[];
  /** More entries than `maxLocs` were present; the rest were ignored. */
  truncated: boolean;
}

export type SitemapErrorCode = 'http-status' | 'not-a-sitemap' | 'too-large' | 'bad-gzip';

export class SitemapError extends Error {
  constructor(
    readonly code: SitemapErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SitemapError';
  }
}

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/** The sitemap's bytes, gunzipped if they are gzip (`.xml.gz`), never more than `maxBytes` of them. */
export function decodeSitemapBody(body: Buffer, maxBytes = SITEMAP_MAX_BYTES): Buffer {
  if (!body.subarray(0, 2).equals(GZIP_MAGIC)) {
    if (body.length > maxBytes) throw new SitemapError('too-large', `sitemap exceeds ${maxBytes} bytes`);
    return body;
  }
  try {
    return gunzipSync(body, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new SitemapError('too-large', `gzipped sitemap inflates past ${maxBytes} bytes`);
    throw new SitemapError('bad-gzip', `not valid gzip: ${(err as Error).message}`);
  }
}

/** `ns:urlset` -> `urlset`. */
const localName = (name: string): string => name.slice(name.indexOf(':') + 1).toLowerCase();

/** The entry element of each kind: `<url><loc>` in a urlset, `<sitemap><loc>` in an index. */
const ENTRY_OF: Record<string, string> = { urlset: 'url', sitemapindex: 'sitemap' };

function parseText(text: string, maxLocs: number): ParsedSitemap {
  const locs: string[] = [];
  let truncated = false;
  for (const line of text.split(/\r?\n/)) {
    const url = line.trim();
    if (!/^https?:\/\//i.test(url)) continue;
    if (locs.length >= maxLocs) {
      truncated = true;
      break;
    }
    locs.push(url);
  }
  return { kind: 'text', locs, truncated };
}

function parseXml(xml: string, maxLocs: number): ParsedSitemap {
  let root: string | undefined;
  const path: string[] = [];
  const locs: string[] = [];
  let loc: string | null = null;
  let truncated = false;
  const parser = new Parser(
    {
      onopentagname(name) {
        const local = localName(name);
        root ??= local;
        path.push(local);
        // A <loc> counts directly inside the root's entry element only (not, say, <image:loc>).
        if (local === 'loc' && path.length === 3 && path[1] === ENTRY_OF[root]) loc = '';
      },
      ontext(text) {
        if (loc !== null) loc += text;
      },
      onclosetag(_name, isImplied) {
        if (path.pop() === 'loc' && loc !== null) {
          const value = loc.trim();
          loc = null;
          // A <loc> closed only by the end of the input was cut short: its URL is not whole.
          if (value === '' || isImplied) return;
          if (locs.length < maxLocs) locs.push(value);
          else truncated = true;
        }
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.end(xml);
  if (root !== 'urlset' && root !== 'sitemapindex') {
    throw new SitemapError('not-a-sitemap', root === undefined ? 'no XML element found' : `root element <${root}> is neither <urlset> nor <sitemapindex>`);
  }
  return { kind: root, locs, truncated };
}

/**
 * The entries of a sitemap file (already decoded by `decodeSitemapBody`): XML when its first
 * non-blank character is `<`, else a text sitemap. At most `maxLocs` entries are kept.
 */
export function parseSitemap(body: Buffer | string, maxLocs = SITEMAP_MAX_URLS): ParsedSitemap {
  const text = (typeof body === 'string' ? body : body.toString('utf8')).replace(/^\uFEFF/, '');
  return text.trimStart().startsWith('<') ? parseXml(text, maxLocs) : parseText(text, maxLocs);
}
