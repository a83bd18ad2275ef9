/** The bench's site server as a child process (bench/site-server.ts), with its reachable set. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { projectRoot } from '../src/temporal/project-paths';
import { SiteGraph } from '../src/sites/synthetic-site';

export interface SiteProcess {
  /** The first host's origin (it serves the run's counters too). */
  origin: string;
  /** Every host's origin: one, or on a many-host site one per host. */
  origins: string[];
  pid: number;
  pages: number;
  /** `reachable[n]` is 1 when page n is reachable from page 0 (of its host). */
  reachable: Uint8Array;
  reachableCount: number;
  stop(): Promise<void>;
}

export const SITE_SEED = 1;
export const PAGE_BYTES = 8_192;

/** `hosts` sites of pages/hosts pages each, on ports of their own (see site-server.ts). */
export async function startSiteProcess(pages: number, hosts = 1): Promise<SiteProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      join(projectRoot, 'dist', 'bench', 'site-server.js'),
      '--pages', String(pages), '--page-bytes', String(PAGE_BYTES), '--seed', String(SITE_SEED), '--hosts', String(hosts),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  if (!child.stdout || child.pid === undefined) throw new Error('site server did not start');
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`site server exited with code ${String(code)} before it was listening`);
  });
  const [line] = (await Promise.race([once(createInterface({ input: child.stdout }), 'line'), exited])) as [string];
  const { origin, origins } = JSON.parse(line) as { origin: string; origins: string[] };

  // The same graph the server builds (same seed), walked here for the expected page set.
  const perHost = pages / hosts;
  const graph = new SiteGraph({ pages: perHost, seed: SITE_SEED });
  const reachable = new Uint8Array(pages);
  for (const page of graph.reachableFrom(0)) for (let host = 0; host < hosts; host += 1) reachable[host * perHost + page] = 1;
  return {
    origin,
    origins,
    pid: child.pid,
    pages,
    reachable,
    reachableCount: reachable.reduce((sum, bit) => sum + bit, 0),
    stop: async () => {
      if (child.exitCode !== null) return;
      const done = once(child, 'exit');
      child.kill('SIGTERM');
      await done;
    },
  };
}
