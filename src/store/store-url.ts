/**
 * Which frontier store a process uses, from its configuration: unset means one SQLite file
 * per crawl under the data dir (the default); a `postgres://` URL means one PostgreSQL
 * database shared by every worker on every machine. Parsed once at startup, so a bad URL
 * stops a command before anything starts, and only ever shown with its password redacted.
 */

export type StoreLocation =
  | { kind: 'sqlite'; dataDir: string }
  | {
      kind: 'postgres';
      /** The URL as given, password included: for the driver only, never for logs. */
      url: string;
      /** The URL with its password replaced: for logs and errors. */
      redacted: string;
      /** Connections in this process's pool (`?pool_max=`, default 10). */
      poolMax: number;
    };

/** What a command was told: its data dir and, maybe, a store URL (`--store`, CRAWLFLOW_STORE_URL). */
export interface StoreConfig {
  dataDir: string;
  storeUrl?: string;
}

export class StoreUrlError extends Error {
  readonly code = 'invalid-store-url';
}

const DEFAULT_POOL_MAX = 10;
const POOL_MAX_PARAM = 'pool_max';

/** The URL with any password replaced by `redacted`; text that is no URL is not echoed at all. */
export function redactStoreUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return '(unparsable URL)';
  }
  if (url.password) url.password = 'redacted';
  for (const key of [...url.searchParams.keys()]) if (/pass/i.test(key)) url.searchParams.set(key, 'redacted');
  return url.href;
}

export function storeLocation({ dataDir, storeUrl }: StoreConfig): StoreLocation {
  if (storeUrl === undefined || storeUrl.trim() === '') return { kind: 'sqlite', dataDir };
  const fail = (why: string): never => {
    throw new StoreUrlError(`--store (or CRAWLFLOW_STORE_URL) ${redactStoreUrl(storeUrl)}: ${why}`);
  };
  let url: URL;
  try {
    url = new URL(storeUrl);
  } catch {
    return fail('not a URL; expected postgres://user:password@host:5432/database (or leave it unset for SQLite files under the data dir)');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') return fail(`unsupported scheme "${url.protocol}"; expected postgres://`);
  if (!url.hostname && !url.searchParams.get('host')) return fail('no host; expected postgres://user:password@host:5432/database');
  if (url.pathname.length <= 1) return fail('no database name; expected postgres://user:password@host:5432/database');
  let poolMax = DEFAULT_POOL_MAX;
  const poolParam = url.searchParams.get(POOL_MAX_PARAM);
  if (poolParam !== null) {
    poolMax = Number(poolParam);
    if (!Number.isInteger(poolMax) || poolMax < 1 || poolMax > 1_000) fail(`${POOL_MAX_PARAM} must be an integer from 1 to 1000 (got "${poolParam}")`);
    url.searchParams.delete(POOL_MAX_PARAM);
  }
  return { kind: 'postgres', url: url.href, redacted: redactStoreUrl(url.href), poolMax };
}

/** A location's description for logs. */
export function describeStore(location: StoreLocation): string {
  return location.kind === 'sqlite' ? `sqlite files in ${location.dataDir}` : location.redacted;
}
