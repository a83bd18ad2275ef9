/**
 * Makes the store files of old releases that the migration tests open (test/fixtures/stores):
 * each release is checked out from git and built (test/helpers/releases.ts), and run as a
 * user ran it (`crawlflow demo`: its embedded dev server, its worker, its synthetic site); its
 * crawl store and its own results export are kept. Run with `npm run make-release-stores`
 * when a release is added to RELEASES: it makes the files of releases that have none, and
 * never remakes a committed one. Both releases so far had the SQLite store only (the
 * PostgreSQL store came after 0.2.0), so there is no PostgreSQL database of a release to keep.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/temporal/project-paths';
import { freeLoopbackPort } from '../../src/workers/runtime';
import { releaseBuild, RELEASES, type ReleaseVersion } from '../helpers/releases';

/** The crawl ID of each release's fixture crawl. */
const releaseCrawlId = (version: string): string => `release-${version}`;
export const FIXTURE_DIR = join(projectRoot, 'test', 'fixtures', 'stores');
/** Pages on the release's synthetic site: a store of a few kilobytes. */
const PAGES = 12;
/** A gap between requests, so the host's next request time in the file is a real one, not 0. */
const DELAY_MS = 20;

async function makeStore(version: ReleaseVersion): Promise<void> {
  const { cli } = releaseBuild(version);
  const dir = mkdtempSync(join(tmpdir(), `crawlflow-${version}-`));
  try {
    const dataDir = join(dir, '.data');
    const crawlId = releaseCrawlId(version);
    const out = join(FIXTURE_DIR, `v${version}.records.jsonl`);
    execFileSync(process.execPath, [cli, 'demo', '--pages', String(PAGES), '--delay-ms', String(DELAY_MS), '--id', crawlId, '--out', out, '--no-progress'], {
      cwd: dir,
      stdio: 'inherit',
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: '',
        CRAWLFLOW_DATA_DIR: dataDir,
        CRAWLFLOW_DEV_SERVER_PORT: String(await freeLoopbackPort()),
        CRAWLFLOW_DEV_SERVER_UI_PORT: String(await freeLoopbackPort()),
      },
    });
    const store = join(dataDir, 'crawls', `${encodeURIComponent(crawlId)}.sqlite`);
    if (!existsSync(store)) throw new Error(`release ${version} wrote no store at ${store}`);
    copyFileSync(store, join(FIXTURE_DIR, `v${version}.sqlite`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  mkdirSync(FIXTURE_DIR, { recursive: true });
  for (const { version } of RELEASES) {
    if (existsSync(join(FIXTURE_DIR, `v${version}.sqlite`))) console.log(`release ${version}: kept test/fixtures/stores/v${version}.sqlite`);
    else await makeStore(version);
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
