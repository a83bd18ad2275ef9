#!/usr/bin/env node
/**
 * Preflight of `npm test`: the suite runs real Prometheus, promtool, Alertmanager and amtool,
 * headless Chromium, throwaway PostgreSQL servers and openssl (test certificates), all from
 * Debian packages, and Python's warcio, which `npm install` puts into .tools/warcio. Without
 * them, tests would fail one by one minutes into the run. This checks for each first and, when
 * some are missing, installs them (the Debian packages as root, with apt-get; warcio with its
 * install script) or exits at once with the exact command to run.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const POSTGRES_ROOT = '/usr/lib/postgresql';

/** An executable file named `name` on PATH or in /usr/bin, where Debian puts them. */
function onPath(name) {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/bin'];
  return dirs.some((dir) => isExecutable(join(dir, name)));
}

function isExecutable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** PostgreSQL's server binaries are not on PATH: test/helpers/postgres.ts looks under /usr/lib/postgresql/<version>/bin. */
function hasInitdb() {
  if (!existsSync(POSTGRES_ROOT)) return false;
  return readdirSync(POSTGRES_ROOT).some((version) => isExecutable(join(POSTGRES_ROOT, version, 'bin', 'initdb')));
}

function hasPip() {
  return spawnSync('python3', ['-m', 'pip', '--version'], { stdio: 'ignore' }).status === 0;
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const WARCIO_INSTALL = join('scripts', 'install-warcio.mjs');

/** The warcio version pinned in package.json, installed where test/helpers/warcio.ts looks for it. */
function hasWarcio() {
  const { warcio } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).config;
  return existsSync(join(root, '.tools', 'warcio', `warcio-${warcio}.dist-info`));
}

/** What the suite runs, and the Debian package that provides it. */
const REQUIREMENTS = [
  { what: 'prometheus', debianPackage: 'prometheus', present: () => onPath('prometheus') },
  { what: 'promtool', debianPackage: 'prometheus', present: () => onPath('promtool') },
  { what: 'prometheus-alertmanager', debianPackage: 'prometheus-alertmanager', present: () => onPath('prometheus-alertmanager') },
  { what: 'amtool', debianPackage: 'prometheus-alertmanager', present: () => onPath('amtool') },
  { what: 'chromium', debianPackage: 'chromium', present: () => onPath('chromium') },
  { what: `initdb (${POSTGRES_ROOT}/*/bin)`, debianPackage: 'postgresql', present: hasInitdb },
  { what: 'openssl', debianPackage: 'openssl', present: () => onPath('openssl') },
  { what: 'python3 -m pip', debianPackage: 'python3-pip', present: hasPip },
];

function missingRequirements() {
  return REQUIREMENTS.filter((requirement) => !requirement.present());
}

function packagesOf(requirements) {
  return [...new Set(requirements.map((requirement) => requirement.debianPackage))];
}

function installCommand(packages) {
  return ['apt-get', 'install', '-y', '--no-install-recommends', ...packages];
}

function canInstall() {
  return process.getuid?.() === 0 && onPath('apt-get');
}

/** apt-get update, then install; noninteractive, so it works under CI with no stdin. */
function aptInstall(packages) {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const argv of [['apt-get', '-qq', 'update'], ['apt-get', '-qq', ...installCommand(packages).slice(1)]]) {
    console.error(`check-test-deps: ${argv.join(' ')}`);
    const { status } = spawnSync(argv[0], argv.slice(1), { stdio: ['ignore', 'inherit', 'inherit'], env });
    if (status !== 0) return false;
  }
  return true;
}

function fail(missing) {
  const command = installCommand(packagesOf(missing)).join(' ');
  console.error(`check-test-deps: the test suite needs ${missing.map((requirement) => requirement.what).join(', ')}, which this machine lacks.`);
  const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
  console.error(`Install them and run the tests again:\n\n  ${sudo}apt-get update && ${sudo}${command}\n`);
  process.exit(1);
}

/** warcio comes from PyPI through pip (checked above), with the script `npm install` runs. */
function provisionWarcio() {
  if (hasWarcio()) return;
  console.error(`check-test-deps: node ${WARCIO_INSTALL}`);
  spawnSync(process.execPath, [join(root, WARCIO_INSTALL)], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (hasWarcio()) return;
  console.error(`check-test-deps: the WARC tests need Python's warcio in .tools/warcio. Once pip can reach PyPI, run:\n\n  node ${WARCIO_INSTALL}\n`);
  process.exit(1);
}

const missing = missingRequirements();
if (missing.length > 0) {
  if (!canInstall()) fail(missing);
  if (!aptInstall(packagesOf(missing))) fail(missing);
  const stillMissing = missingRequirements();
  if (stillMissing.length > 0) fail(stillMissing);
}
provisionWarcio();
