/** Queries, signals and updates of the crawl workflow, defined once for the workflow and its clients. */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { CrawlLimits } from './crawl-config';
import type { CrawlProgress, FrontierStats, HostState } from './crawl-types';

export const progressQuery = defineQuery<CrawlProgress>('progress');
export const frontierQuery = defineQuery<FrontierStats>('frontier');
export const hostQuery = defineQuery<HostState, [string]>('host');

export const pauseSignal = defineSignal('pause');
export const resumeSignal = defineSignal('resume');

/** Adds seed URLs (they join the scope); returns how many were new to the frontier. */
export const addSeedsUpdate = defineUpdate<number, [string[]]>('addSeeds');
/** Changes concurrency and politeness while the crawl runs; returns the limits now in force. */
export const setLimitsUpdate = defineUpdate<CrawlLimits, [Partial<CrawlLimits>]>('setLimits');
/** Stops gracefully: no new batches; running ones stop after their current page; the crawl ends as `stopped`. */
export const stopUpdate = defineUpdate<void>('stop');
