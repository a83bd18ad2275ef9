/**
 * Where the browser is, checked before any worker starts. Apart from the renderer, so the
 * CLI checks for Chromium without loading playwright-core (about 50 MB and a quarter of a
 * second), which only a worker that renders needs.
 */
import { existsSync } from 'node:fs';

export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';

export class ChromiumMissingError extends Error {
  readonly code = 'chromium-missing';
  constructor(path: string) {
    super(`no Chromium at ${path}: install Debian's chromium package, or give the path with --chromium`);
    this.name = 'ChromiumMissingError';
  }
}

/** Fails fast, before any worker starts, when there is no browser to render with. */
export function assertChromium(path: string = DEFAULT_CHROMIUM_PATH): string {
  if (!existsSync(path)) throw new ChromiumMissingError(path);
  return path;
}
