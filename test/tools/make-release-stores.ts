/**
 * Makes the store files of old releases that the migration tests open (test/fixtures/stores):
 * each release is checked out from git and built (test/helpers/releases.ts), and run as a
 * user ran it (`crawlflow demo`: its embedded dev server, its worker, its synthetic site); its
 * crawl store and its own results export are kept. Run with `npm run make-release-stores`
 * when a release is added to RELEASES: it makes the files of releases that have none, and
 * never remakes a committed one. Both releases had the SQLite store only; the PostgreSQL store
 * came in the last 0.2.0 on main, whose `crawlflow demo --store postgres://...` database is
 * kept as a plain `pg_dump` (v0.2.0-final.postgres.sql) with its own results export.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/temporal/project-paths';
import { freeServerPort } from '../../src/workers/runtime';
import { commitBuild, FINAL_0_2_0, releaseBuild, RELEASES, type ReleaseVersion } from '../helpers/releases';
import { postgresBinary, startTestPostgres } from '../helpers/postgres';

/** The crawl ID of each release's fixture crawl. */
const releaseCrawlId = (version: string): string => `release-${version}`;
export const FIXTURE_DIR = join(projectRoot, 'test', 'fixtures', 'stores');
/** Pages on the release's synthetic site: a store of a few kilobytes. */
const PAGES = 12;
/** A gap between requests, so the host's next request time in the file is a real one, not 0. */
const DELAY_MS = 20;

/** Runs a build's `crawlflow demo` in `dir` with its embedded dev server, writing its export to `out`. */
async function runDemo(cli: string, dir: string, crawlId: string, out: string, extra: string[] = []): Promise<void> {
  execFileSync(process.execPath, [cli, 'demo', '--pages', String(PAGES), '--delay-ms', String(DELAY_MS), '--id', crawlId, '--out', out, '--no-progress', ...extra], {
    cwd: dir,
    stdio: 'inherit',
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: '',
      CRAWLFLOW_DATA_DIR: join(dir, '.data'),
      CRAWLFLOW_DEV_SERVER_PORT: String(await freeServerPort()),
      CRAWLFLOW_DEV_SERVER_UI_PORT: String(await freeServerPort()),
    },
  });
}

async function makeStore(version: ReleaseVersion): Promise<void> {
  const { cli } = releaseBuild(version);
  const dir = mkdtempSync(join(tmpdir(), `crawlflow-${version}-`));
  try {
    const dataDir = join(dir, '.data');
    const crawlId = releaseCrawlId(version);
    await runDemo(cli, dir, crawlId, join(FIXTURE_DIR, `v${version}.records.jsonl`));
    const store = join(dataDir, 'crawls', `${encodeURIComponent(crawlId)}.sqlite`);
    if (!existsSync(store)) throw new Error(`release ${version} wrote no store at ${store}`);
    copyFileSync(store, join(FIXTURE_DIR, `v${version}.sqlite`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The last 0.2.0's PostgreSQL database after its demo crawl, as plain SQL. */
async function makePostgresDump(): Promise<void> {
  const { cli } = commitBuild(FINAL_0_2_0);
  const dir = mkdtempSync(join(tmpdir(), 'crawlflow-0.2.0-final-'));
  const postgres = await startTestPostgres();
  try {
    await runDemo(cli, dir, releaseCrawlId('0.2.0-final'), join(FIXTURE_DIR, 'v0.2.0-final.postgres.records.jsonl'), ['--store', postgres.url]);
    const sql = execFileSync(postgresBinary('pg_dump'), ['--no-owner', '--no-privileges', '--schema', 'crawlflow', postgres.url]);
    writeFileSync(POSTGRES_DUMP, sql);
  } finally {
    await postgres.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const POSTGRES_DUMP = join(FIXTURE_DIR, 'v0.2.0-final.postgres.sql');

async function main(): Promise<void> {
  mkdirSync(FIXTURE_DIR, { recursive: true });
  for (const { version } of RELEASES) {
    if (existsSync(join(FIXTURE_DIR, `v${version}.sqlite`))) console.log(`release ${version}: kept test/fixtures/stores/v${version}.sqlite`);
    else await makeStore(version);
  }
  if (existsSync(POSTGRES_DUMP)) console.log('0.2.0-final: kept its PostgreSQL dump');
  else await makePostgresDump();
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
