/**
 * Include and exclude patterns of a crawl, compiled once into predicates over URLs.
 *
 * A pattern is one of:
 * - `re:<regular expression>`: JavaScript syntax, tested (unanchored) against the whole
 *   normalized URL, e.g. `re:\?page=\d{3,}`;
 * - a glob starting with `/`: matched against the path and query, e.g. `/blog/**`, `/search*`;
 * - a glob starting with a scheme (`http://`, `https://`): matched against the whole URL,
 *   e.g. `https://*.example.com/docs/**`.
 * Globs are picomatch's: `*` stays within one path segment, `**` crosses segments, `{a,b}`
 * alternatives, `[abc]` classes; a `?` is a one-character wildcard, so a literal query is
 * better written with `*` or as a regex.
 */
import picomatch from 'picomatch/posix';

export type UrlPattern = (url: URL) => boolean;

export const REGEX_PREFIX = 're:';

export class InvalidUrlPatternError extends Error {
  readonly code = 'invalid-url-pattern';
}

function compileRegex(source: string): UrlPattern {
  if (source === '') throw new InvalidUrlPatternError('empty regular expression after "re:"');
  let regex: RegExp;
  try {
    regex = new RegExp(source);
  } catch (err) {
    throw new InvalidUrlPatternError(`invalid regular expression: ${(err as Error).message}`);
  }
  return (url) => regex.test(url.href);
}

function compileGlob(glob: string): UrlPattern {
  let matches: (text: string) => boolean;
  try {
    matches = picomatch(glob, { dot: true });
  } catch (err) {
    throw new InvalidUrlPatternError(`invalid glob: ${(err as Error).message}`);
  }
  if (glob.startsWith('/')) return (url) => matches(url.pathname + url.search);
  return (url) => matches(url.href);
}

/** One pattern's predicate; an unusable pattern throws InvalidUrlPatternError saying why. */
export function compileUrlPattern(pattern: string): UrlPattern {
  if (pattern.startsWith(REGEX_PREFIX)) return compileRegex(pattern.slice(REGEX_PREFIX.length));
  if (pattern.startsWith('/') || /^https?:\/\//i.test(pattern)) return compileGlob(pattern);
  throw new InvalidUrlPatternError('a glob must start with / (matched against path and query) or http(s):// (the whole URL); write a regular expression as re:<regex>');
}

/** True when any of the patterns matches; undefined for an empty list. */
export function anyUrlPattern(patterns: readonly string[]): UrlPattern | undefined {
  if (patterns.length === 0) return undefined;
  const compiled = patterns.map(compileUrlPattern);
  return (url) => compiled.some((matches) => matches(url));
}
