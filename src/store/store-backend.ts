/**
 * What a store backend is: where a worker or `crawlflow results` opens crawls' frontier stores
 * and keeps their bodies. open-store-backend.ts chooses one from the configuration.
 */
import type { BodyStore } from '../bodies/body-store';
import type { FrontierStore } from './frontier-store';
import type { OpenStore } from './store-registry';

export class UnknownCrawlError extends Error {
  readonly code = 'unknown-crawl';
}

export interface StoreBackend {
  /** Where stores live, password redacted: for logs. */
  readonly description: string;
  /** Opens a crawl's store, creating it on first use (for StoreRegistry). */
  open: OpenStore;
  /** Whether the crawl has a store here, found without making one. */
  has(crawlId: string): Promise<boolean>;
  /** Opens the store of a crawl that has one, to read its results once through; UnknownCrawlError otherwise. */
  openExisting(crawlId: string): Promise<FrontierStore>;
  /** Where `storeBodies` crawls keep page bodies: somewhere every process that opens these stores reads. */
  readonly bodies: BodyStore;
  /** Fails now, with a clear error, if the store cannot be reached (a server database). */
  check(): Promise<void>;
  /** Releases what the backend holds (the connection pool); close the stores first. */
  close(): Promise<void>;
}
