/**
 * Starting and addressing crawls from a client. The crawl ID is the workflow ID: a second
 * start of a running crawl attaches to it, and a finished crawl's ID is never run again, so
 * starting the same crawl twice never crawls twice.
 */
import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { parseCrawlConfig, type CrawlInput } from '../shared/crawl-config';
import { CRAWL_WORKFLOW_TYPE } from '../shared/names';
import type { crawlSession } from '../workflows';

export type CrawlHandle = WorkflowHandle<typeof crawlSession>;

/**
 * A crawl's workflow task timeout (continue-as-new keeps it). A worker that shuts down while
 * the server is handing its poll a workflow task loses that task in transit (sdk-core
 * interrupts polls on shutdown, temporalio/sdk-rust#1080), and only this timeout gets it
 * retried: with the server's default of 10 s, every graceful worker stop could stall a crawl
 * for 10 s (measured: 10.2-10.6 s in the workers-churn test). A crawl's workflow tasks are small
 * and a run is cut at a few thousand events, so a replay on a fresh worker fits well within it.
 */
export const CRAWL_WORKFLOW_TASK_TIMEOUT = '4s';

export function newCrawlId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `crawl-${stamp}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Where the crawl starts, in a few words: its first seeds, and its seed file's path. */
function startingPoints({ seeds = [], seedsFile }: CrawlInput): string {
  const shown = [...seeds.slice(0, 3), ...(seedsFile === undefined ? [] : [`the seeds in ${seedsFile}`])];
  return `${shown.join(', ')}${seeds.length > 3 ? ', ...' : ''}`;
}

/**
 * Checks a crawl's input with the one schema before anything starts, so a script's mistake
 * throws InvalidCrawlConfigError naming the field, instead of a TypeError from here or a crawl
 * ID spent on a workflow that fails. The input is sent as given: the workers resolve it.
 */
export function checkCrawlInput(input: CrawlInput): void {
  parseCrawlConfig(input);
}

/** Starts the crawl, or returns the handle of the running or finished crawl with this ID. */
export async function startCrawl(client: Client, crawlId: string, input: CrawlInput, taskQueue: string): Promise<CrawlHandle> {
  checkCrawlInput(input);
  try {
    return await client.workflow.start<typeof crawlSession>(CRAWL_WORKFLOW_TYPE, {
      workflowId: crawlId,
      taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING', // a running crawl with this ID: attach to it
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowTaskTimeout: CRAWL_WORKFLOW_TASK_TIMEOUT,
      staticSummary: `crawl of ${startingPoints(input)}`,
    });
  } catch (err) {
    // A finished crawl's ID is rejected (REJECT_DUPLICATE): attach to its result instead.
    if (err instanceof WorkflowExecutionAlreadyStartedError) return crawlHandle(client, crawlId);
    throw err;
  }
}

export function crawlHandle(client: Client, crawlId: string): CrawlHandle {
  return client.workflow.getHandle<typeof crawlSession>(crawlId);
}
