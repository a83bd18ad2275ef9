/**
 * Waiting for a crawl's result in a way that a stop signal ends at once, with nothing kept
 * per poll.
 *
 * The Temporal client cancels its calls through the signal given to `withAbortSignal`, but it
 * adds an abort listener for every call and never removes it. A result is a long poll of the
 * crawl's history, which the server answers empty every 20 s until the run closes: one
 * signal over a whole crawl would gain a listener (holding its finished call) every 20 s, and
 * Node warns of a leak at the eleventh. So each poll gets a signal of its own, which goes with
 * it.
 */
import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import { crawlHandle } from './crawl-client';
import type { CrawlSummary } from '../shared/crawl-types';

const CLOSE_EVENT = temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT;

/** Runs `call` with a signal of its own that `stop` aborts; the link goes when it settles. */
async function stoppable<T>(client: Client, stop: AbortSignal, call: () => Promise<T>): Promise<T> {
  stop.throwIfAborted();
  const own = new AbortController();
  const abort = (): void => own.abort(stop.reason);
  stop.addEventListener('abort', abort, { once: true });
  try {
    return await client.withAbortSignal(own.signal, call);
  } finally {
    stop.removeEventListener('abort', abort);
  }
}

/** Returns once the crawl's last run has closed: a run that continues as new is followed. */
async function untilClosed(client: Client, crawlId: string, stop: AbortSignal): Promise<void> {
  let runId: string | undefined;
  let nextPageToken: Uint8Array | undefined;
  for (;;) {
    const { history, nextPageToken: next } = await stoppable(client, stop, () =>
      client.workflowService.getWorkflowExecutionHistory({
        namespace: client.options.namespace,
        execution: { workflowId: crawlId, runId },
        waitNewEvent: true,
        historyEventFilterType: CLOSE_EVENT,
        skipArchival: true,
        nextPageToken,
      }),
    );
    const closed = history?.events?.[0];
    if (closed === undefined) {
      nextPageToken = next ?? undefined;
      continue;
    }
    const nextRunId = closed.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (!nextRunId) return;
    runId = nextRunId;
    nextPageToken = undefined;
  }
}

/**
 * The crawl's result, as `WorkflowHandle.result()` gives it (its errors included); `stop`
 * rejects the wait with its reason and cancels the call in flight.
 */
export async function crawlResult(client: Client, crawlId: string, stop: AbortSignal): Promise<CrawlSummary> {
  await untilClosed(client, crawlId, stop);
  return stoppable(client, stop, () => crawlHandle(client, crawlId).result());
}
