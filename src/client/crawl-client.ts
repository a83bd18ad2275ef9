/**
 * Starting and addressing crawls from a client. The crawl ID is the workflow ID: a second
 * start of a running crawl attaches to it, and a finished crawl's ID is never run again, so
 * starting the same crawl twice never crawls twice.
 */
import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { CrawlInput } from '../shared/crawl-config';
import { CRAWL_WORKFLOW_TYPE } from '../shared/names';
import type { crawlSession } from '../workflows';

export type CrawlHandle = WorkflowHandle<typeof crawlSession>;

export function newCrawlId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `crawl-${stamp}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Starts the crawl, or returns the handle of the running or finished crawl with this ID. */
export async function startCrawl(client: Client, crawlId: string, input: CrawlInput, taskQueue: string): Promise<CrawlHandle> {
  try {
    return await client.workflow.start<typeof crawlSession>(CRAWL_WORKFLOW_TYPE, {
      workflowId: crawlId,
      taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING', // a running crawl with this ID: attach to it
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      staticSummary: `crawl of ${input.seeds.slice(0, 3).join(', ')}${input.seeds.length > 3 ? ', ...' : ''}`,
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
