/**
 * URL patterns of crawl settings (`render.match`), compiled once per crawl into one pure
 * predicate. A pattern is either a regular expression written `/body/flags`, or a glob over
 * the whole normalized URL where `**` matches anything and `*` anything but `/`.
 */
export type UrlMatcher = (url: string) => boolean;

export class InvalidUrlPatternError extends Error {
  readonly code = 'invalid-url-pattern';
}

const REGEX_LITERAL = /^\/(.+)\/([a-z]*)$/s;
/** Flags that keep `test` stateless (no `g` or `y`). */
const ALLOWED_FLAGS = /^[imsu]*$/;

function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    if (glob[i] === '*' && glob[i + 1] === '*') {
      source += '.*';
      i++;
    } else if (glob[i] === '*') {
      source += '[^/]*';
    } else {
      source += glob[i].replace(/[.+?^${}()|[\]\\/-]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`);
}

/** One pattern as a RegExp; throws `InvalidUrlPatternError` with the reason. */
export function compileUrlPattern(pattern: string): RegExp {
  const literal = REGEX_LITERAL.exec(pattern);
  if (literal === null) return globToRegExp(pattern);
  const [, body, flags] = literal;
  if (!ALLOWED_FLAGS.test(flags)) throw new InvalidUrlPatternError(`regular expression flags must be among i, m, s, u (got "${flags}")`);
  try {
    return new RegExp(body, flags);
  } catch (err) {
    throw new InvalidUrlPatternError(`not a valid regular expression: ${(err as Error).message}`);
  }
}

/** Whether a URL matches any of the patterns; matches nothing when there are none. */
export function buildUrlMatcher(patterns: readonly string[]): UrlMatcher {
  const compiled = patterns.map(compileUrlPattern);
  return (url) => compiled.some((regex) => regex.test(url));
}
