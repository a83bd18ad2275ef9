/** Seeds as frontier entries: the crawl's normalization applies (scope and filters do not: the user named them), and `render.match` marks them. */
import { buildNormalizer } from '../policy/normalize-url';
import { markRendered, renderMatcher } from '../policy/render-routing';
import type { CrawlConfig } from '../shared/crawl-config';
import type { FrontierEntry } from '../store/frontier-store';

export function seedEntries(config: Pick<CrawlConfig, 'normalize' | 'render'>, seeds: readonly string[]): FrontierEntry[] {
  const normalizeUrl = buildNormalizer(config.normalize);
  const entries = seeds.flatMap((seed) => {
    const url = normalizeUrl(seed);
    return url ? [{ url, host: new URL(url).host, depth: 0 }] : [];
  });
  return markRendered(entries, renderMatcher(config));
}
