/**
 * On-demand diagnostics of a worker process, Node's analogue of Go's pprof: a CPU profile
 * over a few seconds (open it in Chrome DevTools or speedscope) and a heap snapshot. Served
 * by the worker's loopback endpoint, never on a public address by default.
 */
import { Session } from 'node:inspector/promises';
import { getHeapSnapshot } from 'node:v8';
import type { Readable } from 'node:stream';

export const MAX_PROFILE_SECONDS = 60;

/** Samples the CPU for `seconds` and returns the profile as .cpuprofile JSON. */
export async function cpuProfile(seconds: number): Promise<string> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const { profile } = await session.post('Profiler.stop');
    return JSON.stringify(profile);
  } finally {
    session.disconnect();
  }
}

/** A .heapsnapshot stream (large: it is streamed, not buffered). */
export function heapSnapshot(): Readable {
  return getHeapSnapshot();
}
