/**
 * What one tool fetched, as the site server counted it, checked against the site's reachable
 * pages: each must have been requested exactly once, and nothing else. The digest of the
 * requested set lets the bench show that all tools fetched the same pages.
 */
import { createHash } from 'node:crypto';
import type { SiteStats } from './site-server';

export interface PageSetCheck {
  /** Distinct pages requested. */
  pages: number;
  pageRequests: number;
  otherRequests: number;
  /** Reachable pages never requested, pages requested more than once, unreachable pages requested. */
  missing: number;
  duplicates: number;
  unexpected: number;
  /** The first few page numbers of each problem, for the report. */
  examples: { missing: number[]; duplicates: number[]; unexpected: number[] };
  /** sha256 (first 16 hex digits) of the requested-or-not bitmap: equal digests, equal sets. */
  digest: string;
  exactlyOnce: boolean;
  /** Seconds from the first page request to the last page response: the crawl window. */
  windowSeconds: number;
}

const EXAMPLES = 5;

/** Distinct pages over the crawl window: the rate every tool is compared by. */
export const pagesPerSecondOf = (check: PageSetCheck): number => check.pages / Math.max(1e-3, check.windowSeconds);

export async function fetchSiteStats(origin: string): Promise<SiteStats> {
  const response = await fetch(`${origin}/__stats`);
  if (!response.ok) throw new Error(`site server /__stats: HTTP ${response.status}`);
  return (await response.json()) as SiteStats;
}

export async function resetSiteStats(origin: string): Promise<void> {
  const response = await fetch(`${origin}/__reset`, { method: 'POST' });
  if (!response.ok) throw new Error(`site server /__reset: HTTP ${response.status}`);
}

/** `reachable[n]` is 1 when page n is reachable from the seed. */
export function checkPageSet(stats: SiteStats, reachable: Uint8Array): PageSetCheck {
  const counts = Buffer.from(stats.countsBase64, 'base64');
  const bitmap = new Uint8Array(counts.length);
  const result: PageSetCheck = {
    pages: 0,
    pageRequests: stats.pageRequests,
    otherRequests: stats.otherRequests,
    missing: 0,
    duplicates: 0,
    unexpected: 0,
    examples: { missing: [], duplicates: [], unexpected: [] },
    digest: '',
    exactlyOnce: false,
    windowSeconds: stats.firstRequestAt === null || stats.lastResponseAt === null ? 0 : (stats.lastResponseAt - stats.firstRequestAt) / 1000,
  };
  const note = (kind: 'missing' | 'duplicates' | 'unexpected', page: number): void => {
    result[kind] += 1;
    if (result.examples[kind].length < EXAMPLES) result.examples[kind].push(page);
  };
  for (let page = 0; page < counts.length; page += 1) {
    const count = counts[page];
    if (count > 0) {
      bitmap[page] = 1;
      result.pages += 1;
    }
    if (reachable[page] && count === 0) note('missing', page);
    if (count > 1) note('duplicates', page);
    if (!reachable[page] && count > 0) note('unexpected', page);
  }
  result.digest = createHash('sha256').update(bitmap).digest('hex').slice(0, 16);
  result.exactlyOnce = result.missing === 0 && result.duplicates === 0 && result.unexpected === 0;
  return result;
}
