/** What activities are built from: created once per worker, shared by every activity call. */
import type { StoreRegistry } from '../store/store-registry';
import type { Transport } from '../fetch/transport';
import type { RobotsCache } from '../fetch/robots';
import type { CrawlMetrics } from '../observability/metrics';
import type { BodyStore } from '../bodies/body-store';
import type { RecordedConfigs } from './recorded-config';

export interface ActivityDeps {
  stores: StoreRegistry;
  /** Whether a crawl has a store, found without making one (StoreRegistry makes what it opens). */
  crawlExists(crawlId: string): Promise<boolean>;
  transport: Transport;
  robots: RobotsCache;
  metrics: CrawlMetrics;
  workerId: string;
  /** Where `storeBodies` crawls keep page bodies. */
  bodies: BodyStore;
  /** Each crawl's recorded config, as this worker last read it. */
  configs: RecordedConfigs;
}
