/**
 * The site server's ceiling, measured with wrk at the bench's concurrency over a rotation of
 * page paths (a Lua script), so the bench can show that the server is not the bottleneck.
 * wrk shares the machine's cores with the server, so this is a lower bound.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProcessMeter } from './process-meter';
import { runCommand } from './installers';

export interface WrkCeiling {
  command: string;
  requestsPerSecond: number;
  /** CPU the site server spent per 1,000 requests during the wrk run (ms). */
  serverCpuMsPerThousand: number;
}

export async function measureWrkCeiling(wrk: string, origin: string, pages: number, siteServerPid: number, runDir: string, seconds = 5): Promise<WrkCeiling> {
  const script = join(runDir, 'rotate-pages.lua');
  // 7919 is prime, so the paths walk the whole site before repeating.
  writeFileSync(
    script,
    `counter = 0\nrequest = function()\n  counter = counter + 1\n  return wrk.format("GET", "/page/" .. ((counter * 7919) % ${pages}))\nend\n`,
  );
  const args = ['-t2', '-c32', `-d${seconds}s`, '-s', script, `${origin}/`];
  const meter = new ProcessMeter(siteServerPid);
  const output = await runCommand(wrk, args);
  const server = meter.stop();
  const match = /Requests\/sec:\s+([\d.]+)/.exec(output);
  if (!match) throw new Error(`could not read Requests/sec from wrk's output:\n${output}`);
  const requestsPerSecond = Number(match[1]);
  return {
    command: `wrk ${args.join(' ')}`,
    requestsPerSecond,
    serverCpuMsPerThousand: (server.cpuSeconds * 1e6) / (requestsPerSecond * seconds),
  };
}
