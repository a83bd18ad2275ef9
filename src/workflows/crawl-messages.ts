/**
 * The crawl's queries, signals and updates, registered on the first workflow task so they are
 * answered while the crawl opens too. They go to the running crawl once it is attached.
 */
import { ApplicationFailure, condition, log, setDefaultSignalHandler, setHandler, workflowInfo } from '@temporalio/workflow';
import { parseLimitsChange, parseSeeds, type CrawlLimits } from '../shared/crawl-config';
import { openingProgress, type CrawlProgress, type FrontierStats, type HostState } from '../shared/crawl-types';
import { addSeedsUpdate, frontierQuery, hostQuery, pauseSignal, progressQuery, resumeSignal, setLimitsUpdate, stopUpdate } from '../shared/messages';
import { validateWith } from './crawl-state';

/** What a running crawl answers. */
export interface CrawlMessages {
  progress(): CrawlProgress;
  frontier(): FrontierStats;
  hostState(host: string): HostState;
  pause(): void;
  resume(): void;
  stop(): void;
  setLimits(change: Partial<CrawlLimits>): CrawlLimits;
  addSeeds(urls: string[]): Promise<number>;
  /** Why seeds added now would never be fetched (the crawl is stopping or finishing, its page budget spent), or null when they may be. */
  seedsRefusal(): string | null;
}

/** The failure type of an `addSeeds` the crawl refuses because it would never fetch them. */
export const SEEDS_REFUSED_FAILURE = 'SeedsWouldNotBeFetched';

/**
 * Handlers for the moments before the crawl is open: progress says so, signals and updates
 * wait and are applied to the crawl once it is.
 */
export class EarlyMessages {
  private run: CrawlMessages | undefined;
  private readonly startedAt = Date.now();

  constructor() {
    const crawlId = workflowInfo().workflowId;
    const opened = async (): Promise<CrawlMessages> => {
      await condition(() => this.run !== undefined);
      return this.run!;
    };
    setHandler(progressQuery, () => this.run?.progress() ?? openingProgress(crawlId, this.startedAt));
    setHandler(frontierQuery, () => this.run?.frontier() ?? { queued: 0, snapshotVersion: -1, hosts: [] });
    setHandler(hostQuery, (host) => this.run?.hostState(host) ?? { host, queued: 0, batchesInFlight: 0, readyAt: null, holdReason: null });
    setHandler(pauseSignal, async () => (await opened()).pause());
    setHandler(resumeSignal, async () => (await opened()).resume());
    setHandler(stopUpdate, async () => (await opened()).stop());
    setHandler(setLimitsUpdate, async (change) => (await opened()).setLimits(change), { validator: validateWith(parseLimitsChange) });
    // The validator refuses seeds the crawl would only queue: a refusal leaves nothing in history, and a validator does not run on replay.
    const validSeeds = validateWith(parseSeeds);
    const seedsValidator = (urls: string[]): void => {
      validSeeds(urls);
      const refusal = this.run?.seedsRefusal() ?? null;
      if (refusal !== null) throw ApplicationFailure.nonRetryable(refusal, SEEDS_REFUSED_FAILURE);
    };
    setHandler(addSeedsUpdate, async (urls) => (await opened()).addSeeds(urls), { validator: seedsValidator });
    // Last: it takes the signals received before it that no handler above took.
    setDefaultSignalHandler((name) => warnOfStraySignal(crawlId, name));
  }

  attach(run: CrawlMessages): void {
    this.run = run;
  }
}

const UPDATE_NAMES: ReadonlySet<string> = new Set([addSeedsUpdate.name, setLimitsUpdate.name, stopUpdate.name]);
const SIGNAL_NAMES = `${pauseSignal.name} and ${resumeSignal.name}`;

/**
 * A signal the crawl takes no handler for would otherwise be dropped without a word, though the
 * sender was told it was delivered: most often an update's name (`temporal workflow signal
 * --name stop`). It only logs: no command, so no patched() is needed, and histories recorded
 * before it (signals the workflow left unhandled in them too) replay unchanged.
 */
function warnOfStraySignal(crawlId: string, signal: string): void {
  const why = UPDATE_NAMES.has(signal)
    ? `${signal} is an update, send it as one: temporal workflow update execute --workflow-id ${crawlId} --name ${signal}`
    : `the crawl takes the signals ${SIGNAL_NAMES}`;
  log.warn(`signal "${signal}" ignored: ${why}`, { crawlId, signal });
}

