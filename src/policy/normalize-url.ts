/**
 * URL normalization: the key under which the frontier deduplicates. The rules are set per
 * crawl (`normalize` in the crawl config) and compiled once into a pure function, since it
 * runs for every link of every page.
 *
 * Always applied: only http(s); scheme and host lower-cased and default ports dropped (WHATWG
 * URL does all three); dot segments resolved; an empty query ("?") and an empty fragment ("#")
 * dropped; URLs with credentials refused (they would reach records and logs).
 * Configurable (defaults in DEFAULT_NORMALIZE_RULES): the fragment, tracking parameters,
 * query order, trailing slashes and path case. Query order and path case are kept by default,
 * since servers may treat them as significant.
 */
import picomatch from 'picomatch/posix';

export const TRAILING_SLASH_RULES = ['keep', 'strip', 'add'] as const;
export type TrailingSlashRule = (typeof TRAILING_SLASH_RULES)[number];

export interface NormalizeRules {
  /** Drop `#fragment` (it never reaches the server; keep it only for hash-routed sites). */
  removeFragment: boolean;
  /** `strip`: /a/ -> /a; `add`: /a -> /a/ (not for a last segment with a dot, /a.html); the root path stays /. */
  trailingSlash: TrailingSlashRule;
  /** Query parameters removed, by name: globs (`utm_*`), case-insensitive. */
  stripParams: readonly string[];
  /** Sort query parameters by name (stable: repeated names keep their order). */
  sortQuery: boolean;
  /** Lower-case the path, for servers whose paths are case-insensitive. */
  lowercasePath: boolean;
}

/** Parameters that only say where a visitor came from: the same page with or without them. */
export const TRACKING_PARAMS: readonly string[] = ['utm_*', 'fbclid', 'gclid', 'dclid', 'gbraid', 'wbraid', 'msclkid', 'yclid', 'mc_cid', 'mc_eid', '_ga', '_gl', 'igshid'];

export const DEFAULT_NORMALIZE_RULES: Readonly<NormalizeRules> = {
  removeFragment: true,
  trailingSlash: 'keep',
  stripParams: TRACKING_PARAMS,
  sortQuery: false,
  lowercasePath: false,
};

/** A raw (possibly relative) URL to its frontier key, or undefined when it cannot be crawled. */
export type UrlNormalizer = (raw: string, base?: string | URL) => string | undefined;

/**
 * The same, as the parsed URL whose `href` is the key: for callers that go on to read its
 * parts (a page's links are checked against the crawl's scope by host), so that no link is
 * parsed a second time on the per-page path.
 */
export type UrlResolver = (raw: string, base?: string | URL) => URL | undefined;

/** The matcher of parameter names `stripParams` removes (globs, case-insensitive). */
export function paramMatcher(globs: readonly string[]): ((name: string) => boolean) | undefined {
  return globs.length === 0 ? undefined : picomatch([...globs], { nocase: true, dot: true });
}

function paramName(pair: string): string {
  const name = pair.split('=', 1)[0].replace(/\+/g, ' ');
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/** The query without stripped parameters, sorted if asked; each kept pair keeps its exact encoding. */
function rewriteQuery(query: string, strip: ((name: string) => boolean) | undefined, sort: boolean): string {
  let pairs = query.split('&').filter((pair) => pair !== '');
  if (strip) pairs = pairs.filter((pair) => !strip(paramName(pair)));
  if (sort) {
    const named = pairs.map((pair) => ({ pair, name: paramName(pair) }));
    named.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    pairs = named.map(({ pair }) => pair);
  }
  return pairs.join('&');
}

function withTrailingSlash(path: string, rule: TrailingSlashRule): string {
  if (rule === 'strip') return path.length > 1 && path.endsWith('/') ? path.replace(/\/+$/, '') || '/' : path;
  if (rule === 'add') return path.endsWith('/') || path.slice(path.lastIndexOf('/') + 1).includes('.') ? path : `${path}/`;
  return path;
}

/** `/`, `\`, tab, line feed, carriage return: after a leading `/`, each makes a link scheme-relative or is removed before parsing. */
const NOT_PATH_ONLY_SECOND = new Set(['/', '\\', '\t', '\n', '\r'].map((char) => char.charCodeAt(0)));

/**
 * `new URL(raw, base)`. A root-relative link (`/path`, the most common kind on a page) resolves
 * against the base's origin alone, so it is parsed as `origin + raw`: Node's URL parses the
 * base again for every link, even one given as a URL object, and that was half of what a
 * page's links cost. A second `/` or `\` (scheme-relative), or a tab or newline that parsing
 * removes and that could make it so, takes the full path; so do a base with credentials (a
 * relative link keeps them) and one that is not http(s) (its origin is opaque).
 */
function parseAgainst(raw: string, base: string | URL | undefined): URL {
  if (
    base instanceof URL &&
    raw.charCodeAt(0) === 0x2f &&
    !NOT_PATH_ONLY_SECOND.has(raw.charCodeAt(1)) &&
    (base.protocol === 'http:' || base.protocol === 'https:') &&
    base.username === '' &&
    base.password === ''
  ) {
    return new URL(base.origin + raw);
  }
  return new URL(raw, base);
}

/** Compiles a crawl's rules once into its resolver. */
export function buildResolver(rules: Readonly<NormalizeRules> = DEFAULT_NORMALIZE_RULES): UrlResolver {
  const strip = paramMatcher(rules.stripParams);
  const rewritesQuery = strip !== undefined || rules.sortQuery;
  const rewritesPath = rules.trailingSlash !== 'keep' || rules.lowercasePath;
  return (raw, base) => {
    let url: URL;
    try {
      url = parseAgainst(raw, base);
    } catch {
      return undefined;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (url.username || url.password) return undefined; // credentials never enter the frontier or logs
    // `hash` and `search` are '' for a bare '#' or '?' too: assigning '' drops them from href.
    // Each assignment re-serializes the URL, so it is made only where it changes something.
    if (url.hash === '' ? url.href.endsWith('#') : rules.removeFragment) url.hash = '';
    if (rewritesQuery && url.search) url.search = rewriteQuery(url.search.slice(1), strip, rules.sortQuery);
    if (url.search === '' && url.href.includes('?')) url.search = '';
    if (rewritesPath) {
      const path = withTrailingSlash(rules.lowercasePath ? url.pathname.toLowerCase() : url.pathname, rules.trailingSlash);
      if (path !== url.pathname) url.pathname = path;
    }
    return url;
  };
}

/** The normalizer that gives the `href` of what `resolve` resolves. */
export const hrefOf =
  (resolve: UrlResolver): UrlNormalizer =>
  (raw, base) =>
    resolve(raw, base)?.href;

/** Compiles a crawl's rules once into its normalizer. */
export function buildNormalizer(rules: Readonly<NormalizeRules> = DEFAULT_NORMALIZE_RULES): UrlNormalizer {
  return hrefOf(buildResolver(rules));
}

/** The default rules' resolver and normalizer, for callers without a crawl config. */
export const resolveUrl: UrlResolver = buildResolver();
export const normalizeUrl: UrlNormalizer = hrefOf(resolveUrl);

/** The host key used for politeness: hostname plus a non-default port. */
export function hostKey(url: string | URL): string {
  return (typeof url === 'string' ? new URL(url) : url).host;
}
