/**
 * Opens frontier stores where the configuration says they live (see store-url.ts): SQLite
 * files under the data dir, or a PostgreSQL database whose one connection pool is shared by
 * every crawl of the process. Stored bodies go with them: files next to the SQLite files, rows
 * of the same database. Workers and `crawlflow results` both choose here.
 */
import { existsSync } from 'node:fs';
import { FileBodyStore } from '../bodies/body-store';
import { SqliteFrontierStore, crawlStorePath, readStoreFile } from './sqlite-store';
import { UnknownCrawlError, type StoreBackend } from './store-backend';
import { describeStore, storeLocation, type StoreConfig } from './store-url';

/**
 * Rejects with StoreUrlError for a bad store URL: call it at startup. The PostgreSQL backend
 * (and the driver, about 50 ms of start-up CPU) is loaded only for a PostgreSQL URL.
 */
export async function openStoreBackend(config: StoreConfig): Promise<StoreBackend> {
  const location = storeLocation(config);
  if (location.kind === 'sqlite') return sqliteBackend(location.dataDir);
  return (await import('./postgres-backend.js')).postgresBackend(location, describeStore(location), new FileBodyStore(config.dataDir));
}

/** SQLite files under `dataDir`, one a crawl, with the crawls' stored bodies beside them. */
export function sqliteBackend(dataDir: string): StoreBackend {
  return {
    description: describeStore({ kind: 'sqlite', dataDir }),
    open: (crawlId) => new SqliteFrontierStore(crawlStorePath(dataDir, crawlId)),
    has: async (crawlId) => existsSync(crawlStorePath(dataDir, crawlId)),
    openExisting: async (crawlId) => {
      const file = crawlStorePath(dataDir, crawlId);
      const unknown = (why: string) => new UnknownCrawlError(`no results for crawl "${crawlId}" in ${dataDir}${why}`);
      if (!existsSync(file)) throw unknown('');
      return readStoreFile(file, (why) => unknown(`: ${why}`));
    },
    bodies: new FileBodyStore(dataDir),
    check: async () => undefined,
    close: async () => undefined,
  };
}
