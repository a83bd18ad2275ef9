/**
 * Reading the crawl's sitemaps, once, when a fresh crawl opens: what they list joins the
 * frontier, and a failure leaves the crawl to its seeds.
 */
import { isCancellation, log } from '@temporalio/workflow';
import type { CrawlView } from '../shared/crawl-types';
import type { CrawlPlan } from '../scheduling/crawl-plan';
import { discovery } from './crawl-activities';

/** The crawl's view after its sitemaps were read; undefined when it reads none or they could not be read. */
export async function readSitemaps(crawlId: string, plan: CrawlPlan): Promise<CrawlView | undefined> {
  if (!plan.readsSitemaps) return undefined;
  try {
    const { frontier, failures, ...counts } = await discovery.discoverSitemaps({ crawlId, configVersion: plan.configVersion });
    log.info('sitemaps read', { crawlId, ...counts, failures: failures.map(({ url, reason }) => `${reason} ${url}`) });
    return frontier;
  } catch (err) {
    if (isCancellation(err)) throw err;
    log.warn('sitemaps could not be read; the crawl goes on from its seeds', { crawlId, error: String(err) });
    return undefined;
  }
}
