/** The small activities around the batches: seeding the frontier, giving up a batch, finishing. */
import type { BatchRef, BatchTotals, CrawlTotals, FrontierSnapshot, SeedFrontierInput } from '../shared/crawl-types';
import { buildNormalizer } from '../policy/normalize-url';
import { markRendered, renderMatcher } from '../policy/render-routing';
import type { CrawlConfig } from '../shared/crawl-config';
import type { FrontierEntry } from '../store/frontier-store';
import type { StoreRegistry } from '../store/store-registry';
import { markGone } from '../recrawl/mark-gone';
import { checkPreviousCrawl } from '../recrawl/previous-crawl';

const SNAPSHOT_HOSTS = 200;

/** Seeds under the crawl's normalization rules (scope and filters do not apply to them), marked for rendering by `render.match`. */
function seedEntries(config: Pick<CrawlConfig, 'seeds' | 'normalize' | 'render'>): FrontierEntry[] {
  const normalizeUrl = buildNormalizer(config.normalize);
  const entries = config.seeds.flatMap((seed) => {
    const url = normalizeUrl(seed);
    return url ? [{ url, host: new URL(url).host, depth: 0 }] : [];
  });
  return markRendered(entries, renderMatcher(config));
}

export function createLifecycleActivities(stores: StoreRegistry) {
  return {
    /** Idempotent: seeds already in the frontier are not added again. */
    async seedFrontier({ crawlId, config }: SeedFrontierInput): Promise<FrontierSnapshot> {
      if (config.recrawlOf !== undefined) await checkPreviousCrawl(stores, crawlId, config.recrawlOf);
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

    /**
     * The crawl has stopped: claimed URLs go back to the queue, and the totals are read. A
     * recrawl that reached everything it could records the previous crawl's unreached URLs as gone.
     */
    finishCrawl({ crawlId, recrawlOf }: { crawlId: string; recrawlOf?: string }): Promise<CrawlTotals> {
      return stores.use(crawlId, async (store) => {
        await store.releaseAll();
        if (recrawlOf !== undefined && (await store.totals()).queued === 0) {
          await stores.use(recrawlOf, (previous) => markGone(previous, store, new Date().toISOString()));
        }
        return store.totals();
      });
    },
  };
}
