/** Queries and signals of the crawl workflow, defined once for the workflow and its clients. */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { CrawlProgress } from './crawl-types';

export const progressQuery = defineQuery<CrawlProgress>('progress');
export const pauseSignal = defineSignal('pause');
export const resumeSignal = defineSignal('resume');
