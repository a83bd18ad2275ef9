/**
 * Project-local installs of what the bench compares with, done on first run: Crawlee from
 * its committed lockfile, Scrapy into a venv under .tools/, Colly built with `go build` into
 * .tools/, spider-rs built with `cargo build` into .tools/, and wrk from Debian. Each throws an InstallError carrying the exact command and
 * its output, so the bench can mark that one tool failed and go on with the others.
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../src/temporal/project-paths';

export const COMPETITORS_DIR = join(projectRoot, 'bench', 'competitors');
export const TOOLS_DIR = join(projectRoot, '.tools');
export const CRAWLEE_DIR = join(COMPETITORS_DIR, 'crawlee');
export const SCRAPY_DIR = join(COMPETITORS_DIR, 'scrapy');
export const COLLY_DIR = join(COMPETITORS_DIR, 'colly');
export const VENV_DIR = join(TOOLS_DIR, 'bench-venv');
export const COLLY_BINARY = join(TOOLS_DIR, 'bench-colly');
export const SPIDER_DIR = join(COMPETITORS_DIR, 'spider');
export const SPIDER_TARGET_DIR = join(TOOLS_DIR, 'spider-bench');
export const SPIDER_BINARY = join(SPIDER_TARGET_DIR, 'release', 'spider-bench');
/** rustup's default place, for a shell whose PATH lacks ~/.cargo/bin. */
const RUSTUP_CARGO = join(homedir(), '.cargo', 'bin', 'cargo');

export class InstallError extends Error {
  readonly code = 'install-failed';
}

/** Runs a command to completion; fails with the command line and the tail of its output. */
export async function runCommand(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  const child = spawn(command, args, { cwd: options.cwd ?? projectRoot, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new InstallError(`\`${[command, ...args].join(' ')}\` failed (exit ${code}):\n${output.trim().split('\n').slice(-20).join('\n')}`);
  return output;
}

async function runInstall(command: string, args: string[], cwd?: string): Promise<void> {
  try {
    await runCommand(command, args, { cwd });
  } catch (err) {
    if (err instanceof InstallError) throw err;
    throw new InstallError(`\`${[command, ...args].join(' ')}\` could not start: ${(err as Error).message}`);
  }
}

function newerThan(target: string, sources: string[]): boolean {
  if (!existsSync(target)) return false;
  const built = statSync(target).mtimeMs;
  return sources.every((source) => statSync(source).mtimeMs <= built);
}

export async function installCrawlee(): Promise<void> {
  if (newerThan(join(CRAWLEE_DIR, 'node_modules', '.package-lock.json'), [join(CRAWLEE_DIR, 'package-lock.json')])) return;
  await runInstall('npm', ['ci', '--prefix', CRAWLEE_DIR, '--no-audit', '--no-fund']);
}

export async function installScrapy(): Promise<void> {
  const requirements = join(SCRAPY_DIR, 'requirements.txt');
  const marker = join(VENV_DIR, 'bin', 'scrapy');
  if (newerThan(marker, [requirements])) return;
  await runInstall('python3', ['-m', 'venv', VENV_DIR]);
  await runInstall(join(VENV_DIR, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', '-r', requirements]);
}

export async function installColly(): Promise<void> {
  if (newerThan(COLLY_BINARY, ['main.go', 'go.mod', 'go.sum'].map((file) => join(COLLY_DIR, file)))) return;
  await runInstall('go', ['build', '-o', COLLY_BINARY, '.'], COLLY_DIR);
}

/** spider-rs from crates.io, pinned by the committed Cargo.lock; the first build takes ~4 minutes on 2 cores. */
export async function installSpider(): Promise<void> {
  if (newerThan(SPIDER_BINARY, ['Cargo.toml', 'Cargo.lock', join('src', 'main.rs')].map((file) => join(SPIDER_DIR, file)))) return;
  const cargo = existsSync(RUSTUP_CARGO) ? RUSTUP_CARGO : 'cargo';
  await runInstall(cargo, ['build', '--release', '--locked', '--manifest-path', join(SPIDER_DIR, 'Cargo.toml'), '--target-dir', SPIDER_TARGET_DIR]);
}

/** wrk from Debian: installed with apt-get when we are root, else the exact command is in the error. */
export async function ensureWrk(): Promise<string> {
  const onPath = (): string | undefined => ['/usr/bin/wrk', '/usr/local/bin/wrk'].find((path) => existsSync(path));
  const found = onPath();
  if (found) return found;
  if (process.getuid?.() !== 0) throw new InstallError('wrk is not installed; run `sudo apt-get install -y wrk` and run the bench again');
  await runInstall('apt-get', ['install', '-y', 'wrk']);
  const installed = onPath();
  if (!installed) throw new InstallError('`apt-get install -y wrk` succeeded but no wrk binary was found in /usr/bin or /usr/local/bin');
  return installed;
}
