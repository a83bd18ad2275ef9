#!/usr/bin/env node
// Installs Python's warcio (webrecorder's WARC library, the version pinned in package.json's
// config.warcio) project-locally into .tools/warcio: the WARC tests read crawlflow's files
// back with it (test/helpers/warcio.ts). Idempotent: a present install of that version is kept.
// Only tests need it, so a failure warns instead of failing the install; those tests then
// stop at once and name this script.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pinnedVersion, pipInstall, python, root } from './pip-tool.mjs';

const version = pinnedVersion('warcio');
const target = join(root, '.tools', 'warcio');

if (existsSync(join(target, `warcio-${version}.dist-info`))) process.exit(0);

rmSync(target, { recursive: true, force: true });
console.log(`crawlflow: installing warcio==${version} into .tools/warcio (for the WARC tests)`);
try {
  pipInstall(`warcio==${version}`, target);
  execFileSync(python, ['-c', 'import warcio.archiveiterator'], { env: { ...process.env, PYTHONPATH: target } });
} catch (err) {
  rmSync(target, { recursive: true, force: true });
  console.warn(`crawlflow: could not install warcio with ${python} -m pip: ${err.message}`);
  console.warn('crawlflow: the WARC tests need it; run `node scripts/install-warcio.mjs` once pip can reach PyPI.');
}
