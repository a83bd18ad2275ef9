/**
 * A throwaway PostgreSQL server for a test file: Debian's binaries (package `postgresql`),
 * a cluster in a temp dir, listening on a free loopback port and a unix socket in that dir,
 * fsync off. initdb and postgres refuse to run as root, so as root they run as the
 * `postgres` OS user (runuser); otherwise as the current user.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freeServerPort } from '../../src/workers/runtime';

const run = promisify(execFile);

export interface TestPostgres {
  /** postgres://crawlflow:<password>@127.0.0.1:<port>/crawlflow (trust auth: the password only tests redaction). */
  url: string;
  /** A fresh empty database on the same server, for a test that needs its own schema. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown: connections are cut), as an outage does. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export const PASSWORD = 's3cret-pw';

/** A PostgreSQL client or server program of Debian's newest installed version. */
export function postgresBinary(name: string): string {
  return join(binDir(), name);
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions.length === 0) throw new Error(`no PostgreSQL under ${root}: run \`node scripts/check-test-deps.mjs\` (npm test's preflight), which installs it or prints the apt-get command`);
  return join(root, versions[0], 'bin');
}

/** `settings`: extra server settings, e.g. `-c shared_preload_libraries=pg_stat_statements`. */
export async function startTestPostgres(options: { settings?: string[] } = {}): Promise<TestPostgres> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'crawlflow-pg-'));
  const asRoot = userInfo().uid === 0;
  const as = async (command: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]] : [join(bin, command), args];
    return run(file, argv, { cwd: dir, timeout: 60_000 });
  };
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const data = join(dir, 'data');
  const port = await freeServerPort();
  await as('initdb', ['-D', data, '-U', 'crawlflow', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const settings = [`-p ${port}`, '-c listen_addresses=127.0.0.1', `-c unix_socket_directories=${dir}`, '-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off', ...(options.settings ?? [])];
  const start = async () => void (await as('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', settings.join(' '), '-w', '-t', '60', 'start']));
  await start();
  const urlOf = (database: string) => `postgres://crawlflow:${PASSWORD}@127.0.0.1:${port}/${database}`;
  const createDatabase = async (name: string) => {
    const admin = new Client({ connectionString: urlOf('postgres') });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE "${name}"`);
    } finally {
      await admin.end();
    }
    return urlOf(name);
  };
  const url = await createDatabase('crawlflow');
  return {
    url,
    createDatabase,
    start,
    stop: async () => void (await as('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'])),
    async close() {
      await as('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
