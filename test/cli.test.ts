/**
 * The CLI contract, through real processes: invalid input fails with exit code 2 before
 * anything starts; the quick-start path (no TEMPORAL_ADDRESS: embedded dev server and
 * in-process worker) crawls and writes JSON Lines; the same crawl started twice runs once;
 * `temporal workflow start` and `crawlflow start|status|results|cancel` work against a
 * running `crawlflow worker`; after an embedded-default crawl has ended, `status` and `ui`
 * bring its history back on the dev server.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { execFileSync, spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { request } from 'undici';
import { ApplicationFailure, WorkflowFailedError, type Client } from '@temporalio/client';
import { isPortOpen, startDevServer, type DevServer } from '../src/temporal/dev-server';
import { freeServerPort } from '../src/workers/runtime';
import { projectRoot } from '../src/temporal/project-paths';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { reachablePagePaths, refusingOrigin, requestedPagePaths, sleep, sortedPaths, waitFor } from './helpers/fixtures';
import { progressQuery } from '../src/shared/messages';
import { startCrawl } from '../src/client/crawl-client';
import { crawlResult } from '../src/client/crawl-result';
import { connectClient } from '../src/temporal/target';
import { CRAWL_WORKFLOW_TYPE } from '../src/shared/names';
import { itRejectsEach, type UsageCase } from './helpers/usage-errors';
import { CLI, embeddedServerEnv, runCli, spawnCli, spawnWorker, type WorkerProcess } from './helpers/processes';
import { checkTerminalOut } from '../src/cli/crawl-options';
import { failureCause, forgetWorkflow, historyEventTypes, runCrawlToEnd, startTestTemporal, startWithTemporalCli, type TestTemporal, uniqueQueue } from './helpers/temporal';
import { temporalBinaryPath } from '../src/temporal/project-paths';
import { withCrawlStore } from '../src/results/export-jsonl';
import { FIXTURE_DIR } from './tools/make-release-stores';
import type { PageRecord } from '../src/store/frontier-store';
import { CONNECT_TIMEOUT_MS } from '../src/store/postgres-database';

function readJsonl(file: string): PageRecord[] {
  return readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as PageRecord);
}

const configDir = mkdtempSync(join(tmpdir(), 'crawlflow-cli-config-'));
after(() => rmSync(configDir, { recursive: true, force: true }));

/** Writes a `--config` file (an object as JSON, a string as is) and returns its path. */
function configFile(name: string, content: object | string): string {
  const file = join(configDir, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

describe('a Temporal server that cannot be reached', () => {
  it('crawl, status and worker each exit 1 with one line naming the address and the variable that set it', async () => {
    // Nothing listens on port 1: each command gives up when the SDK's connection deadline passes.
    const env = { TEMPORAL_ADDRESS: '127.0.0.1:1' };
    const commands = [['crawl', 'http://127.0.0.1:9/'], ['status', 'some-crawl'], ['worker']];
    const results = await Promise.all(commands.map((args) => runCli(args, env)));
    for (const [i, { code, stderr }] of results.entries()) {
      assert.equal(code, 1, `${commands[i][0]}: ${stderr}`);
      assert.match(stderr, /^crawlflow: cannot connect to the Temporal server at 127\.0\.0\.1:1 \(TEMPORAL_ADDRESS\): [^\n]+\n$/, commands[i][0]);
    }
  });
});

/** The compiled dev server module, as the CLI loads it. */
const DEV_SERVER_MODULE = join(projectRoot, 'dist', 'src', 'temporal', 'dev-server.js');

/** No TEMPORAL_ADDRESS: the embedded default, whose worker runs in the command's process. */
const EMBEDDED = { TEMPORAL_ADDRESS: '' };

describe('invalid input', { concurrency: 4 }, () => {
  // Nothing listens on port 1: a command that tried to start a workflow would fail differently.
  const env = { TEMPORAL_ADDRESS: '127.0.0.1:1' };
  const cases: UsageCase[] = [
    ['a bad seed URL', ['crawl', 'not-a-url'], /seed "not-a-url": must be an absolute http\(s\) URL/],
    ['a negative limit', ['crawl', 'http://127.0.0.1:9/', '--max-pages', '-5'], /--max-pages: .*>=\s*1/],
    ['a non-numeric limit', ['crawl', 'http://127.0.0.1:9/', '--concurrency', 'many'], /--concurrency.*must be an integer/],
    ['an unknown option', ['crawl', 'http://127.0.0.1:9/', '--bogus'], /unknown option '--bogus'/],
    ['an unknown scope', ['start', 'http://127.0.0.1:9/', '--scope', 'planet'], /--scope: /],
    ['a bad deadline', ['crawl', 'http://127.0.0.1:9/', '--deadline', 'soon'], /--deadline: must be a positive duration/],
    ['a seed with credentials (never echoed)', ['crawl', 'http://user:secret@127.0.0.1:9/'], /^crawlflow: seed "http:\/\/\*\*\*@127\.0\.0\.1:9\/": must not contain credentials/],
    ['no seed at all', ['crawl'], /<seed-url\.\.\.>: needs at least one seed URL/],
    ['a config file field of the wrong type', ['crawl', '--config', configFile('bad-field.json', { seeds: ['http://127.0.0.1:9/'], maxDepth: 'deep' })], /bad-field\.json: maxDepth: /],
    ['an unknown config file field', ['crawl', '--config', configFile('unknown.json', { seeds: ['http://127.0.0.1:9/'], maxPagez: 5 })], /unknown\.json: maxPagez: unknown field/],
    ['a config file that is not JSON', ['crawl', '--config', configFile('broken.json', '{ "seeds": [')], /--config .*broken\.json: not valid JSON/],
    ['a missing config file', ['crawl', '--config', '/nonexistent/crawl.json'], /--config \/nonexistent\/crawl\.json: cannot read it \(ENOENT\)/],
    // On the embedded default the in-process worker is the one to read the seed file: the command reads it first.
    ['a seeds file that does not exist', ['crawl', '--seeds-file', '/nonexistent/seeds.txt'], /^crawlflow: --seeds-file \/nonexistent\/seeds\.txt: cannot read it \(ENOENT\)$/m, EMBEDDED],
    ['a seeds file that is a directory', ['crawl', '--seeds-file', configDir], /^crawlflow: --seeds-file .*: cannot read it \(EISDIR\)$/m, EMBEDDED],
    ['an empty task queue', ['worker', '--task-queue', ''], /^error: option '--task-queue <name>' argument '' is invalid\. must not be empty\.$/m],
    ['an empty task queue from the environment', ['crawl', 'http://127.0.0.1:9/'], /value '' from env 'CRAWLFLOW_TASK_QUEUE' is invalid\. must not be empty\.$/m, { CRAWLFLOW_TASK_QUEUE: '' }],
    ['an empty crawl ID', ['crawl', 'http://127.0.0.1:9/', '--id', ''], /^error: option '--id <crawl-id>' argument '' is invalid\. must not be empty\.$/m],
    ['a blank crawl ID to address', ['status', ' '], /^error: command-argument value ' ' is invalid for argument 'crawl-id'\. must not be empty\.$/m],
    ['an empty schedule ID', ['schedule', 'describe', ''], /invalid for argument 'schedule-id'\. must not be empty\.$/m],
    ['a crawl ID with a line break', ['crawl', 'http://127.0.0.1:9/', '--id', 'a\nb'], /^crawlflow: crawl ID "a\\nb" must not contain control characters \(line breaks, tabs\)\n$/],
    ['a crawl ID that names a directory', ['results', '..'], /^crawlflow: crawl ID "\.\." must not be "\." or "\.\.", which name directories\n$/],
    [
      'a crawl ID too long for a file name',
      ['status', `${'x'.repeat(240)}/é`],
      /^crawlflow: crawl ID "x{240}\/é" is too long for a file name: 249 characters encoded, at most 244 \(characters other than A-Z a-z 0-9 - _ \. ! ~ \* ' \( \) take 3 per UTF-8 byte\)\n$/,
    ],
    ['a schedule ID whose crawl IDs are too long for a file name', ['schedule', 'pause', 'x'.repeat(220)], /^crawlflow: schedule ID "x{220}" is too long for a file name: 220 characters encoded, at most 219 /],
    // The server would cut a duration past int64 nanoseconds (about 292 years) to that silently: a year is the most either flag takes.
    [
      'a catch-up window past any sane bound',
      ['schedule', 'create', 'nightly', 'http://127.0.0.1:9/', '--every', '1h', '--catchup-window', '100000000000h'],
      /^crawlflow: --catchup-window: must be a duration from 10s to 365d, e.g\. 1h\n$/,
    ],
    ['a catch-up window a day over a year', ['schedule', 'create', 'nightly', 'http://127.0.0.1:9/', '--every', '1h', '--catchup-window', '366d'], /^crawlflow: --catchup-window: must be a duration from 10s to 365d, e.g\. 1h\n$/],
    ['an interval past a year', ['schedule', 'create', 'nightly', 'http://127.0.0.1:9/', '--every', '100000000000h'], /^crawlflow: --every: must be a duration from 1s to 365d, e.g\. 6h\n$/],
    ['an interval under a second', ['schedule', 'create', 'nightly', 'http://127.0.0.1:9/', '--every', '500'], /^crawlflow: --every: must be a duration from 1s to 365d, e.g\. 6h\n$/],
    // On the embedded default (nothing listens on port 1) the workers share the data dir: what every run would fail on is refused before the schedule is made.
    [
      'a schedule whose recrawl names no crawl',
      ['schedule', 'create', 'nightly', 'http://127.0.0.1:9/', '--every', '1h', '--recrawl-of', 'no-such-crawl', '--data-dir', configDir],
      new RegExp(`^crawlflow: --recrawl-of: no crawl "no-such-crawl" in ${configDir}\n$`),
      { ...EMBEDDED, CRAWLFLOW_DEV_SERVER_PORT: '1' },
    ],
    [
      'a schedule whose seeds file does not exist',
      ['schedule', 'create', 'nightly', '--seeds-file', '/nonexistent/seeds.txt', '--every', '1h'],
      /^crawlflow: --seeds-file \/nonexistent\/seeds\.txt: cannot read it \(ENOENT\)\n$/,
      { ...EMBEDDED, CRAWLFLOW_DEV_SERVER_PORT: '1' },
    ],
    ['a recrawl of a crawl ID with a tab', ['crawl', 'http://127.0.0.1:9/', '--recrawl-of', 'a\tb'], /^crawlflow: --recrawl-of: must not contain control characters \(line breaks, tabs\)\n$/],
    ['a log format from the environment that is not one', ['status', 'some-crawl'], /^crawlflow: CRAWLFLOW_LOG_FORMAT must be one of json, pretty, not "xml"\n$/, { CRAWLFLOW_LOG_FORMAT: 'xml' }],
    ['a log level from the environment that is not one', ['status', 'some-crawl'], /^crawlflow: CRAWLFLOW_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, not "loud"\n$/, { CRAWLFLOW_LOG_LEVEL: 'loud' }],
    ['a dev server port from the environment that is no port', ['pause', 'some-crawl'], /^crawlflow: CRAWLFLOW_DEV_SERVER_PORT must be a TCP port \(1 to 65535\), not "abc"\n$/, { ...EMBEDDED, CRAWLFLOW_DEV_SERVER_PORT: 'abc' }],
    ['a Web UI port from the environment out of range', ['status', 'some-crawl'], /^crawlflow: CRAWLFLOW_DEV_SERVER_UI_PORT must be a TCP port \(1 to 65535\), not "70000"\n$/, { ...EMBEDDED, CRAWLFLOW_DEV_SERVER_UI_PORT: '70000' }],
    // Port 1: no server answers there, so the command starts one, with the binary named.
    [
      'a temporal binary from the environment that is not there',
      ['ui'],
      /^crawlflow: CRAWLFLOW_TEMPORAL_BIN must be the path of the temporal CLI; there is no file "\/nonexistent\/temporal"\n$/,
      { ...EMBEDDED, CRAWLFLOW_DEV_SERVER_PORT: '1', CRAWLFLOW_DEV_SERVER_UI_PORT: '2', CRAWLFLOW_TEMPORAL_BIN: '/nonexistent/temporal' },
    ],
    ['an empty data dir from the environment', ['results', 'some-crawl'], /value '' from env 'CRAWLFLOW_DATA_DIR' is invalid\. must not be empty\.$/m, { CRAWLFLOW_DATA_DIR: '' }],
    // procfs refuses a new directory with ENOENT although its parent exists: Node 20's recursive mkdir loops on that for ever.
    [
      'a data dir where no directory can be made (procfs)',
      ['demo', '--data-dir', '/proc/crawlflow-data/crawls'],
      /^crawlflow: data directory \(--data-dir or CRAWLFLOW_DATA_DIR\): cannot use "\/proc\/crawlflow-data\/crawls" as a directory: ENOENT \(no such file or directory\)\n$/,
    ],
    ['a data dir from the environment where no directory can be made', ['status', 'some-crawl'], /: cannot use "\/proc\/crawlflow-data" as a directory: ENOENT /, { CRAWLFLOW_DATA_DIR: '/proc/crawlflow-data' }],
    [
      'a data dir inside a file',
      ['results', 'some-crawl', '--data-dir', join(configFile('a-file.json', {}), 'data')],
      /^crawlflow: data directory \(--data-dir or CRAWLFLOW_DATA_DIR\): cannot use ".*a-file\.json\/data" as a directory: ENOTDIR \(not a directory\)\n$/,
    ],
    ['a data dir that is a file', ['worker', '--data-dir', configFile('data-file.json', {})], /: cannot use ".*data-file\.json" as a directory: ENOTDIR \(not a directory\)\n$/],
    ['a worker with no batch slots', ['worker', '--max-concurrent-batches', '0'], /^error: option '--max-concurrent-batches <n>' argument '0' is invalid\. must be at least 1\.$/m],
    ['a demo site of no pages', ['demo', '--pages', '0'], /^error: option '--pages <n>' argument '0' is invalid\. must be at least 1\.$/m],
    ['a demo site of pages that are not a number', ['demo', '--pages', 'many'], /^error: option '--pages <n>' argument 'many' is invalid\. must be an integer\.$/m],
    ['a demo page count in exponent notation', ['demo', '--pages', '1e9'], /^error: option '--pages <n>' argument '1e9' is invalid\. must be an integer\.$/m],
    ['a demo site of more pages than it can hold', ['demo', '--pages', '1000001'], /^error: option '--pages <n>' argument '1000001' is invalid\. must be at most 1,000,000\.$/m],
    ['a render worker with no page slots', ['render-worker', '--max-concurrent-pages', '0'], /argument '0' is invalid\. must be at least 1\.$/m],
    ['a metrics address that is no host:port', ['worker', '--metrics-address', 'everywhere'], /'--metrics-address <host:port>' argument 'everywhere' is invalid\. must be host:port/],
    ['a metrics address from the environment that is no host:port', ['worker'], /value 'everywhere' from env 'CRAWLFLOW_METRICS_ADDRESS' is invalid/, { CRAWLFLOW_METRICS_ADDRESS: 'everywhere' }],
    ['a results file in a directory that does not exist', ['crawl', 'http://127.0.0.1:9/', '--out', '/nonexistent/dir/out.jsonl'], /^crawlflow: --out \/nonexistent\/dir\/out\.jsonl: cannot write it \(ENOENT\)$/m],
    ['a results file that is a directory', ['crawl', 'http://127.0.0.1:9/', '--out', configDir], /^crawlflow: --out .*: cannot write it \(EISDIR\)$/m],
    ['a results export to a directory that does not exist', ['results', 'some-crawl', '--out', '/nonexistent/dir/out.jsonl'], /^crawlflow: --out \/nonexistent\/dir\/out\.jsonl: cannot write it \(ENOENT\)$/m],
    ['a results export to a directory', ['results', 'some-crawl', '--out', configDir], /^crawlflow: --out .*: cannot write it \(EISDIR\)$/m],
    [
      "a config file's seeds file that does not exist",
      ['crawl', '--config', configFile('seeds-file.json', { seedsFile: '/nonexistent/seeds.txt' })],
      /^crawlflow: .*seeds-file\.json: seedsFile \/nonexistent\/seeds\.txt: cannot read it \(ENOENT\)$/m,
      EMBEDDED,
    ],
    ['an invalid exclude regex', ['crawl', 'http://127.0.0.1:9/', '--exclude', '/ok/**', '--exclude', 're:('], /--exclude: "re:\(": invalid regular expression/],
    ['a sitemap that is not http(s)', ['crawl', 'http://127.0.0.1:9/', '--sitemap', 'file:///etc/passwd'], /--sitemap: must be an absolute http\(s\) URL/],
    ['an unknown trailing-slash rule', ['crawl', 'http://127.0.0.1:9/', '--trailing-slash', 'sometimes'], /--trailing-slash: /],
    [
      'a config file include that is no pattern',
      ['crawl', '--config', configFile('bad-include.json', { seeds: ['http://127.0.0.1:9/'], include: ['/ok/**', 'docs/**'] })],
      /bad-include\.json: include\.1: "docs\/\*\*": a glob must start with \//,
    ],
    ['a store URL of another database (password never echoed)', ['worker', '--store', 'mysql://u:topsecret@db/x'], /^crawlflow: --store .*mysql:\/\/u:redacted@db\/x: unsupported scheme "mysql:"; expected postgres:\/\/\n$/],
    ['a store URL without a database', ['results', 'some-crawl', '--store', 'postgres://u:topsecret@db'], /--store .*: no database name/],
    ['a bad store URL from the environment', ['crawl', 'http://127.0.0.1:9/'], /CRAWLFLOW_STORE_URL\) \(unparsable URL\): not a URL/, { CRAWLFLOW_STORE_URL: 'topsecret but no URL' }],
    ['a reserved header', ['crawl', 'http://127.0.0.1:9/', '--header', 'Host: evil.example'], /^crawlflow: --header Host: header may not be set: it is set by the transport/],
    ['a header without a colon', ['crawl', 'http://127.0.0.1:9/', '--header', 'X-Token'], /--header.*must be written as 'Name: value'/],
    ['a proxy with credentials (never echoed)', ['crawl', 'http://127.0.0.1:9/', '--proxy', 'http://me:hunter2@127.0.0.1:3128'], /^(?!.*hunter2)crawlflow: --proxy: must not contain credentials/],
    ['a zero AutoThrottle target', ['crawl', 'http://127.0.0.1:9/', '--auto-throttle', '--auto-throttle-target', '0'], /--auto-throttle-target: /],
  ];
  itRejectsEach(cases, env);

  /** The commands that reach a crawl or a schedule by its ID, or list schedules: none has a use for a task queue. */
  const withoutTaskQueue: ReadonlyArray<[string, string[]]> = [
    ['status', ['status', 'some-crawl']],
    ['results', ['results', 'some-crawl']],
    ['schedule list', ['schedule', 'list']],
    ...['describe', 'pause', 'unpause', 'trigger', 'delete'].map((command): [string, string[]] => [`schedule ${command}`, ['schedule', command, 'nightly']]),
  ];
  // The server knows a crawl's queue, and a schedule's crawls run on the queue `create` gave it: the flag would do nothing.
  itRejectsEach(
    withoutTaskQueue.map(([name, args]): UsageCase => [`--task-queue on ${name}`, [...args, '--task-queue', 'elsewhere'], /^error: unknown option '--task-queue'\n$/]),
    env,
  );

  it('lists --data-dir and no --task-queue in the --help of the commands that take none; schedule create keeps it', async () => {
    for (const [name, args] of [...withoutTaskQueue, ['schedule create', ['schedule', 'create']] as [string, string[]]]) {
      const { code, stdout, stderr } = await runCli([...args.slice(0, name.split(' ').length), '--help'], env);
      const taskQueue = name === 'schedule create';
      assert.deepEqual({ code, stderr, dataDir: stdout.includes('--data-dir <dir>'), taskQueue: stdout.includes('--task-queue <name>') }, { code: 0, stderr: '', dataDir: true, taskQueue }, name);
    }
  });

  /** The line of a results file refused because its partial file is there. */
  const partialTaken = (what: string, partial: string): string =>
    `crawlflow: ${what}: ${partial} exists (another export is writing it, or one was killed: remove it if none is running)\n`;

  it('refuses a results file whose partial file exists (an export writing it, or one killed), naming it, with exit 2 before anything starts', async () => {
    const work = mkdtempSync(join(configDir, 'partial-'));
    const out = join(work, 'out.jsonl');
    writeFileSync(`${out}.partial`, 'another export, mid-way\n');
    // Through a link the export writes the file it points to, by way of that file's partial file: here a dangling link, which takes the name all the same.
    const real = join(work, 'real.jsonl');
    const link = join(work, 'link.jsonl');
    writeFileSync(real, 'an earlier export\n');
    symlinkSync(real, link);
    symlinkSync(join(work, 'nowhere'), `${real}.partial`);
    writeFileSync(join(work, 'default-id.jsonl.partial'), '');
    const expected: Array<[string[], string]> = [
      [['crawl', 'http://127.0.0.1:9/', '--out', out], partialTaken(`--out ${out}`, `${out}.partial`)],
      [['demo', '--out', out], partialTaken(`--out ${out}`, `${out}.partial`)],
      [['results', 'some-crawl', '--out', out], partialTaken(`--out ${out}`, `${out}.partial`)],
      [['crawl', 'http://127.0.0.1:9/', '--out', link], partialTaken(`--out ${link}`, `${real}.partial`)],
      [['crawl', 'http://127.0.0.1:9/', '--id', 'default-id'], partialTaken(`results file (choose another with --out) ${join(work, 'default-id.jsonl')}`, join(work, 'default-id.jsonl.partial'))],
    ];
    for (const [args, stderr] of expected) {
      const result = await runCli(args, env, 120_000, work);
      assert.deepEqual(result, { code: 2, stdout: '', stderr }, args.join(' '));
    }
    assert.equal(readFileSync(`${out}.partial`, 'utf8'), 'another export, mid-way\n', 'the partial file is left alone');
    assert.equal(readFileSync(real, 'utf8'), 'an earlier export\n');
  });

  it('takes a FIFO or standard output as --out beside a file named as their partial file would be: they are written through, with none', async () => {
    const work = mkdtempSync(join(configDir, 'no-partial-'));
    const fifo = join(work, 'out.fifo');
    execFileSync('mkfifo', [fifo]);
    writeFileSync(`${fifo}.partial`, '');
    writeFileSync(join(work, '-.partial'), '');
    for (const out of [fifo, '-']) {
      // Past the check, the crawl cannot start: nothing listens on port 1.
      const { code, stderr } = await runCli(['crawl', 'http://127.0.0.1:9/', '--out', out], env, 120_000, work);
      assert.equal(code, 1, stderr);
      assert.match(stderr, /^crawlflow: cannot connect to the Temporal server at 127\.0\.0\.1:1 \(TEMPORAL_ADDRESS\): [^\n]+\n$/, out);
    }
  });

  it('prints the version of package.json with --version, and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const result = await runCli([flag], env);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, `${version}\n`);
    }
  });
});

/** `crawlflow <args>` with a pseudo-terminal as its standard output (util-linux `script`), so `isatty(1)` is true as at a shell prompt. */
async function runCliOnTerminal(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const quote = (arg: string): string => `'${arg.replace(/'/g, "'\\''")}'`;
  // script writes a transcript besides its output: to a file of this test's own, never /dev/null.
  const transcript = join(configDir, `terminal-${process.hrtime.bigint()}.log`);
  const child = spawn('script', ['-qec', [process.execPath, CLI, ...args].map(quote).join(' '), transcript], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('latin1')));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}

describe('a WARC export to a terminal', () => {
  const env = { TEMPORAL_ADDRESS: '127.0.0.1:1', CRAWLFLOW_DATA_DIR: configDir };
  const refusal = 'crawlflow: --format warc: refusing to write compressed data to a terminal; redirect standard output to a file or a pipe, or give --out <file>\r\n';

  it('is refused with one line and exit code 2, before anything starts, by `results` and `crawl`', { skip: !existsSync('/usr/bin/script') && 'util-linux script is not installed' }, async () => {
    for (const args of [
      ['results', 'no-such-crawl', '--format', 'warc', '--out', '-'],
      ['results', 'no-such-crawl', '--format', 'warc', '--out', '/dev/stdout'],
      ['crawl', 'http://127.0.0.1:9/', '--store-bodies', '--format', 'warc', '--out', '-'],
    ]) {
      assert.deepEqual(await runCliOnTerminal(args, env), { code: 2, output: refusal }, args.join(' '));
    }
    // Text formats may go to a terminal: the same command gets past the check, to the unknown crawl (exit 1).
    const jsonl = await runCliOnTerminal(['results', 'no-such-crawl', '--format', 'jsonl', '--out', '-'], env);
    assert.equal(jsonl.code, 1, jsonl.output);
    assert.doesNotMatch(jsonl.output, /terminal/);
  });

  it('goes ahead when standard output is a pipe', async () => {
    const piped = await runCli(['results', 'no-such-crawl', '--format', 'warc', '--out', '-'], env);
    assert.equal(piped.code, 1, piped.stderr);
    assert.doesNotMatch(piped.stderr, /terminal/);
  });

  it('is decided by format, target and terminal alike', () => {
    assert.throws(() => checkTerminalOut('-', 'warc', true), { code: 'usage' });
    for (const [out, format, terminal] of [['-', 'warc', false], ['-', 'jsonl', true], ['-', 'csv', true], [join(configDir, 'x.warc.gz'), 'warc', true]] as const) {
      assert.doesNotThrow(() => checkTerminalOut(out, format, terminal), `${out} ${format} ${terminal}`);
    }
  });
});

describe('quick start: embedded dev server', () => {
  let site: SyntheticSite;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    site = await startSyntheticSite({ pages: 200 });
    dataDir = mkdtempSync(join(tmpdir(), 'crawlflow-cli-'));
    env = await embeddedServerEnv(dataDir);
  });
  after(async () => {
    await site?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('crawls to the end, writes one line per URL, and a second start of the same ID crawls nothing', async () => {
    const out = join(dataDir, 'out.jsonl');
    const args = ['crawl', site.urlOf(0), '--out', out, '--id', 'cli-crawl', '--json'];
    const first = await runCli(args, env);
    assert.equal(first.code, 0, first.stderr);
    const summary = JSON.parse(first.stdout) as { status: string; lines: number; uiUrl: string };
    const expected = site.graph.reachableFrom(0).size;
    assert.equal(summary.status, 'completed');
    assert.equal(summary.lines, expected);
    assert.match(summary.uiUrl, /\/namespaces\/default\/workflows\/cli-crawl$/);
    const records = readJsonl(out);
    assert.deepEqual(sortedPaths(records.map((record) => record.url)), reachablePagePaths(site), 'one line per reachable page');
    for (const field of ['url', 'status', 'error', 'skipped', 'title', 'depth', 'links', 'fetchedAt']) {
      assert.ok(field in records[0], `record has ${field}`);
    }
    const requestsAfterFirst = site.requests.length;

    const second = await runCli(args, env);
    assert.equal(second.code, 0, second.stderr);
    assert.equal((JSON.parse(second.stdout) as { lines: number }).lines, expected);
    assert.deepEqual(requestedPagePaths(site, { from: requestsAfterFirst }), [], 'the second start fetched nothing');
  });

  it('a crawl of a seed whose host refuses connections: its summary counts one URL with one error, in the singular, and the record says connect', async () => {
    const out = join(dataDir, 'refused.jsonl');
    const seed = `${await refusingOrigin()}/`;
    const run = await runCli(['crawl', seed, '--out', out, '--id', 'cli-refused'], env);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.split('\n');
    assert.equal(lines[0], 'crawl cli-refused: completed');
    assert.match(lines[1], /^ {2}1 URL \(0 fetched, 1 error, 0 skipped\) in \d+\.\d s, \d+\.\d URLs\/s$/);
    assert.equal(lines[3], `  1 line written to ${out}`);
    assert.deepEqual(readJsonl(out).map(({ url, error, skipped }) => ({ url, error, skipped })), [{ url: seed, error: 'connect', skipped: null }]);
  });

  it('Ctrl-C mid-crawl (SIGINT to its process group) exits 130 with one line on how to go on and nothing on stdout, and the next run finishes the crawl with every page fetched once', async () => {
    const slowSite = await startSyntheticSite({ pages: 300, latencyMs: 20 });
    try {
      const args = ['crawl', slowSite.urlOf(0), '--concurrency', '2', '--batch-size', '10', '--out', join(dataDir, 'interrupted.jsonl'), '--id', 'cli-interrupted'];
      const crawl = spawnCli(args, env);
      await waitFor(() => slowSite.requests.length >= 20, 60_000, '20 page requests');
      const interruptedAt = Date.now();
      crawl.signalGroup('SIGINT');
      assert.deepEqual(await crawl.exited, [130, null], crawl.stderr());
      const exitSeconds = (Date.now() - interruptedAt) / 1000;
      assert.equal(crawl.stderr(), 'crawlflow: the worker stopped before crawl cli-interrupted finished; it is durable: run `crawlflow worker` to continue it\n');
      // A dev server that the Ctrl-C stopped along with the command left its worker retrying the
      // batches' reports for about 10 s, the SDK's core printing each retry on stdout.
      assert.equal(crawl.stdout(), '', 'nothing on stdout');
      assert.ok(exitSeconds < 8, `exited ${exitSeconds.toFixed(1)} s after Ctrl-C: its two batches of 10 pages finished and reported`);
      const reachable = reachablePagePaths(slowSite);
      assert.ok(requestedPagePaths(slowSite).length < reachable.length, 'the crawl was stopped before its end');

      const resumed = await runCli(args, env);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.deepEqual(requestedPagePaths(slowSite), reachable, 'every page fetched once over the two runs');
    } finally {
      await slowSite.close();
    }
  });

  it('takes the crawl from a --config file, with flags over it', async () => {
    const config = configFile('crawl.json', { seeds: [site.urlOf(0)], maxPages: 40, maxDepth: 1, concurrency: 2 });
    const out = join(dataDir, 'config.jsonl');
    const run = await runCli(['crawl', '--config', config, '--max-pages', '7', '--out', out, '--id', 'cli-config', '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    const records = readJsonl(out);
    assert.equal(records.length, 7, 'the flag overrides the file');
    assert.equal(records[0].url, site.urlOf(0), 'seeds come from the file');
    assert.ok(records.every((record) => record.depth <= 1), 'maxDepth comes from the file');
  });
});

describe('signals to a process that started the embedded dev server', () => {
  // A history of its own: the crawl left behind is not resumed by another test's worker.
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'crawlflow-cli-hangup-'));
    env = await embeddedServerEnv(dataDir);
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('a hang-up (SIGHUP to its process group, as a closed terminal sends it) ends the command and the dev server it started', async () => {
    const slowSite = await startSyntheticSite({ pages: 300, latencyMs: 20 });
    try {
      const crawl = spawnCli(['crawl', slowSite.urlOf(0), '--concurrency', '2', '--batch-size', '10', '--out', join(dataDir, 'hung-up.jsonl'), '--id', 'cli-hung-up'], env);
      await waitFor(() => slowSite.requests.length >= 5, 60_000, '5 page requests');
      crawl.signalGroup('SIGHUP');
      assert.deepEqual(await crawl.exited, [129, null], crawl.stderr());
      const serverPort = Number(env.CRAWLFLOW_DEV_SERVER_PORT);
      await waitFor(async () => !(await isPortOpen('127.0.0.1', serverPort)), 15_000, 'the dev server stopped');
    } finally {
      await slowSite.close();
    }
  });

  for (const [signal, status] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    it(`${signal} to a process that handles no signal (a command before its worker runs) ends it with status ${status} and its dev server`, async () => {
      const port = await freeServerPort();
      // The dev server module alone, as a command uses it before anything else listens for signals.
      const script = `require(${JSON.stringify(DEV_SERVER_MODULE)}).startDevServer(${JSON.stringify({
        port,
        uiPort: await freeServerPort(),
        dbFile: join(dataDir, `${signal}.sqlite`),
        logFile: join(dataDir, `${signal}.log`),
        headless: true,
      })}).then(() => console.log('serving'))`;
      const starter = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = once(starter, 'exit');
      await once(starter.stdout, 'data');
      assert.equal(await isPortOpen('127.0.0.1', port), true, 'the server serves');
      starter.kill(signal);
      assert.deepEqual(await exited, [status, null]);
      await waitFor(async () => !(await isPortOpen('127.0.0.1', port)), 15_000, 'the dev server stopped');
    });
  }
});

/** A line of the CLI's log on stderr, as pino writes it in JSON. */
interface JsonLogLine {
  level: number;
  name: string;
  msg: string;
  component?: string;
  sdkComponent?: string;
}

describe("the Temporal server going away mid-crawl, under the embedded default's in-process worker", () => {
  let dataDir: string;
  let site: SyntheticSite;
  let server: DevServer | undefined;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'crawlflow-cli-server-gone-'));
    site = await startSyntheticSite({ pages: 300, latencyMs: 20 });
  });
  after(async () => {
    await server?.stop();
    await site?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("puts the SDK core's retry warnings on stderr as the CLI's JSON log lines, and nothing but the --json summary on stdout", async () => {
    const serverOptions = { port: await freeServerPort(), uiPort: await freeServerPort(), dbFile: join(dataDir, 'temporal.sqlite'), logFile: join(dataDir, 'temporal.log'), headless: true };
    server = await startDevServer(serverOptions);
    const out = join(dataDir, 'server-gone.jsonl');
    // A server already on the embedded port is used as is: the crawl runs its worker in-process
    // on the test's server, which the test can then stop and start again.
    const env = {
      TEMPORAL_ADDRESS: '',
      CRAWLFLOW_DATA_DIR: dataDir,
      CRAWLFLOW_DEV_SERVER_PORT: String(serverOptions.port),
      CRAWLFLOW_DEV_SERVER_UI_PORT: String(serverOptions.uiPort),
      CRAWLFLOW_LOG_FORMAT: 'json',
      CRAWLFLOW_LOG_LEVEL: 'warn',
    };
    const crawl = spawnCli(['crawl', site.urlOf(0), '--concurrency', '2', '--batch-size', '10', '--id', 'cli-server-gone', '--out', out, '--json'], env);
    try {
      await waitFor(() => site.requests.length >= 20, 60_000, '20 page requests');
      await server.stop();
      // The worker's reports of its finished batches fail now, and the core retries them; its
      // warning is looked for on both streams, the assertions below say which it must be on.
      const output = (): string => `${crawl.stdout()}${crawl.stderr()}`;
      await waitFor(() => output().includes('respond_activity_task_completed retried'), 30_000, "the core's warning that it retries a batch's report");
      server = await startDevServer(serverOptions);
      assert.deepEqual(await crawl.exited, [0, null], crawl.stderr());
    } finally {
      if (crawl.running()) crawl.signal('SIGKILL');
    }

    assert.match(crawl.stdout(), /^\{[^\n]*\}\n$/, 'one line on stdout: the JSON summary');
    const summary = JSON.parse(crawl.stdout()) as { crawlId: string; status: string; out: string; lines: number };
    const reachable = reachablePagePaths(site);
    assert.deepEqual({ crawlId: summary.crawlId, status: summary.status, out: summary.out, lines: summary.lines }, { crawlId: 'cli-server-gone', status: 'completed', out, lines: reachable.length });

    const logLines = crawl.stderr().trimEnd().split('\n').map((line) => JSON.parse(line) as JsonLogLine);
    assert.deepEqual(logLines.filter((line) => line.name !== 'crawlflow' || line.level < 40), [], 'every stderr line is the CLI logger\'s, at warn or above');
    const coreRetries = logLines.filter((line) => line.sdkComponent === 'core' && /^gRPC call respond_activity_task_completed retried \d+ times$/.test(line.msg));
    assert.ok(coreRetries.length > 0, crawl.stderr());
    for (const line of coreRetries) assert.deepEqual([line.level, line.component], [40, 'temporal-sdk']);
    assert.doesNotMatch(crawl.stderr(), /\u001b/, 'no ANSI colour codes in the JSON lines');
  });
});

describe('past crawls on the embedded default: `status` and `ui` start the dev server on the same history', () => {
  let site: SyntheticSite;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  /** The crawl's Web UI page, as `crawlflow ui` will serve it. */
  let pageUrl: string;
  const serverRuns = () => isPortOpen('127.0.0.1', Number(env.CRAWLFLOW_DEV_SERVER_PORT));

  before(async () => {
    site = await startSyntheticSite({ pages: 50 });
    dataDir = mkdtempSync(join(tmpdir(), 'crawlflow-cli-history-'));
    env = await embeddedServerEnv(dataDir);
    pageUrl = `http://localhost:${env.CRAWLFLOW_DEV_SERVER_UI_PORT}/namespaces/default/workflows/cli-history`;
  });
  after(async () => {
    await site?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('crawl names the command that opens its Web UI page; status then answers from the history and stops the server it started', async () => {
    const crawled = await runCli(['crawl', site.urlOf(0), '--max-pages', '5', '--id', 'cli-history', '--out', join(dataDir, 'history.jsonl')], env);
    assert.equal(crawled.code, 0, crawled.stderr);
    const uiLine = `  Web UI: run \`crawlflow ui\`, then open ${pageUrl}`;
    assert.equal(crawled.stdout.trimEnd().split('\n').at(-1), uiLine, 'the command that serves the link, not a link that died with the crawl');
    assert.equal(await serverRuns(), false, 'the crawl stopped its dev server');

    const json = await runCli(['status', 'cli-history', '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout) as { workflowStatus: string; outcome: string; startedAt: number; finishedAt: number; totals: { processed: number; fetched: number; queued: number; discovered: number }; uiUrl: string };
    assert.deepEqual(
      { workflowStatus: report.workflowStatus, outcome: report.outcome, processed: report.totals.processed, fetched: report.totals.fetched, uiUrl: report.uiUrl },
      { workflowStatus: 'COMPLETED', outcome: 'max-pages-reached', processed: 5, fetched: 5, uiUrl: pageUrl },
    );
    const text = await runCli(['status', 'cli-history'], env);
    assert.equal(text.code, 0, text.stderr);
    const seconds = (report.finishedAt - report.startedAt) / 1000;
    assert.equal(
      text.stdout,
      [
        'crawl cli-history: max-pages-reached',
        `  5 URLs (5 fetched, 0 errors, 0 skipped) in ${seconds.toFixed(1)} s, ${(5 / Math.max(0.001, seconds)).toFixed(1)} URLs/s`,
        `  ${report.totals.queued} left in the frontier, ${report.totals.discovered} discovered`,
        uiLine,
        '',
      ].join('\n'),
    );
    assert.equal(await serverRuns(), false, 'status stopped the dev server it started');
  });

  it('ui serves the Web UI it printed, the ended crawl in it, until SIGTERM stops it cleanly', async () => {
    const ui = spawnCli(['ui'], env);
    try {
      await waitFor(() => ui.stdout().includes('Ctrl-C stops it\n') || !ui.running(), 60_000, '`crawlflow ui` to print its URL');
      const uiUrl = `http://localhost:${env.CRAWLFLOW_DEV_SERVER_UI_PORT}`;
      assert.equal(ui.stdout(), `Web UI: ${uiUrl}\n  history from ${join(dataDir, 'temporal.sqlite')}; Ctrl-C stops it\n`, ui.stderr());
      // The Web UI's own API, behind the page the crawl printed: it answers from the crawl's history.
      let execution: { workflowExecutionInfo?: { execution: { workflowId: string }; status: string } } = {};
      await waitFor(
        async () => {
          const response = await request(`${uiUrl}/api/v1/namespaces/default/workflows/cli-history`).catch(() => undefined);
          if (response?.statusCode !== 200) return false;
          execution = (await response.body.json()) as typeof execution;
          return true;
        },
        30_000,
        'the Web UI to answer',
      );
      assert.deepEqual(
        { workflowId: execution.workflowExecutionInfo?.execution.workflowId, status: execution.workflowExecutionInfo?.status },
        { workflowId: 'cli-history', status: 'WORKFLOW_EXECUTION_STATUS_COMPLETED' },
      );
      const page = await request(pageUrl);
      assert.equal(page.statusCode, 200, 'the page the crawl named is served');
      assert.match(await page.body.text(), /<html/i);
    } finally {
      ui.signal('SIGTERM');
    }
    assert.deepEqual(await ui.exited, [0, null], `exit code 0 after SIGTERM (${ui.stderr()})`);
    assert.equal(await serverRuns(), false, 'the dev server stopped with it');
  });
});

describe('crawlflow crawl waits out many result polls and runs', () => {
  let env: TestTemporal;
  let worker: WorkerProcess;
  const taskQueue = uniqueQueue('cli-long');
  before(async () => {
    // The server answers a result's long poll after 1 s instead of 20, and suggests
    // continue-as-new at 200 events: a crawl of about 20 s is many polls over several runs.
    env = await startTestTemporal({ dynamicConfig: { 'history.longPollExpirationInterval': '1s', 'limit.historyCount.suggestContinueAsNew': 200 } });
    worker = spawnWorker({ address: env.address, taskQueue, dataDir: env.dataDir, logFile: join(env.dataDir, 'worker.log') });
    await worker.ready;
  });
  after(async () => {
    await worker?.kill('SIGTERM');
    await env?.close();
  });

  it('prints the last run\'s summary and nothing on stderr: no listener is left behind per poll', async () => {
    const site = await startSyntheticSite({ pages: 300, latencyMs: 100 });
    try {
      const out = join(env.dataDir, 'long.jsonl');
      const started = Date.now();
      const args = ['crawl', site.urlOf(0), '--concurrency', '2', '--batch-size', '5', '--task-queue', taskQueue, '--id', 'cli-long', '--out', out, '--json'];
      const run = await runCli(args, { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_DATA_DIR: env.dataDir });
      const seconds = (Date.now() - started) / 1000;
      assert.equal(run.code, 0, run.stderr);
      // Node warns of a leak at an AbortSignal's eleventh listener: one signal over the whole wait had one per poll.
      assert.ok(seconds > 12, `the wait spanned more than eleven polls (${seconds.toFixed(1)} s)`);
      assert.equal(run.stderr, '');
      const summary = JSON.parse(run.stdout) as { status: string; runs: number; totals: { processed: number } };
      assert.ok(summary.runs >= 2, `the crawl continued as new (${summary.runs} runs)`);
      assert.equal(summary.status, 'completed');
      const reachable = reachablePagePaths(site);
      assert.equal(summary.totals.processed, reachable.length, 'the summary is the last run\'s, with every run\'s pages');
      assert.deepEqual(requestedPagePaths(site), reachable, 'every page fetched once');
      assert.deepEqual(sortedPaths(readJsonl(out).map((record) => record.url)), reachable);
    } finally {
      await site.close();
    }
  });
});

describe('the result wait, stopped after the server has cycled its connection', () => {
  interface OpenWait {
    client: Client;
    /** How the wait ended: 'resolved', or its error's message. */
    settled: Promise<string>;
    /** Stops the dev server (once; the helper stops it otherwise). */
    stopServer(): Promise<void>;
  }

  /**
   * On a dev server of its own, waits through `crawlResult` on a crawl no worker runs (so it
   * stays open), on a connection of crawlflow's own; `body` ends the wait its way. Errors
   * thrown outside any promise while it runs (a retry's timer) are collected and must be none.
   */
  async function waitOnOpenCrawl(dynamicConfig: Record<string, string>, stop: AbortSignal, body: (wait: OpenWait) => Promise<void>): Promise<void> {
    const env = await startTestTemporal({ dynamicConfig });
    let serverStopped = false;
    const stopServer = async () => {
      serverStopped = true;
      await env.close();
    };
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const client = await connectClient({ connectionOptions: { address: env.address }, namespace: 'default' });
      await client.workflow.start(CRAWL_WORKFLOW_TYPE, { workflowId: 'open-crawl', taskQueue: uniqueQueue('nobody'), args: [{}] });
      const settled = crawlResult(client, 'open-crawl', stop).then(
        () => 'resolved',
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      );
      await body({ client, settled, stopServer });
      assert.deepEqual(uncaught, []);
    } finally {
      process.off('uncaughtException', onUncaught);
      if (!serverStopped) await env.close();
    }
  }

  it('ends with the connection\'s error once the server is gone, and nothing is thrown from a retry', async () => {
    // The server closes each connection after 2 s, so the wait's long poll is retried on a new
    // call that cancelling the first does not reach; `crawlflow crawl` closes the connection and
    // then stops its embedded server, as this test does.
    const cyclingServer = { 'frontend.keepAliveMaxConnectionAge': '2s', 'frontend.keepAliveMaxConnectionAgeGrace': '1s' };
    const stop = new AbortController();
    await waitOnOpenCrawl(cyclingServer, stop.signal, async ({ client, settled, stopServer }) => {
      await sleep(8_000);
      stop.abort();
      await client.connection.close();
      await stopServer();
      assert.match(await settled, /UNAVAILABLE|CANCELLED/);
      await sleep(2_000);
    });
  });

  it('a poll still retrying against a stopped server when the connection closes ends with its error, and nothing is thrown', async () => {
    await waitOnOpenCrawl({}, new AbortController().signal, async ({ client, settled, stopServer }) => {
      // With the server gone, the poll fails and is retried with backoff (100 ms, then 1.7x
      // longer each time) for several seconds: the close below lands while a retry waits.
      await stopServer();
      await sleep(300);
      await client.connection.close();
      assert.match(await settled, /UNAVAILABLE/);
      await sleep(1_000);
    });
  });
});

describe('against a running `crawlflow worker`', () => {
  let env: TestTemporal;
  let worker: WorkerProcess;
  let site: SyntheticSite;
  const taskQueue = uniqueQueue('cli-worker');
  before(async () => {
    env = await startTestTemporal();
    worker = spawnWorker({ address: env.address, taskQueue, dataDir: env.dataDir, logFile: join(env.dataDir, 'worker.log') });
    await worker.ready;
    site = await startSyntheticSite({ pages: 150 });
  });
  after(async () => {
    await worker?.kill('SIGTERM');
    await site?.close();
    await env?.close();
  });

  it('`temporal workflow start --type crawlSession` runs a crawl', async () => {
    await startWithTemporalCli(env, taskQueue, 'from-temporal-cli', { seeds: [site.urlOf(0)], maxPages: 40 });
    const summary = await env.client.workflow.getHandle('from-temporal-cli').result();
    assert.equal(summary.status, 'max-pages-reached');
    assert.equal(summary.totals.processed, 40);
  });

  it('both worker commands log at info by default: each prints its "worker ready" line', async () => {
    const workers = (['worker', 'render-worker'] as const).map((command) =>
      // An empty level is the default's: the helper's workers otherwise log at info whatever the command.
      spawnWorker({ command, address: env.address, taskQueue: uniqueQueue(command), dataDir: env.dataDir, logFile: join(env.dataDir, `${command}-default-level.log`), env: { CRAWLFLOW_LOG_LEVEL: '' } }),
    );
    try {
      const ready = workers.map(() => false);
      workers.forEach((started, i) => void started.ready.then(() => (ready[i] = true)));
      await waitFor(() => ready.every(Boolean), 30_000, `"worker ready" from both: ${ready.join(', ')}`);
    } finally {
      await Promise.all(workers.map((started) => started.kill('SIGTERM')));
    }
  });

  it('a second worker whose store cannot be reached exits 1 with one line, having closed what it opened', async () => {
    // Its metrics endpoint and its Temporal connection are open when the store is checked;
    // left open, the process would live on, and SIGTERM would not end it (no worker to stop).
    const args = ['worker', '--store', 'postgres://crawlflow@127.0.0.1:1/nothing', '--metrics-address', '127.0.0.1:0', '--task-queue', uniqueQueue('no-store')];
    const { code, stderr } = await runCli(args, { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_DATA_DIR: env.dataDir }, 30_000);
    assert.equal(code, 1, `exited by itself (a kill after 30 s leaves no code): ${stderr}`);
    assert.match(stderr, /^crawlflow: frontier store postgres:\/\/crawlflow@127\.0\.0\.1:1\/nothing: connect ECONNREFUSED 127\.0\.0\.1:1\n$/);
  });

  it('a crawl opened by a worker with one store, then batched on a worker with another, fails naming that store and the fix', async () => {
    // Two machines without a shared store: the second one started without CRAWLFLOW_STORE_URL.
    const slowSite = await startSyntheticSite({ pages: 300, latencyMs: 20 });
    const queue = uniqueQueue('other-store');
    const otherDataDir = mkdtempSync(join(tmpdir(), 'crawlflow-other-store-'));
    const opener = spawnWorker({ address: env.address, taskQueue: queue, dataDir: env.dataDir, logFile: join(env.dataDir, 'opener-worker.log') });
    let other: WorkerProcess | undefined;
    try {
      await opener.ready;
      const handle = await startCrawl(env.client, 'opened-elsewhere', { seeds: [slowSite.urlOf(0)], concurrency: 2, batchSize: 10, maxDepth: 1_000 }, queue);
      await waitFor(() => slowSite.requests.length >= 5, 60_000, '5 requests from the first worker');
      await opener.kill('SIGTERM');
      other = spawnWorker({ address: env.address, taskQueue: queue, dataDir: otherDataDir, logFile: join(otherDataDir, 'other-worker.log') });
      assert.equal(
        await failureCause(handle),
        'every batch failed the same way, so the crawl stopped: crawl opened-elsewhere has no recorded config version 1 in this worker\'s store ' +
          `(sqlite files in ${otherDataDir}): it was opened by a worker with another store; every worker on a task queue must use the same --store (CRAWLFLOW_STORE_URL)`,
      );
    } finally {
      await opener.kill('SIGTERM');
      await other?.kill('SIGTERM');
      await slowSite.close();
      rmSync(otherDataDir, { recursive: true, force: true });
    }
  });

  it('a second worker whose store accepts connections but never answers exits 1 once the connect timeout has passed', async () => {
    // A frozen database server: the kernel completes the TCP handshake, nothing is ever said.
    const silent = createServer(() => undefined).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      const { port } = silent.address() as AddressInfo;
      const args = ['worker', '--store', `postgres://crawlflow@127.0.0.1:${port}/crawlflow`, '--metrics-address', 'off', '--task-queue', uniqueQueue('silent-store')];
      const startedAt = Date.now();
      const { code, stderr } = await runCli(args, { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_DATA_DIR: env.dataDir }, 40_000);
      const seconds = (Date.now() - startedAt) / 1000;
      assert.equal(code, 1, `exited by itself (a kill after 40 s leaves no code): ${stderr}`);
      assert.equal(stderr, `crawlflow: frontier store postgres://crawlflow@127.0.0.1:${port}/crawlflow: no answer within ${CONNECT_TIMEOUT_MS / 1000} s of connecting (timeout expired)\n`);
      assert.ok(seconds >= CONNECT_TIMEOUT_MS / 1000 && seconds < CONNECT_TIMEOUT_MS / 1000 + 15, `ended ${seconds.toFixed(1)} s after start, by the connect timeout`);
    } finally {
      silent.close();
    }
  });

  it('a second worker whose metrics address is taken exits 1 with one line that says how to choose another', async () => {
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    try {
      const address = `127.0.0.1:${(taken.address() as AddressInfo).port}`;
      const args = ['worker', '--metrics-address', address, '--task-queue', uniqueQueue('metrics-taken')];
      const { code, stderr } = await runCli(args, { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_DATA_DIR: env.dataDir }, 30_000);
      assert.equal(code, 1, stderr);
      assert.equal(stderr, `crawlflow: metrics endpoint ${address}: cannot listen there (EADDRINUSE): choose another with --metrics-address (port 0 takes any free one), or "off"\n`);
    } finally {
      taken.close();
    }
  });

  it('invalid input from `temporal workflow start` fails the workflow at once, naming the field', async () => {
    await startWithTemporalCli(env, taskQueue, 'bad-input', { seeds: [site.urlOf(0)], maxPages: -1 });
    await assert.rejects(env.client.workflow.getHandle('bad-input').result(), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError);
      assert.match(String(err.cause?.message), /maxPages/);
      return true;
    });
  });

  it('a workflow ID that cannot be a crawl ID fails the crawl at once, naming it, before any file is written', async () => {
    const cases: Array<[string, string]> = [
      ['..', 'must not be "." or "..", which name directories'],
      ['line\nbreak', 'must not contain control characters (line breaks, tabs)'],
    ];
    await Promise.all(cases.map(([id]) => startWithTemporalCli(env, taskQueue, id, { seeds: [site.urlOf(0)], maxPages: 5, storeBodies: true })));
    for (const [id, why] of cases) {
      await assert.rejects(env.client.workflow.getHandle(id).result(), (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure, `${JSON.stringify(id)}: ${String(err)}`);
        assert.equal(err.cause.type, 'invalid-crawl-id');
        assert.equal(err.cause.nonRetryable, true);
        assert.equal(err.cause.message, `crawl ID ${JSON.stringify(id)} ${why}`);
        return true;
      });
    }
    // `..` made `crawls/...sqlite` and put its bodies in `<data-dir>/warc`, outside `crawls`.
    assert.ok(!existsSync(join(env.dataDir, 'crawls', '...sqlite')), 'no store of ..');
    assert.ok(!existsSync(join(env.dataDir, 'warc')), 'no bodies of .. outside crawls/');
    assert.ok(!existsSync(join(env.dataDir, 'crawls', 'line%0Abreak.sqlite')), 'no store of the ID with a line break');
  });

  it('seeds given as one string, not a list, are refused as such, not as missing', async () => {
    await startWithTemporalCli(env, taskQueue, 'seeds-string', { seeds: site.urlOf(0) });
    await assert.rejects(env.client.workflow.getHandle('seeds-string').result(), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure, String(err));
      assert.equal(err.cause.message, 'invalid crawl config: seeds: must be a list of URLs, such as ["https://example.com/"]');
      return true;
    });
  });

  it('an input that is not an object (none, null, a list, a string) fails the workflow at once instead of its task failing for ever', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['no-input', undefined, 'no input'],
      ['null-input', null, 'null'],
      ['list-input', [site.urlOf(0)], 'a list'],
      ['string-input', site.urlOf(0), 'a string'],
    ];
    await Promise.all(cases.map(([id, input]) => startWithTemporalCli(env, taskQueue, id, input)));
    for (const [id, , got] of cases) {
      const handle = env.client.workflow.getHandle(id);
      // Before, the workflow task failed and was retried for ever: the run never closed.
      await waitFor(async () => (await handle.describe()).status.name !== 'RUNNING', 15_000, `${id} to close`);
      await assert.rejects(handle.result(), (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure, `${id}: ${String(err)}`);
        assert.equal(err.cause.type, 'InvalidCrawlConfig');
        assert.equal(err.cause.nonRetryable, true);
        assert.equal(err.cause.message, `invalid crawl config: input: must be an object of crawl settings, such as {"seeds": ["https://example.com/"]}, not ${got}`);
        return true;
      });
      const events = (await handle.fetchHistory()).events ?? [];
      assert.ok(!events.some((event) => event.workflowTaskFailedEventAttributes), `${id}: no workflow task failed`);
    }
  });

  it('a `continued` field in a crawl\'s own input is refused as unknown, not taken for a continued run\'s hand-over', async () => {
    // `{}` made the workflow task fail for ever. A 0.2.0 run's hand-over (a `continued` with a
    // `frontier`) is still taken as one, however it starts (scheduling-core starts one directly).
    const cases: Array<[string, unknown]> = [
      ['continued-empty', {}],
      ['continued-current-shape', { run: 2, startedAt: 0, plan: {}, scheduler: {} }],
    ];
    await Promise.all(cases.map(([id, continued]) => startWithTemporalCli(env, taskQueue, id, { seeds: [site.urlOf(0)], maxPages: 5, continued })));
    for (const [id] of cases) {
      const handle = env.client.workflow.getHandle(id);
      await waitFor(async () => (await handle.describe()).status.name !== 'RUNNING', 15_000, `${id} to close`);
      await assert.rejects(handle.result(), (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure, `${id}: ${String(err)}`);
        assert.equal(err.cause.type, 'InvalidCrawlConfig');
        assert.equal(err.cause.message, 'invalid crawl config: continued: unknown field');
        return true;
      });
      const events = (await handle.fetchHistory()).events ?? [];
      assert.ok(!events.some((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'fetchBatch'), `${id}: nothing fetched`);
    }
  });

  describe('crawlflow status of a finished crawl', () => {
    const uiBase = 'http://ui.test';
    const statusEnv = () => ({ TEMPORAL_ADDRESS: env.address, TEMPORAL_UI_URL: uiBase, CRAWLFLOW_DATA_DIR: env.dataDir });
    const uiLink = (crawlId: string) => `  Web UI: ${uiBase}/namespaces/default/workflows/${crawlId}`;
    const secondsBetween = (startedAt: number, finishedAt: number) => ((finishedAt - startedAt) / 1000).toFixed(1);

    it('prints the outcome, totals, duration and Web UI link as text, and the same data with --json', async () => {
      const { summary } = await runCrawlToEnd(env, taskQueue, 'status-finished', { seeds: [site.urlOf(0)], maxPages: 30 });
      const { totals } = summary;
      assert.deepEqual([totals.processed, totals.fetched, totals.errors, totals.skipped], [30, 30, 0, 0]);

      const text = await runCli(['status', 'status-finished'], statusEnv());
      assert.equal(text.code, 0, text.stderr);
      const seconds = secondsBetween(summary.startedAt, summary.finishedAt);
      const rate = (30 / Math.max(0.001, (summary.finishedAt - summary.startedAt) / 1000)).toFixed(1);
      assert.equal(
        text.stdout,
        [
          'crawl status-finished: max-pages-reached',
          `  30 URLs (30 fetched, 0 errors, 0 skipped) in ${seconds} s, ${rate} URLs/s`,
          `  ${totals.queued} left in the frontier, ${totals.discovered} discovered`,
          uiLink('status-finished'),
          '',
        ].join('\n'),
      );

      const json = await runCli(['status', 'status-finished', '--json'], statusEnv());
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(JSON.parse(json.stdout), {
        crawlId: 'status-finished',
        workflowStatus: 'COMPLETED',
        outcome: 'max-pages-reached',
        startedAt: summary.startedAt,
        finishedAt: summary.finishedAt,
        totals,
        failure: null,
        failedBatches: [],
        progress: null,
        frontier: null,
        gaps: null,
        uiUrl: `${uiBase}/namespaces/default/workflows/status-finished`,
      });
    });

    it('prints one line per cause of batches that failed for good', async () => {
      const other = await startSyntheticSite({ pages: 5 });
      try {
        const otherHost = new URL(other.origin).host;
        const { summary } = await runCrawlToEnd(env, taskQueue, 'status-failed-batches', {
          seeds: [site.urlOf(0), other.urlOf(0)],
          maxPages: 20,
          hosts: { [otherHost]: { headersFromEnv: { 'X-Token': 'CRAWLFLOW_TEST_UNSET_TOKEN' } } },
        });
        assert.deepEqual(
          summary.failures,
          [{ code: 'request-secret', message: `hosts.${otherHost}.headersFromEnv.X-Token: environment variable CRAWLFLOW_TEST_UNSET_TOKEN is not set on this worker`, batches: 1 }],
        );
        const text = await runCli(['status', 'status-failed-batches'], statusEnv());
        assert.equal(text.code, 0, text.stderr);
        const lines = text.stdout.trimEnd().split('\n');
        assert.equal(lines[0], 'crawl status-failed-batches: max-pages-reached');
        assert.equal(lines[3], `  1 batch failed with request-secret: ${summary.failures?.[0].message}`);
        const json = JSON.parse((await runCli(['status', 'status-failed-batches', '--json'], statusEnv())).stdout) as { failedBatches: unknown };
        assert.deepEqual(json.failedBatches, summary.failures);
      } finally {
        await other.close();
      }
    });

    it('of a crawl the Temporal server no longer keeps, reads its recorded end and counts from its store, the same report with --json', async () => {
      const crawlId = 'status-forgotten';
      const { summary } = await runCrawlToEnd(env, taskQueue, crawlId, { seeds: [site.urlOf(0)], maxPages: 30 });
      const end = await withCrawlStore(env.store, crawlId, (store) => store.crawlEnd());
      assert.equal(end?.status, 'max-pages-reached');
      // As the namespace's retention does once the crawl has been closed that long.
      await forgetWorkflow(env, crawlId);
      const { totals } = summary;

      const text = await runCli(['status', crawlId], statusEnv());
      assert.equal(text.code, 0, text.stderr);
      assert.equal(
        text.stdout,
        [
          `crawl ${crawlId}: max-pages-reached (from its store: the Temporal server no longer keeps its history)`,
          '  30 URLs (30 fetched, 0 errors, 0 skipped)',
          `  ${totals.queued} left in the frontier, ${totals.discovered} discovered`,
          `  ended ${end?.endedAt}`,
          '',
        ].join('\n'),
      );

      const json = await runCli(['status', crawlId, '--json'], statusEnv());
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(JSON.parse(json.stdout), {
        crawlId,
        workflowStatus: null,
        outcome: 'max-pages-reached',
        startedAt: null,
        finishedAt: Date.parse(end?.endedAt ?? ''),
        totals,
        failure: null,
        failedBatches: null,
        progress: null,
        frontier: null,
        gaps: null,
        uiUrl: null,
      });
    });

    it('of a store with no recorded end and no workflow, says it cannot tell how the crawl ended', async () => {
      // A store an earlier release wrote: it recorded no end, and this server never ran it.
      const crawlId = 'status-release-0.1.0';
      mkdirSync(join(env.dataDir, 'crawls'), { recursive: true });
      copyFileSync(join(FIXTURE_DIR, 'v0.1.0.sqlite'), join(env.dataDir, 'crawls', `${crawlId}.sqlite`));
      const text = await runCli(['status', crawlId], statusEnv());
      assert.equal(text.code, 0, text.stderr);
      const totals = await withCrawlStore(env.store, crawlId, (store) => store.totals());
      assert.equal(
        text.stdout,
        [
          `crawl ${crawlId}: end not recorded (from its store: the Temporal server no longer keeps its history, and its store has no recorded end: it was terminated, or run by an earlier release)`,
          `  ${totals.processed} URLs (${totals.fetched} fetched, ${totals.errors} errors, ${totals.skipped} skipped)`,
          `  ${totals.queued} left in the frontier, ${totals.discovered} discovered`,
          '',
        ].join('\n'),
      );
      assert.ok(totals.processed > 1 && totals.errors !== 1, 'the counts are plural');
      const json = JSON.parse((await runCli(['status', crawlId, '--json'], statusEnv())).stdout) as Record<string, unknown>;
      assert.deepEqual(
        [json.workflowStatus, json.outcome, json.startedAt, json.finishedAt, json.totals, json.failure, json.failedBatches, json.uiUrl],
        [null, null, null, null, totals, null, null, null],
      );
    });

    it('prints why a failed crawl failed', async () => {
      await startWithTemporalCli(env, taskQueue, 'status-failed', { seeds: [site.urlOf(0)], maxPages: 0 });
      const handle = env.client.workflow.getHandle('status-failed');
      const failure = await failureCause(handle);
      assert.match(failure, /maxPages/);
      const { startTime, closeTime } = await handle.describe();
      assert.ok(closeTime);

      const text = await runCli(['status', 'status-failed'], statusEnv());
      assert.equal(text.code, 0, text.stderr);
      assert.equal(
        text.stdout,
        ['crawl status-failed: failed', `  reason: ${failure}`, `  ended after ${secondsBetween(startTime.getTime(), closeTime.getTime())} s`, uiLink('status-failed'), ''].join('\n'),
      );

      const json = await runCli(['status', 'status-failed', '--json'], statusEnv());
      assert.equal(json.code, 0, json.stderr);
      const report = JSON.parse(json.stdout) as Record<string, unknown>;
      assert.deepEqual(
        [report.workflowStatus, report.outcome, report.failure, report.totals, report.startedAt, report.finishedAt],
        ['FAILED', 'failed', failure, null, startTime.getTime(), closeTime.getTime()],
      );
    });
  });

  it('crawlflow status says when no worker answers a running crawl, and when there is no such crawl', async () => {
    const idleQueue = uniqueQueue('nobody-polls');
    await startCrawl(env.client, 'status-no-worker', { seeds: [site.urlOf(0)] }, idleQueue);
    try {
      const cliEnv = { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_DATA_DIR: env.dataDir };
      const unanswered = await runCli(['status', 'status-no-worker'], cliEnv);
      assert.equal(unanswered.code, 1);
      assert.equal(
        unanswered.stderr,
        `crawlflow: crawl status-no-worker is running, but no worker answered within 5 s: start \`crawlflow worker --task-queue ${idleQueue}\` (see docs/troubleshooting.md)\n`,
      );
      const unknown = await runCli(['status', 'no-such-crawl'], cliEnv);
      assert.equal(unknown.code, 1);
      assert.equal(unknown.stderr, 'crawlflow: no crawl "no-such-crawl" on the Temporal server or in the store\n');
      assert.ok(!existsSync(join(env.dataDir, 'crawls', 'no-such-crawl.sqlite')), 'no store made');
    } finally {
      await env.client.workflow.getHandle('status-no-worker').terminate('test over');
    }
  });

  it('crawlflow status says no worker answers once the workers of a running crawl have stopped', async () => {
    // A queue that had a worker: the server then answers a query with "no poller seen for task
    // queue recently" before the deadline, not with a timeout.
    const goneQueue = uniqueQueue('worker-gone');
    const goneWorker = spawnWorker({ address: env.address, taskQueue: goneQueue, dataDir: env.dataDir, logFile: join(env.dataDir, 'gone-worker.log') });
    await goneWorker.ready;
    const handle = await startCrawl(env.client, 'status-worker-gone', { seeds: [site.urlOf(0)], delayMs: 3_000 }, goneQueue);
    try {
      await waitFor(async () => (await handle.query(progressQuery)).processed >= 1, 30_000, 'the first page fetched');
      await goneWorker.kill('SIGTERM');
      const unanswered = await runCli(['status', 'status-worker-gone'], { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_DATA_DIR: env.dataDir });
      assert.equal(unanswered.stderr, `crawlflow: crawl status-worker-gone is running, but no worker answered within 5 s: start \`crawlflow worker --task-queue ${goneQueue}\` (see docs/troubleshooting.md)\n`);
      assert.equal(unanswered.code, 1);
    } finally {
      await handle.terminate('test over');
    }
  });

  it('crawlflow crawl that ends without a summary says why in its last line', async () => {
    const slowSite = await startSyntheticSite({ pages: 500, latencyMs: 50 });
    try {
      const cliEnv = { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_TASK_QUEUE: taskQueue, CRAWLFLOW_DATA_DIR: env.dataDir };
      const crawl = runCli(['crawl', slowSite.urlOf(0), '--id', 'cli-terminated', '--out', join(env.dataDir, 'terminated.jsonl')], cliEnv);
      const handle = env.client.workflow.getHandle('cli-terminated');
      await waitFor(() => slowSite.requests.length > 0, 30_000, 'the crawl to fetch its first page');
      await handle.terminate('stopped by the test');
      const ended = await crawl;
      assert.equal(ended.code, 1);
      assert.equal(
        ended.stderr.trimEnd().split('\n').at(-1),
        'crawlflow: crawl cli-terminated terminated: stopped by the test; what it fetched until then is kept: write it with `crawlflow results cli-terminated --format jsonl --out <file>`',
      );
      const out = join(env.dataDir, 'terminated-results.jsonl');
      const results = await runCli(['results', 'cli-terminated', '--format', 'jsonl', '--out', out], cliEnv);
      assert.equal(results.code, 0, results.stderr);
      // What was fetched before the terminate: each page recorded once, and only pages requested.
      const recorded = sortedPaths(readJsonl(out).map((record) => record.url));
      assert.equal(results.stdout, `${recorded.length === 1 ? '1 line' : `${recorded.length} lines`} written to ${out}\n`);
      assert.deepEqual(recorded, [...new Set(recorded)]);
      const requested = new Set(requestedPagePaths(slowSite));
      assert.deepEqual(recorded.filter((path) => !requested.has(path)), []);
    } finally {
      await slowSite.close();
    }
  });

  it('concurrent starts of one crawl ID make one execution that fetches each page once', async () => {
    const input = { seeds: [site.urlOf(0)] };
    const before = site.requests.length;
    const handles = await Promise.all([1, 2, 3].map(() => startCrawl(env.client, 'dup-start', input, taskQueue)));
    const runIds = new Set(await Promise.all(handles.map(async (handle) => (await handle.describe()).runId)));
    assert.equal(runIds.size, 1, 'one execution');
    await handles[0].result();
    assert.deepEqual(requestedPagePaths(site, { from: before }), reachablePagePaths(site), 'each page fetched once');
  });

  it('crawlflow start, status, results and cancel', async () => {
    const cliEnv = { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_TASK_QUEUE: taskQueue, CRAWLFLOW_DATA_DIR: env.dataDir };
    const slowSite = await startSyntheticSite({ pages: 2_000, latencyMs: 50 });
    try {
      const started = await runCli(['start', slowSite.urlOf(0), '--id', 'cli-start', '--json'], cliEnv);
      assert.equal(started.code, 0, started.stderr);
      assert.equal((JSON.parse(started.stdout) as { crawlId: string }).crawlId, 'cli-start');

      // `status` is to show a running crawl with progress: wait until there is some to show.
      const handle = env.client.workflow.getHandle('cli-start');
      await waitFor(async () => (await handle.query(progressQuery)).processed > 0, 30_000, 'the first pages processed');
      const status = await runCli(['status', 'cli-start', '--json'], cliEnv);
      assert.equal(status.code, 0, status.stderr);
      const parsed = JSON.parse(status.stdout) as { workflowStatus: string; outcome: string; progress: { processed: number } };
      assert.equal(parsed.workflowStatus, 'RUNNING');
      assert.equal(parsed.outcome, 'running');
      assert.ok(parsed.progress.processed > 0);

      const cancelled = await runCli(['cancel', 'cli-start'], cliEnv);
      assert.equal(cancelled.code, 0, cancelled.stderr);
      await assert.rejects(handle.result());

      const out = join(env.dataDir, 'cli-start.jsonl');
      const results = await runCli(['results', 'cli-start', '--out', out], cliEnv);
      assert.equal(results.code, 0, results.stderr);
      const records = readJsonl(out);
      assert.ok(records.length > 0 && records.every((record) => record.status === 200), 'partial results are complete records');

      // The cancelled crawl has no summary; its store has what it fetched, and status says so.
      const ended = await runCli(['status', 'cli-start', '--json'], cliEnv);
      assert.equal(ended.code, 0, ended.stderr);
      const endedReport = JSON.parse(ended.stdout) as { outcome: string; failure: string; totals: { processed: number } | null };
      assert.deepEqual([endedReport.outcome, endedReport.failure, endedReport.totals?.processed], ['cancelled', 'Workflow canceled', records.length]);
      const [heading, counts, ...rest] = (await runCli(['status', 'cli-start'], cliEnv)).stdout.split('\n');
      assert.deepEqual(
        [heading, counts.replace(/ in [\d.]+ s, [\d.]+ URLs\/s$/, ''), rest.find((line) => line.startsWith('  reason:'))],
        ['crawl cli-start: cancelled', `  ${records.length} URLs (${records.length} fetched, 0 errors, 0 skipped)`, '  reason: Workflow canceled'],
      );

      const unknown = await runCli(['results', 'no-such-crawl', '--out', out], cliEnv);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /no results for crawl "no-such-crawl"/);
    } finally {
      await slowSite.close();
    }
  });
});

describe('a crawl whose workflow tasks fail (a search attribute the server does not know)', () => {
  let env: TestTemporal;
  let site: SyntheticSite;
  before(async () => {
    env = await startTestTemporal();
    site = await startSyntheticSite({ pages: 20 });
  });
  after(async () => {
    await site?.close();
    await env?.close();
  });

  it('crawlflow status says in one line that its workflow tasks fail, and pause still sends its signal', async () => {
    const queue = uniqueQueue('wft-failing');
    await env.startWorker(queue);
    // As on a cluster where nobody registered it (docs/troubleshooting.md): the server refuses every task that sets it.
    execFileSync(temporalBinaryPath(), ['operator', 'search-attribute', 'remove', '--address', env.address, '--name', 'CrawlStatus', '--yes']);
    const handle = await startCrawl(env.client, 'wft-failing', { seeds: [site.urlOf(0)] }, queue);
    try {
      await waitFor(async () => (await historyEventTypes(handle)).includes('EVENT_TYPE_WORKFLOW_TASK_FAILED'), 30_000, 'a failed workflow task');
      const cliEnv = { TEMPORAL_ADDRESS: env.address, CRAWLFLOW_DATA_DIR: env.dataDir };
      const status = await runCli(['status', 'wft-failing'], cliEnv);
      assert.equal(
        status.stderr,
        'crawlflow: crawl wft-failing is running, but its workflow tasks fail, so it answers nothing: ' +
          'the worker logs and its history (temporal workflow show --workflow-id wft-failing) say why (see docs/troubleshooting.md)\n',
      );
      assert.equal(status.code, 1);
      const pause = await runCli(['pause', 'wft-failing'], cliEnv);
      assert.deepEqual([pause.code, pause.stdout, pause.stderr], [0, 'pause: wft-failing\n', '']);
    } finally {
      await handle.terminate('test over');
    }
  });
});
