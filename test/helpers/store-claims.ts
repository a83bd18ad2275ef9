/**
 * Which batch claimed each URL of a crawl, read from the store itself (SQLite or PostgreSQL):
 * what no record or history shows, for tests of who took which work.
 */
import Database from 'better-sqlite3';
import { Client as PgClient } from 'pg';
import { crawlStorePath } from '../../src/store/sqlite-store';
import type { TestTemporal } from './temporal';

export interface Claim {
  url: string;
  host: string;
  /** Null for a URL no batch claimed. */
  batchId: string | null;
}

/** Every URL of the crawl with its key and the batch that claimed it. */
export async function claimsOf(env: TestTemporal, crawlId: string): Promise<Claim[]> {
  if (!env.postgres) {
    const db = new Database(crawlStorePath(env.dataDir, crawlId), { readonly: true });
    try {
      // Rows carry their batch's key (src/store/batch-keys.ts).
      return db.prepare('SELECT url, host, k.batch_id AS "batchId" FROM urls LEFT JOIN batch_keys k ON k.key = urls.batch_id').all() as Claim[];
    } finally {
      db.close();
    }
  }
  const client = new PgClient({ connectionString: env.postgres.url });
  await client.connect();
  try {
    const { rows } = await client.query<Claim>(`SELECT url, host, batch_id AS "batchId" FROM crawlflow.urls WHERE crawl = (SELECT id FROM crawlflow.crawls WHERE name = $1)`, [crawlId]);
    return rows;
  } finally {
    await client.end();
  }
}
