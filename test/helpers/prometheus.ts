/**
 * The ops/ tooling in tests: the Debian `promtool`, `amtool`, `prometheus` and
 * `prometheus-alertmanager` binaries (.ci/run installs them), real Prometheus and
 * Alertmanager processes on free loopback ports, and the PromQL expressions of the Grafana
 * dashboard with its template variables filled in.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { request } from 'undici';
import { projectRoot } from '../../src/temporal/project-paths';
import { freeServerPort } from '../../src/workers/runtime';

export const OPS_DIR = join(projectRoot, 'ops');

/** Absolute paths of the files in `ops/<dir>` whose names end with `suffix`, sorted. */
export function opsFiles(dir: string, suffix = '.yml'): string[] {
  const full = join(OPS_DIR, dir);
  return readdirSync(full)
    .filter((name) => name.endsWith(suffix))
    .sort()
    .map((name) => join(full, name));
}

/** A binary on PATH (or in /usr/bin, where Debian puts them). */
export function findBinary(name: string): string {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/bin', '/usr/local/bin']) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(`${name} not found on PATH: run \`node scripts/check-test-deps.mjs\` (npm test's preflight), which installs them or prints the apt-get command`);
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a binary to completion; a non-zero exit is a result, not an exception. */
export function run(binary: string, args: string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(binary, args, { cwd: options.cwd ?? projectRoot, timeout: options.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

export function formatRun(what: string, result: RunResult): string {
  return `${what} exited ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

// ------------------------------------------------------------------ long-running servers

export interface LoopbackServer {
  /** http://127.0.0.1:PORT */
  url: string;
  dir: string;
  process: ChildProcess;
  /** What the process wrote to stdout and stderr so far. */
  output(): string;
  close(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

async function waitReady(url: string, child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${child.spawnfile} exited (${child.exitCode ?? child.signalCode}):\n${output()}`);
    try {
      const response = await request(`${url}/-/ready`, { headersTimeout: 1_000, bodyTimeout: 1_000 });
      await response.body.dump();
      if (response.statusCode === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${child.spawnfile} not ready at ${url} after ${timeoutMs} ms:\n${output()}`);
}

async function startServer(binary: string, args: (port: number, dir: string) => string[], prefix: string, dir?: string): Promise<LoopbackServer> {
  const workDir = dir ?? mkdtempSync(join(tmpdir(), prefix));
  const port = await freeServerPort();
  const child = spawn(binary, args(port, workDir), { cwd: workDir, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  const append = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-64_000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = once(child, 'exit').then(() => running.delete(child));
  const url = `http://127.0.0.1:${port}`;
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(workDir, { recursive: true, force: true });
  };
  try {
    await waitReady(url, child, () => output, 30_000);
  } catch (err) {
    await close();
    throw err;
  }
  return { url, dir: workDir, process: child, output: () => output, close };
}

export interface PrometheusServer extends LoopbackServer {
  query(expr: string): Promise<QueryResult>;
  api<T>(path: string): Promise<T>;
}

export interface PromSample {
  metric: Record<string, string>;
  value?: [number, string];
}

export interface QueryResult {
  status: 'success' | 'error';
  data?: { resultType: 'vector' | 'matrix' | 'scalar' | 'string'; result: PromSample[] | [number, string] };
  errorType?: string;
  error?: string;
  warnings?: string[];
}

/**
 * A real Prometheus (loopback only) with `config` written as its config file. JSON is YAML,
 * so the config is built as an object.
 */
export async function startPrometheus(config: (dir: string) => object): Promise<PrometheusServer> {
  const dir = mkdtempSync(join(tmpdir(), 'crawlflow-prometheus-'));
  writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config(dir), null, 2));
  const server = await startServer(
    findBinary('prometheus'),
    (port, workDir) => [
      `--config.file=${join(workDir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(workDir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    'crawlflow-prometheus-',
    dir,
  );
  const api = async <T>(path: string): Promise<T> => {
    const response = await request(`${server.url}${path}`, { headersTimeout: 10_000, bodyTimeout: 10_000 });
    return (await response.body.json()) as T;
  };
  return {
    ...server,
    api,
    query: (expr) => api<QueryResult>(`/api/v1/query?query=${encodeURIComponent(expr)}`),
  };
}

/** A real Alertmanager on loopback, with clustering off (it would listen on 0.0.0.0:9094). */
export function startAlertmanager(configFile: string): Promise<LoopbackServer> {
  return startServer(
    findBinary('prometheus-alertmanager'),
    (port, dir) => [
      `--config.file=${configFile}`,
      `--storage.path=${dir}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
      '--log.level=warn',
    ],
    'crawlflow-alertmanager-',
  );
}

// ------------------------------------------------------------------ Grafana dashboard

export interface DashboardExpression {
  /** Where it is: panel title and refId, variable name or annotation name. */
  where: string;
  expr: string;
}

interface DashboardPanel {
  title?: string;
  type?: string;
  panels?: DashboardPanel[];
  targets?: { refId?: string; expr?: string }[];
}

interface Dashboard {
  panels?: DashboardPanel[];
  templating?: { list?: { name: string; type: string; query?: unknown; definition?: string }[] };
  annotations?: { list?: { name: string; expr?: string }[] };
}

/** Every PromQL expression of the dashboard: panel targets (rows included), query variables, annotations. */
export function dashboardExpressions(dashboard: Dashboard): DashboardExpression[] {
  const found: DashboardExpression[] = [];
  const walk = (panels: DashboardPanel[] | undefined): void => {
    for (const panel of panels ?? []) {
      for (const target of panel.targets ?? []) {
        if (target.expr) found.push({ where: `panel "${panel.title}" ${target.refId}`, expr: target.expr });
      }
      walk(panel.panels);
    }
  };
  walk(dashboard.panels);
  for (const variable of dashboard.templating?.list ?? []) {
    if (variable.type !== 'query') continue;
    const query = variable.definition ?? (typeof variable.query === 'string' ? variable.query : (variable.query as { query?: string })?.query);
    if (query) found.push({ where: `variable $${variable.name}`, expr: query });
  }
  for (const annotation of dashboard.annotations?.list ?? []) {
    if (annotation.expr) found.push({ where: `annotation "${annotation.name}"`, expr: annotation.expr });
  }
  return found;
}

/**
 * The PromQL Grafana would send: `label_values(selector, label)` becomes `selector`,
 * `$__rate_interval`/`$__interval`/`$__range` and `$var`/`${var}` take the given values.
 */
export function toPromQL(expr: string, variables: Record<string, string>, rateInterval = '1m'): string {
  let out = expr;
  const labelValues = /^\s*label_values\((.*),\s*[a-zA-Z_]\w*\s*\)\s*$/s.exec(out);
  if (labelValues) out = labelValues[1];
  out = out.replace(/\$__rate_interval|\$__interval|\$__range|\$\{__rate_interval\}|\$\{__interval\}|\$\{__range\}/g, rateInterval);
  out = out.replace(/\$\{(\w+)(?::\w+)?\}|\$(\w+)/g, (match, braced: string | undefined, bare: string | undefined) => {
    const name = braced ?? bare ?? '';
    if (!(name in variables)) throw new Error(`dashboard variable ${match} has no test value (in ${expr})`);
    return variables[name];
  });
  return out;
}
