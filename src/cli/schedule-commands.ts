/** `crawlflow schedule create|list|describe|pause|unpause|trigger|delete`: recurring crawls on Temporal Schedules. */
import type { Command } from 'commander';
import type { Client, ScheduleHandle } from '@temporalio/client';
import { createCrawlSchedule, describeCrawlSchedule, InvalidScheduleSpecError, listCrawlSchedules, onSchedule, OVERLAP_POLICIES, triggerCrawlSchedule, type CrawlScheduleOptions, type OverlapPolicy } from '../client/schedules';
import { toMilliseconds } from '../shared/duration';
import { commonOptions, dataDirOption, scheduleIdArgument, print, withClient, type CommonFlags, type DataDirFlags } from './command-kit';
import { addCrawlOptions, checkLocalSeedsFile, crawlRequestFrom, STDIN_SEEDS, UsageError, type CrawlFlags } from './crawl-options';
import { checkRecrawlOf } from './content-options';
import { usesExternalCluster } from '../temporal/target';
import { ENV } from '../shared/names';

interface CreateFlags extends CrawlFlags, CommonFlags {
  every?: string;
  cron?: string;
  overlap: string;
  catchupWindow: string;
  paused?: boolean;
}

/** A bound of a duration flag, in milliseconds and as the message names it. */
interface DurationBound {
  ms: number;
  text: string;
}

/**
 * The longest `--every` and `--catchup-window`. The server keeps durations as int64
 * nanoseconds and silently cuts a longer one (100000000000h) to about 292 years, so what it
 * kept would not be what was asked; a year is more than any crawl cadence or outage needs.
 */
const MAX_SCHEDULE_DURATION: DurationBound = { ms: 365 * 86_400_000, text: '365d' };

/** A duration flag's value in milliseconds, from `min` to a year: parsed here once, so the server gets the number this check passed. */
function durationFlag(flag: string, value: string, min: DurationBound, example: string): number {
  const ms = toMilliseconds(value);
  if (ms === undefined || !(ms >= min.ms && ms <= MAX_SCHEDULE_DURATION.ms)) {
    throw new UsageError(`${flag}: must be a duration from ${min.text} to ${MAX_SCHEDULE_DURATION.text}, e.g. ${example}`);
  }
  return ms;
}

/**
 * When the schedule starts crawls, from the flags, checked before anything is sent. A cron
 * expression is left to the server, which takes more than five fields (`@daily`,
 * `@every 1h30m`, `CRON_TZ=<zone>`, seconds and years) and names what it refuses.
 */
function scheduleTiming(flags: CreateFlags): Pick<CrawlScheduleOptions, 'everyMs' | 'cron' | 'overlap' | 'catchupWindowMs'> {
  if (Boolean(flags.every) === Boolean(flags.cron)) throw new UsageError('schedule create: give exactly one of --every and --cron');
  const everyMs = flags.every === undefined ? undefined : durationFlag('--every', flags.every, { ms: 1_000, text: '1s' }, '6h');
  if (!(OVERLAP_POLICIES as readonly string[]).includes(flags.overlap)) throw new UsageError(`--overlap: one of ${OVERLAP_POLICIES.join(', ')}`);
  const catchupWindowMs = durationFlag('--catchup-window', flags.catchupWindow, { ms: 10_000, text: '10s' }, '1h');
  return { everyMs, cron: flags.cron, overlap: flags.overlap as OverlapPolicy, catchupWindowMs };
}

/** Creates the schedule; a cron expression or interval the server refuses is the user's input, named by its flag. */
async function createSchedule(client: Client, flags: CreateFlags, options: CrawlScheduleOptions): Promise<void> {
  try {
    await createCrawlSchedule(client, options);
  } catch (err) {
    if (err instanceof InvalidScheduleSpecError) throw new UsageError(flags.cron !== undefined ? `--cron "${flags.cron}": ${err.message}` : `--every ${flags.every}: ${err.message}`);
    throw err;
  }
}

/**
 * A schedule command other than `create`. It has no `--task-queue`: it reaches the schedule by
 * its ID, and the crawls it starts run on the queue `create` gave it.
 */
function scheduleCommand(schedule: Command, name: string, description: string): Command {
  return schedule.command(name).description(description).addOption(dataDirOption());
}

/** A schedule command that names a schedule by its ID. */
function scheduleIdCommand(schedule: Command, name: string, description: string): Command {
  return scheduleCommand(schedule, name, description).argument('<schedule-id>', 'the schedule ID', scheduleIdArgument);
}

export function addScheduleCommands(program: Command): void {
  const schedule = program.command('schedule').description('recurring crawls on Temporal Schedules');
  addCreateCommand(schedule);
  addListCommand(schedule);
  addDescribeCommand(schedule);
  addTriggerCommand(schedule);

  const actions: Array<[string, string, (handle: ScheduleHandle) => Promise<unknown>]> = [
    ['pause', 'pause a schedule (no new crawls start)', (handle) => handle.pause('paused with crawlflow')],
    ['unpause', 'resume a paused schedule', (handle) => handle.unpause('unpaused with crawlflow')],
    ['delete', 'delete a schedule (crawls it started are kept)', (handle) => handle.delete()],
  ];
  for (const [name, description, act] of actions) {
    scheduleIdCommand(schedule, name, description).action(async (scheduleId: string, flags: DataDirFlags) => {
      await withClient(flags, async (client) => {
        await onSchedule(client, scheduleId, act);
        print(`schedule ${name}: ${scheduleId}`);
      });
    });
  }
}

function addCreateCommand(schedule: Command): void {
  commonOptions(
    addCrawlOptions(
      schedule
        .command('create')
        .description('create a schedule that starts a crawl on a cadence')
        .argument('<schedule-id>', 'the schedule ID, which may hold what a crawl ID may; each crawl it starts is <schedule-id>-<time>', scheduleIdArgument)
        .argument('[seed-url...]', 'where each crawl starts (or `seeds` in --config)'),
    ),
  )
    .option('--every <duration>', 'interval between crawls, 1s to 365d, e.g. 6h')
    .option('--cron <expression>', 'cron expression (UTC unless prefixed CRON_TZ=<zone>), e.g. "0 3 * * *", "@daily" or "@every 6h"')
    .option('--overlap <policy>', `when a crawl is still running at the next time: ${OVERLAP_POLICIES.join('|')}`, 'skip')
    .option('--catchup-window <duration>', 'how far back missed runs are caught up after an outage, 10s to 365d', '1h')
    .option('--paused', 'create it paused')
    .action(async (scheduleId: string, seeds: string[], flags: CreateFlags) => {
      const timing = scheduleTiming(flags);
      const { input, config } = crawlRequestFrom(seeds, flags);
      if (input.seedsFile === STDIN_SEEDS) throw new UsageError('--seeds-file -: a schedule starts every crawl anew, with no stdin to read: give a file the workers can read');
      // On the embedded default the workers are on this machine, with this data dir, as for
      // `crawl`: what they would refuse at every run is refused now, before the schedule exists.
      if (!usesExternalCluster()) {
        checkLocalSeedsFile(input, flags);
        checkRecrawlOf(config, undefined, { dataDir: flags.dataDir, storeUrl: process.env[ENV.storeUrl] });
      }
      await withClient(flags, async (client) => {
        await createSchedule(client, flags, { scheduleId, input, taskQueue: flags.taskQueue, ...timing, paused: flags.paused });
        print(`schedule ${scheduleId} created`);
      });
    });
}

function addListCommand(schedule: Command): void {
  scheduleCommand(schedule, 'list', 'list crawl schedules')
    .option('--json', 'machine-readable output')
    .action(async (flags: DataDirFlags & { json?: boolean }) => {
      await withClient(flags, async (client) => {
        const schedules = (await listCrawlSchedules(client)).map((entry) => ({
          scheduleId: entry.scheduleId,
          paused: entry.state.paused,
          nextRuns: entry.info?.nextActionTimes?.slice(0, 3).map((time) => time.toISOString()) ?? [],
          recentRuns: entry.info?.recentActions?.map((action) => action.action.workflow.workflowId) ?? [],
        }));
        if (flags.json) print(JSON.stringify(schedules));
        else if (schedules.length === 0) print('schedule list: no crawl schedules');
        else for (const entry of schedules) print(`${entry.scheduleId}${entry.paused ? ' (paused)' : ''}  next: ${entry.nextRuns[0] ?? '-'}`);
      });
    });
}

function addDescribeCommand(schedule: Command): void {
  scheduleIdCommand(schedule, 'describe', 'show a schedule and its recent crawls').action(
    async (scheduleId: string, flags: DataDirFlags) => {
      await withClient(flags, async (client) => {
        const description = await describeCrawlSchedule(client, scheduleId);
        print(
          JSON.stringify(
            {
              scheduleId,
              paused: description.state.paused,
              // The server gives "" for a schedule nobody left a note on: absent, as null elsewhere in JSON output.
              note: description.state.note || null,
              overlap: description.policies.overlap,
              catchupWindowMs: description.policies.catchupWindow,
              nextRuns: description.info.nextActionTimes.map((time) => time.toISOString()),
              recentCrawls: description.info.recentActions.map((action) => action.action.workflow.workflowId),
              runningCrawls: description.info.runningActions.map((action) => action.workflow.workflowId),
            },
            null,
            2,
          ),
        );
      });
    },
  );
}

function addTriggerCommand(schedule: Command): void {
  const description = "start a crawl now, outside the cadence, under the schedule's --overlap policy (skip: none while its last crawl runs)";
  scheduleIdCommand(schedule, 'trigger', description).action(async (scheduleId: string, flags: DataDirFlags) => {
    await withClient(flags, async (client) => {
      const outcome = await triggerCrawlSchedule(client, scheduleId);
      if ('started' in outcome) print(`schedule trigger: ${scheduleId}: started crawl ${outcome.started}`);
      else print(`schedule trigger: ${scheduleId}: no crawl started yet (overlap ${outcome.pending.overlap}; running: ${outcome.pending.running.join(', ') || 'none'})`);
    });
  });
}
