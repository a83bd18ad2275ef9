#!/usr/bin/env node
/**
 * Runs the built test files (dist/test/*.test.js) with Node's test runner, in two parts:
 *
 * 1. every file but the politeness ones, two at a time. Most of a file's time is waiting that
 *    its scenario is made of (heartbeat timeouts, outages, Retry-After), so two files share
 *    two cores well: on a 2-core machine these files took 461 s this way, against about
 *    760 s one at a time;
 * 2. the `politeness*` files, one at a time with nothing beside them. They check the gaps
 *    between requests as the test's site receives them, to within 25 ms, and a site thread
 *    that waits for a core behind another file's crawl notes a request late: run beside
 *    another file, the closest gap as received was 164 ms of a 200 ms delay, while the same
 *    requests left the crawler 200 ms apart. Alone they take about 98 s.
 *
 * Both parts always run, so one run reports every failure; the exit code is the first
 * failing part's.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

const TEST_DIR = 'dist/test';
/** Node 20's runner applies the bound to each test and to each file as a whole: above the slowest file. */
const TEST_TIMEOUT_MS = 600_000;
/** Measured with two: more files at once would not have a core each on the CI machine. */
const SHARED_CONCURRENCY = Math.min(2, availableParallelism());

const runsAlone = (file) => file.startsWith('politeness');

function runFiles(files, concurrency) {
  if (files.length === 0) return 0;
  const args = ['--test', `--test-concurrency=${concurrency}`, `--test-timeout=${TEST_TIMEOUT_MS}`, ...files.map((file) => join(TEST_DIR, file))];
  const { status, error } = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (error) throw error;
  return status ?? 1;
}

const files = readdirSync(TEST_DIR).filter((file) => file.endsWith('.test.js')).sort();
const shared = runFiles(files.filter((file) => !runsAlone(file)), SHARED_CONCURRENCY);
const alone = runFiles(files.filter(runsAlone), 1);
process.exit(shared !== 0 ? shared : alone);
