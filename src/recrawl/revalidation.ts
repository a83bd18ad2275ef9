/**
 * Whether a recrawl sends the earlier crawl's validators (If-None-Match, If-Modified-Since).
 * A 304 carries the earlier record's `fields` over, which is right only when the earlier crawl
 * extracted them with the same settings. When the settings differ, no page is asked
 * conditionally: each is downloaded and extracted with this crawl's selectors, and its change
 * kind still comes from its content hash. Decided once per crawl (and worker), from the earlier
 * crawl's recorded config, so the per-page path reads nothing more.
 */
import { extractSchema } from '../shared/content-config';
import type { CrawlConfig } from '../shared/crawl-config';
import type { StoreRegistry } from '../store/store-registry';
import { recordedConfig } from '../results/recorded-settings';

/**
 * The extraction settings in one comparable form: each field resolved (compact strings
 * expanded, defaults applied), fields and their properties in name order. Undefined when they
 * do not parse, as settings recorded by another release may not.
 */
function resolvedExtraction(extract: unknown): string | undefined {
  const parsed = extractSchema.safeParse(extract ?? {});
  if (!parsed.success) return undefined;
  const fields = parsed.data;
  return JSON.stringify(Object.keys(fields).sort().map((name) => [name, JSON.stringify(fields[name], Object.keys(fields[name]).sort())]));
}

/** Whether two `extract` settings take the same fields from every page. */
export function sameExtraction(earlier: unknown, current: unknown): boolean {
  const resolved = resolvedExtraction(earlier);
  return resolved !== undefined && resolved === resolvedExtraction(current);
}

/**
 * Whether this recrawl may revalidate the earlier crawl's records. A store with no recorded
 * config (made before 0.3.0) does not say what its fields came from, so its pages are read anew.
 */
export async function revalidatesEarlierRecords(stores: StoreRegistry, config: Pick<CrawlConfig, 'recrawlOf' | 'extract'>): Promise<boolean> {
  const { recrawlOf } = config;
  if (recrawlOf === undefined) return false;
  const recorded = await stores.use(recrawlOf, recordedConfig);
  if (recorded === undefined) return false;
  return sameExtraction(recorded.extract, config.extract);
}
