/**
 * Where a V8 CPU profile's time went (`node --cpu-prof`, or the worker's
 * /debug/cpu-profile): self time per package or project directory, and the top functions.
 * Used for bench/PROFILE.md.
 *
 *   node dist/bench/cpu-profile-summary.js <file.cpuprofile> [--top 30]
 */
import { readFileSync } from 'node:fs';
import { BenchUsageError, parseFlags, runBenchCommand, wholeNumber } from './bench-args';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** node_modules/<package> (scoped too), dist/<dir>, node:<builtin>, or V8's own (GC, idle, program). */
function bucketOf(url: string, functionName: string): string {
  if (!url) return `(${functionName || 'native'})`;
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packageMatch) return packageMatch[1];
  const projectMatch = /\/dist\/((?:src|bench)\/[^/]+)/.exec(url);
  if (projectMatch) return projectMatch[1];
  if (url.startsWith('node:')) return url.split('/')[0];
  return url.replace(/^file:\/\//, '');
}

const USAGE = `usage: node dist/bench/cpu-profile-summary.js <file.cpuprofile> [--top N]
  --top N   rows of each table (default 30)
`;

function main(): void {
  const { positionals, values } = parseFlags({ allowPositionals: true, options: { top: { type: 'string', default: '30' } } });
  if (positionals.length !== 1) throw new BenchUsageError('expected one .cpuprofile file');
  const top = wholeNumber('--top', values.top);
  const profile = JSON.parse(readFileSync(positionals[0], 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000));
  const total = [...selfMs.values()].reduce((sum, ms) => sum + ms, 0);

  const buckets = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, ms] of selfMs) {
    const { functionName, url, lineNumber } = byId.get(id)?.callFrame ?? { functionName: '?', url: '', lineNumber: 0 };
    const bucket = bucketOf(url, functionName);
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + ms);
    const name = `${functionName || '(anonymous)'} ${bucket}:${lineNumber + 1}`;
    functions.set(name, (functions.get(name) ?? 0) + ms);
  }
  const print = (title: string, entries: Map<string, number>): void => {
    process.stdout.write(`\n${title}\n`);
    for (const [name, ms] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      process.stdout.write(`${((100 * ms) / total).toFixed(1).padStart(5)}%  ${ms.toFixed(0).padStart(7)} ms  ${name}\n`);
    }
  };
  process.stdout.write(`total sampled: ${(total / 1000).toFixed(1)} s\n`);
  print('self time by package / project directory', buckets);
  print('self time by function', functions);
}

runBenchCommand(main, USAGE);
