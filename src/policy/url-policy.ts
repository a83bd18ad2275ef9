/**
 * What a crawl's config says about any URL, built once per crawl: its frontier key (the
 * crawl's normalization rules) and whether it may be followed (scope, then exclude, then
 * include). Links, redirects and sitemap entries all go through it; seeds are only
 * normalized, since the user named them.
 */
import type { CrawlConfig } from '../shared/crawl-config';
import { buildResolver, hrefOf, type UrlNormalizer, type UrlResolver } from './normalize-url';
import { buildScope } from './scope';
import { anyUrlPattern } from './url-patterns';

/** Why a URL is not followed (bounded set: a metric label and part of a skip reason). */
export type AdmitRefusal = 'out-of-scope' | 'excluded' | 'not-included';

export interface UrlPolicy {
  normalize: UrlNormalizer;
  /** `normalize`, returning the parsed URL (see `UrlResolver`). */
  resolve: UrlResolver;
  /** null when the URL may be followed, else why not. */
  admit(url: URL): AdmitRefusal | null;
}

export type UrlPolicyConfig = Pick<CrawlConfig, 'scope' | 'seeds' | 'include' | 'exclude' | 'normalize'>;

/** `seedScopeKeys`: the scope keys of the crawl's seed file, as the store keeps them (see scope.ts). */
export function buildUrlPolicy(config: UrlPolicyConfig, seedScopeKeys: Iterable<string> = []): UrlPolicy {
  const inScope = buildScope(config.scope, config.seeds, seedScopeKeys);
  const excluded = anyUrlPattern(config.exclude);
  const included = anyUrlPattern(config.include);
  const resolve = buildResolver(config.normalize);
  return {
    normalize: hrefOf(resolve),
    resolve,
    admit(url) {
      if (!inScope(url)) return 'out-of-scope';
      if (excluded?.(url)) return 'excluded';
      if (included && !included(url)) return 'not-included';
      return null;
    },
  };
}
