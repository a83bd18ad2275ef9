/**
 * Opens frontier stores where the configuration says they live (see store-url.ts): SQLite
 * files under the data dir, or a PostgreSQL database whose one connection pool is shared by
 * every crawl of the process. Stored bodies go with them: files next to the SQLite files, rows
 * of the same database. Workers and `crawlflow results` both choose here.
 */
import { existsSync } from 'node:fs';
import { FileBodyStore, type BodyStore } from '../bodies/body-store';
import type { FrontierStore } from './frontier-store';
import { SCAN_CACHE_KIB, SqliteFrontierStore, crawlStorePath } from './sqlite-store';
import type { OpenStore } from './store-registry';
import { describeStore, storeLocation, type StoreConfig } from './store-url';

export class UnknownCrawlError extends Error {
  readonly code = 'unknown-crawl';
}

export interface StoreBackend {
  /** Where stores live, password redacted: for logs. */
  readonly description: string;
  /** Opens a crawl's store, creating it on first use (for StoreRegistry). */
  open: OpenStore;
  /** Opens the store of a crawl that has one, to read its results once through; UnknownCrawlError otherwise. */
  openExisting(crawlId: string): Promise<FrontierStore>;
  /** Where `storeBodies` crawls keep page bodies: somewhere every process that opens these stores reads. */
  readonly bodies: BodyStore;
  /** Fails now, with a clear error, if the store cannot be reached (a server database). */
  check(): Promise<void>;
  /** Releases what the backend holds (the connection pool); close the stores first. */
  close(): Promise<void>;
}

/**
 * Rejects with StoreUrlError for a bad store URL: call it at startup. The PostgreSQL backend
 * (and the driver, about 50 ms of start-up CPU) is loaded only for a PostgreSQL URL.
 */
export async function openStoreBackend(config: StoreConfig): Promise<StoreBackend> {
  const location = storeLocation(config);
  const description = describeStore(location);
  if (location.kind === 'sqlite') {
    return {
      description,
      open: (crawlId) => new SqliteFrontierStore(crawlStorePath(location.dataDir, crawlId)),
      openExisting: async (crawlId) => {
        const file = crawlStorePath(location.dataDir, crawlId);
        if (!existsSync(file)) throw new UnknownCrawlError(`no results for crawl "${crawlId}" in ${location.dataDir}`);
        // Results are read once through: no crawl-sized cache (see SCAN_CACHE_KIB).
        return new SqliteFrontierStore(file, SCAN_CACHE_KIB);
      },
      bodies: new FileBodyStore(location.dataDir),
      check: async () => undefined,
      close: async () => undefined,
    };
  }
  return (await import('./postgres-backend.js')).postgresBackend(location, description, new FileBodyStore(config.dataDir));
}
