/**
 * URL normalization: the key under which the frontier deduplicates. Pure and cheap, since it
 * runs for every link of every page.
 *
 * Rules: only http(s); scheme and host lower-cased and default ports dropped (WHATWG URL does
 * both); dot segments resolved; the fragment dropped; an empty query ("?") dropped. Query
 * parameter order and path case are kept, since servers may treat them as significant.
 */
export function normalizeUrl(raw: string, base?: string | URL): string | undefined {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password) return undefined; // credentials never enter the frontier or logs
  url.hash = '';
  if (!url.search) url.search = ''; // `search` is '' for a bare '?': assigning drops it from href
  return url.href;
}

/** The host key used for politeness: hostname plus a non-default port. */
export function hostKey(url: string | URL): string {
  return (typeof url === 'string' ? new URL(url) : url).host;
}
