/**
 * The crawl's queries, signals and updates, registered on the first workflow task so they are
 * answered while the crawl opens too. They go to the running crawl once it is attached.
 */
import { condition, setHandler, workflowInfo } from '@temporalio/workflow';
import { parseLimitsChange, parseSeeds, type CrawlLimits } from '../shared/crawl-config';
import type { CrawlProgress, FrontierStats, HostState } from '../shared/crawl-types';
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
}

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
    setHandler(hostQuery, (host) => this.run?.hostState(host) ?? { host, queued: 0, batchesInFlight: 0, readyAt: null });
    setHandler(pauseSignal, async () => (await opened()).pause());
    setHandler(resumeSignal, async () => (await opened()).resume());
    setHandler(stopUpdate, async () => (await opened()).stop());
    setHandler(setLimitsUpdate, async (change) => (await opened()).setLimits(change), { validator: validateWith(parseLimitsChange) });
    setHandler(addSeedsUpdate, async (urls) => (await opened()).addSeeds(urls), { validator: validateWith(parseSeeds) });
  }

  attach(run: CrawlMessages): void {
    this.run = run;
  }
}

function openingProgress(crawlId: string, startedAt: number): CrawlProgress {
  return {
    crawlId,
    status: 'running',
    processed: 0,
    fetched: 0,
    errors: 0,
    skipped: 0,
    bytes: 0,
    queued: 0,
    batchesInFlight: 0,
    batchesCompleted: 0,
    hostsInFlight: [],
    startedAt,
    run: 1,
    storeWait: null,
    failures: [],
  };
}

