/**
 * Makes the store files of old releases that the migration tests open (test/fixtures/stores):
 * each release is checked out from git into a temporary directory, built, and run as a user
 * ran it (`crawlflow demo`: its embedded dev server, its worker, its synthetic site), and its
 * crawl store and its own results export are kept. Run with `npm run make-release-stores`
 * when a release is added to RELEASES: it makes the files of releases that have none, and
 * never remakes a committed one.
 *
 * Releases are commits, not tags: 0.2.0 is the commit that set package.json's version to
 * 0.2.0, and 0.1.0 the last commit before it. Both releases had the SQLite store only (the
 * PostgreSQL store came after 0.2.0), so there is no PostgreSQL database of a release to keep.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/temporal/project-paths';
import { freeLoopbackPort } from '../../src/workers/runtime';

export const RELEASES = [
  { version: '0.1.0', commit: 'c179110303b24e991f4bfedc14a9d9d69422fc1c' },
  { version: '0.2.0', commit: '704dc33d7d366b0ddf736133709a0df0cba8a123' },
] as const;

/** The crawl ID of each release's fixture crawl. */
export const releaseCrawlId = (version: string): string => `release-${version}`;
export const FIXTURE_DIR = join(projectRoot, 'test', 'fixtures', 'stores');
/** Pages on the release's synthetic site: a store of a few kilobytes. */
const PAGES = 12;
/** A gap between requests, so the host's next request time in the file is a real one, not 0. */
const DELAY_MS = 20;

/** The release's source tree, built with this checkout's dependencies (the releases pinned the same ones). */
function buildRelease(commit: string, dir: string): void {
  execFileSync('sh', ['-c', `git -C "${projectRoot}" archive ${commit} | tar -x -C "${dir}"`]);
  for (const shared of ['node_modules', '.tools']) symlinkSync(join(projectRoot, shared), join(dir, shared));
  execFileSync(process.execPath, [join(projectRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], { stdio: 'inherit' });
}

async function makeStore(version: string, commit: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `crawlflow-${version}-`));
  try {
    buildRelease(commit, dir);
    const dataDir = join(dir, '.data');
    const crawlId = releaseCrawlId(version);
    const out = join(FIXTURE_DIR, `v${version}.records.jsonl`);
    execFileSync(process.execPath, [join(dir, 'dist', 'src', 'cli', 'main.js'), 'demo', '--pages', String(PAGES), '--delay-ms', String(DELAY_MS), '--id', crawlId, '--out', out, '--no-progress'], {
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
  for (const { version, commit } of RELEASES) {
    if (existsSync(join(FIXTURE_DIR, `v${version}.sqlite`))) console.log(`release ${version}: kept test/fixtures/stores/v${version}.sqlite`);
    else await makeStore(version, commit);
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
