/**
 * The PostgreSQL side of store-backend.ts: one connection pool per process, shared by every
 * crawl's store and by the stored bodies (rows of the same database; `files` holds bodies
 * a crawl wrote before it moved to the database).
 */
import type { BodyStore } from '../bodies/body-store';
import { PostgresBodyStore } from '../bodies/postgres-body-store';
import { PostgresDatabase } from './postgres-database';
import { PostgresFrontierStore } from './postgres-store';
import { UnknownCrawlError, type StoreBackend } from './store-backend';
import type { StoreLocation } from './store-url';

export function postgresBackend(location: Extract<StoreLocation, { kind: 'postgres' }>, description: string, files: BodyStore): StoreBackend {
  const db = new PostgresDatabase(location.url, location.redacted, location.poolMax);
  return {
    description,
    open: (crawlId) => new PostgresFrontierStore(db, crawlId),
    has: async (crawlId) => (await db.existingCrawlKey(crawlId)) !== undefined,
    openExisting: async (crawlId) => {
      const key = await db.existingCrawlKey(crawlId);
      if (key === undefined) throw new UnknownCrawlError(`no results for crawl "${crawlId}" in ${description}`);
      return new PostgresFrontierStore(db, crawlId, key);
    },
    bodies: new PostgresBodyStore(db, files),
    check: () => db.ready(),
    close: () => db.close(),
  };
}
