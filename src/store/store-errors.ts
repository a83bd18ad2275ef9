/**
 * Which store errors are an outage (the database is down, restarting, or its file is locked
 * by another process) rather than a fault of the request. An outage is waited out: batches
 * pause and the crawl resumes by itself when the store answers, so no page is lost to it.
 * This is the one place that tells the two apart, for both stores.
 */
export class StoreUnavailableError extends Error {
  readonly code = 'store-unavailable';
}

/** Node socket errors of a connection that could not be made or was lost. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * PostgreSQL SQLSTATEs of a server that is going away or not there yet: connection
 * exceptions (08xxx), admin/crash shutdown and "cannot connect now" (57P01-57P03), too many
 * connections (53300).
 */
const POSTGRES_OUTAGE = /^(08...|57P0[123]|53300)$/;

/** SQLite: another connection holds the lock longer than the busy timeout. */
const SQLITE_OUTAGE = new Set(['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_RECOVERY', 'SQLITE_LOCKED']);

/** pg reports a lost connection, or a connection attempt past its timeout ("timeout expired"), by message only. */
const LOST_CONNECTION = /Connection terminated|connection timeout|^timeout expired$|Client has encountered a connection error|the database system is (starting up|shutting down)/i;

function isOutage(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof StoreUnavailableError) return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || POSTGRES_OUTAGE.test(code) || SQLITE_OUTAGE.has(code))) return true;
  if (err instanceof AggregateError) return err.errors.some(isOutage);
  return LOST_CONNECTION.test(err.message);
}

/** The error as a StoreUnavailableError when it is an outage; undefined otherwise. */
export function storeOutage(err: unknown): StoreUnavailableError | undefined {
  if (err instanceof StoreUnavailableError) return err;
  if (!isOutage(err)) return undefined;
  return new StoreUnavailableError(`the frontier store cannot be reached: ${(err as Error).message}`, { cause: err });
}

/**
 * The store answered, but what it holds for a crawl is damaged: its SQLite file is no database
 * or has corrupt pages, or PostgreSQL found corrupt data. Unlike an outage, waiting does not
 * cure it.
 */
export class DamagedStoreError extends Error {
  readonly code = 'damaged-store';
}

/** SQLite's codes for a file that is no database or is corrupt; PostgreSQL's data_corrupted and index_corrupted. */
const DAMAGE_CODES = /^(SQLITE_NOTADB|SQLITE_CORRUPT(_\w+)?|XX00[12])$/;

/** The error as a DamagedStoreError of the store `where` when it tells of damage; undefined otherwise. */
export function storeDamage(err: unknown, where: string): DamagedStoreError | undefined {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  if (typeof code !== 'string' || !DAMAGE_CODES.test(code)) return undefined;
  return new DamagedStoreError(`${where} cannot be read: ${(err as Error).message}`, { cause: err });
}
