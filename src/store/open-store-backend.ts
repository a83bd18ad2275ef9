/**
 * Opens frontier stores where the configuration says they live (see store-url.ts): SQLite
 * files under the data dir, or a PostgreSQL database whose one connection pool is shared by
 * every crawl of the process. Stored bodies go with them: files next to the SQLite files, rows
 * of the same database. Workers and `crawlflow results` both choose here.
 */
import { existsSync } from 'node:fs';
import { FileBodyStore } from '../bodies/body-store';
import { SCAN_CACHE_KIB, SqliteFrontierStore, crawlStorePath } from './sqlite-store';
import { UnknownCrawlError, type StoreBackend } from './store-backend';
import { describeStore, storeLocation, type StoreConfig } from './store-url';

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
