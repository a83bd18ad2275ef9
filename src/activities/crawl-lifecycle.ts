/** The small activities around the batches: seeding the frontier, giving up a batch, finishing. */
import type { BatchRef, BatchTotals, CrawlTotals, FrontierSnapshot, SeedFrontierInput } from '../shared/crawl-types';
import { normalizeUrl } from '../policy/normalize-url';
import { markRendered, renderMatcher } from '../policy/render-routing';
import type { FrontierEntry } from '../store/frontier-store';
import type { StoreRegistry } from '../store/store-registry';

const SNAPSHOT_HOSTS = 200;

function seedEntries(config: SeedFrontierInput['config']): FrontierEntry[] {
  const entries = config.seeds.flatMap((seed) => {
    const url = normalizeUrl(seed);
    return url ? [{ url, host: new URL(url).host, depth: 0 }] : [];
  });
  return markRendered(entries, renderMatcher(config));
}

export function createLifecycleActivities(stores: StoreRegistry) {
  return {
    /** Idempotent: seeds already in the frontier are not added again. */
    seedFrontier({ crawlId, config }: SeedFrontierInput): Promise<FrontierSnapshot> {
      return stores.use(crawlId, async (store) => {
        await store.enqueue(seedEntries(config));
        return store.snapshot(SNAPSHOT_HOSTS);
      });
    },

    /** Seeds added to a running crawl: like seedFrontier, and says how many were new. */
    addSeeds({ crawlId, config }: SeedFrontierInput): Promise<{ added: number; frontier: FrontierSnapshot }> {
      return stores.use(crawlId, async (store) => {
        const added = await store.enqueue(seedEntries(config));
        return { added, frontier: await store.snapshot(SNAPSHOT_HOSTS) };
      });
    },

    /** A batch that kept failing: its unfinished URLs get a final `batch-failed` record. */
    abandonBatch({ crawlId, batchId }: BatchRef): Promise<BatchTotals> {
      return stores.use(crawlId, async (store) => {
        await store.abandon(batchId, 'batch-failed', new Date().toISOString());
        return store.batchTotals(batchId);
      });
    },

    /** The crawl has stopped: claimed URLs go back to the queue, and the totals are read. */
    finishCrawl({ crawlId }: { crawlId: string }): Promise<CrawlTotals> {
      return stores.use(crawlId, async (store) => {
        await store.releaseAll();
        return store.totals();
      });
    },
  };
}
