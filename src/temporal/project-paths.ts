/** Paths inside the crawlflow installation (works from `src` and from the compiled `dist/src`). */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { ENV, InvalidEnvError } from '../shared/names';

/**
 * tsc's output directory (tsconfig `outDir`). It holds a copy of package.json, emitted because
 * src/shared/names.ts imports the version from it; the project root is above that copy.
 */
const COMPILED_DIR = 'dist';

function isProjectRoot(dir: string): boolean {
  const manifest = join(dir, 'package.json');
  return basename(dir) !== COMPILED_DIR && existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'crawlflow';
}

function findProjectRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (isProjectRoot(dir)) return dir;
    if (dirname(dir) === dir) throw new Error(`crawlflow's package.json not found above ${start}`);
  }
}

export const projectRoot = findProjectRoot(__dirname);

/** The `temporal` CLI installed by `npm install` (scripts/install-temporal.mjs), unless CRAWLFLOW_TEMPORAL_BIN names one, which must be there. */
export function temporalBinaryPath(): string {
  const configured = process.env[ENV.temporalBinary];
  if (configured === undefined || configured === '') return join(projectRoot, '.tools', 'temporal-bin', 'bin', 'temporal');
  if (!existsSync(configured)) throw new InvalidEnvError(`${ENV.temporalBinary} must be the path of the temporal CLI; there is no file ${JSON.stringify(configured)}`);
  return configured;
}

/** Where crawl stores and the embedded server's database live: `.data/` in the working directory. */
export function defaultDataDir(): string {
  return resolve(process.env[ENV.dataDir] ?? '.data');
}
