/**
 * Old releases of crawlflow, checked out from git and built, for tests of what they left
 * behind: store files, and crawls they started that this release's workers must finish.
 *
 * Releases are commits, not tags: 0.2.0 is the commit that set package.json's version to
 * 0.2.0, and 0.1.0 the last commit before it. A release's source comes from
 * test/fixtures/releases/<commit>.tar.gz when it is there (`git archive <commit> | gzip`), so a
 * clone without the history (a shallow CI checkout) still has it; otherwise from git. A build
 * uses this checkout's node_modules (the releases pinned the same dependencies), linked by a
 * relative path, and is kept in this checkout's test-output/releases/<commit>, so a checkout
 * builds each release once. A build shared by checkouts would link to the node_modules of
 * whichever built it, and fail to start once that checkout is gone.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { projectRoot } from '../../src/temporal/project-paths';

export const RELEASES = [
  { version: '0.1.0', commit: 'c179110303b24e991f4bfedc14a9d9d69422fc1c' },
  { version: '0.2.0', commit: '704dc33d7d366b0ddf736133709a0df0cba8a123' },
] as const;
export type ReleaseVersion = (typeof RELEASES)[number]['version'];

/** The last commit of 0.2.0 on main: its workflow had the sitemap and render patches, its store PostgreSQL. */
export const FINAL_0_2_0 = '99c59abf08723574d2af74376d1ae5c57734941e';

export interface ReleaseBuild {
  dir: string;
  /** The release's `crawlflow` CLI (dist/src/cli/main.js). */
  cli: string;
}

/** The built release, built now unless a previous run left a complete build. */
export function releaseBuild(version: ReleaseVersion): ReleaseBuild {
  return commitBuild(RELEASES.find((release) => release.version === version)!.commit);
}

/** Any commit of the project, built like a release. */
export function commitBuild(commit: string): ReleaseBuild {
  const dir = join(projectRoot, 'test-output', 'releases', commit);
  const cli = join(dir, 'dist', 'src', 'cli', 'main.js');
  // The marker is written last, so a build cut short is redone, never used.
  if (!existsSync(join(dir, '.built'))) {
    const building = `${dir}.${process.pid}`;
    rmSync(building, { recursive: true, force: true });
    mkdirSync(building, { recursive: true });
    const archived = join(projectRoot, 'test', 'fixtures', 'releases', `${commit}.tar.gz`);
    if (existsSync(archived)) execFileSync('tar', ['-xzf', archived, '-C', building]);
    else execFileSync('sh', ['-c', `git -C "${projectRoot}" archive ${commit} | tar -x -C "${building}"`]);
    for (const shared of ['node_modules', '.tools']) symlinkSync(join(relative(dir, projectRoot), shared), join(building, shared));
    execFileSync(process.execPath, [join(projectRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(building, 'tsconfig.json')], { stdio: 'inherit' });
    writeFileSync(join(building, '.built'), `${commit}\n`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(building, dir);
  }
  return { dir, cli };
}
