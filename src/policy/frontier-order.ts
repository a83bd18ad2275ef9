/**
 * The order a host's URLs are fetched in (`frontierOrder`). By OPIC (Abiteboul et al. 2003, as in
 * Nutch), a fetched page hands its priority to its outlinks in equal shares, so a page with
 * thousands of links gives each of them a sliver and cannot crowd out the rest of its site
 * under `maxPages`. Breadth-first leaves every URL at the seeds' priority: discovery order.
 *
 * A URL keeps the share of its first discovery. Full OPIC would also add the shares of later
 * in-links, but that is a row write for every already-seen link of every page (about ten per
 * page on a dense site), on the path whose cost the crawl's speed is made of; the first share
 * is what protects a budget from a link farm.
 */
import type { FrontierOrder } from '../shared/crawl-config';
import type { FrontierEntry } from '../store/frontier-store';

/** Gives a page's found URLs their share of its priority; under breadth-first, nothing. */
export function sharePriority(entries: FrontierEntry[], pagePriority: number, order: FrontierOrder): FrontierEntry[] {
  if (order === 'breadth-first' || entries.length === 0) return entries;
  const share = pagePriority / entries.length;
  for (const entry of entries) entry.priority = share;
  return entries;
}
