/**
 * The sitemap activity: reads a crawl's sitemaps once, when it starts, and queues their URLs
 * (src/discovery/read-sitemaps.ts). Heartbeated by a ticker like a batch, since a large
 * sitemap index is many fetches; a retried attempt starts over, which queues nothing twice
 * (the frontier's enqueue is idempotent).
 */
import { Context } from '@temporalio/activity';
import type { CrawlView, SeedFrontierInput } from '../shared/crawl-types';
import { AddressGuard } from '../fetch/address-guard';
import { readSitemaps, type SitemapReport } from '../discovery/read-sitemaps';
import { buildUrlPolicy } from '../policy/url-policy';
import { politenessKeys } from '../policy/politeness-key';
import { seedFileScope } from './seed-scope';
import type { ActivityDeps } from './deps';
import type { ConfigRef } from './recorded-config';
import { SNAPSHOT_HOSTS } from './crawl-batch';
import { HEARTBEAT_TICK_MS } from '../shared/activity-timing';

export interface SitemapDiscoveryResult extends SitemapReport {
  /** The crawl after the sitemaps' URLs were queued (a 0.2.0 run reads it as its snapshot). */
  frontier: CrawlView;
}

/** `input` names the crawl's recorded config, or (0.2.0 runs) carries the config itself. */
export function createSitemapDiscovery({ stores, transport, robots, metrics, configs }: ActivityDeps) {
  return function discoverSitemaps(input: ConfigRef | SeedFrontierInput): Promise<SitemapDiscoveryResult> {
    const { crawlId } = input;
    return stores.use(crawlId, async (store) => {
      const config = 'config' in input ? input.config : await configs.get(store, input);
      const context = Context.current();
      const ticker = setInterval(() => context.heartbeat(), HEARTBEAT_TICK_MS);
      context.heartbeat();
      try {
        const reading = {
          crawlId,
          config,
          store,
          transport,
          robots,
          guard: AddressGuard.forCrawl(config),
          urls: buildUrlPolicy(config, await seedFileScope(store, config)),
          keys: politenessKeys(config, (hostname) => transport.resolve(hostname)),
          signal: context.cancellationSignal,
        };
        const report = await readSitemaps(reading);
        for (const [reason, n] of Object.entries(report.dropped)) metrics.droppedUrls.inc({ reason }, n);
        if (report.accepted > report.added) metrics.droppedUrls.inc({ reason: 'already-seen' }, report.accepted - report.added);
        const { failures, ...counts } = report;
        context.log.info('sitemaps read', { crawlId, ...counts });
        for (const failure of failures) context.log.warn('sitemap not read', { crawlId, ...failure });
        return { ...report, frontier: await store.view(SNAPSHOT_HOSTS) };
      } finally {
        clearInterval(ticker);
      }
    });
  };
}
