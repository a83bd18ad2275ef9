/**
 * How a running batch stays alive and hears that it must stop. A ticker heartbeats every
 * second whatever the network does, so a slow response never looks like a dead worker. The
 * SDK sends those heartbeats at most every few seconds (the worker's throttle), which spares
 * the server most of their cost, but Temporal's cancellation reaches an activity only with a
 * heartbeat response: so the ticker also reads the store's stop order for the batch's run
 * every second, which the workflow writes when it cancels its batches or hands over.
 */
import { CancelledFailure, Context } from '@temporalio/activity';
import type { BatchProgress } from '../shared/crawl-types';
import { stopOrderAddresses, type FrontierStore, type StopOrder } from '../store/frontier-store';
import { HEARTBEAT_TICK_MS } from '../shared/activity-timing';

/** Whether, and how, a batch has been told to stop. */
export class BatchStop {
  /** The batch stops after the page it is on (its run hands over, or is cancelled). */
  asked = false;
  private readonly aborter = new AbortController();
  private abortedByStore = false;
  private readonly onCancellation = (): void => this.aborter.abort(this.cancellation.reason);
  /**
   * Aborted by Temporal's cancellation or by the store's abort order: what requests and waits
   * listen to. A plain signal that the cancellation aborts, not `AbortSignal.any`: Node keeps
   * a composed signal alive for as long as it has an abort listener and has not aborted, and
   * the fetches' listener (abort-fan-out.ts) stays for the batch's life, so every batch that
   * ends without aborting would be kept, about 3 KB each, for the life of the worker.
   */
  readonly signal = this.aborter.signal;

  constructor(private readonly cancellation: AbortSignal) {
    if (cancellation.aborted) this.onCancellation();
    else cancellation.addEventListener('abort', this.onCancellation, { once: true });
  }

  obey(order: StopOrder): void {
    this.asked = true;
    if (!order.abort || this.aborter.signal.aborted) return;
    this.abortedByStore = true;
    this.aborter.abort(new CancelledFailure('the workflow cancelled the batches of its run'));
  }

  /**
   * Aborted on the store's word while Temporal has not told the activity yet. Such a batch
   * must return, not throw: the SDK reports an activity that throws before it knows of a
   * cancellation as failed, and the server would retry it.
   */
  get abortedByStoreAlone(): boolean {
    return this.abortedByStore && !this.cancellation.aborted;
  }

  /** The batch is over: the cancellation no longer reaches its signal. */
  end(): void {
    this.cancellation.removeEventListener('abort', this.onCancellation);
  }
}

/**
 * Heartbeats `progress` every second; for a batch of a run (`of.run`), also reads the store's
 * stop order for it and has `stop` obey one addressed to it. Returns the ticker's stop.
 */
export function startTicker(of: { run?: string; seq: number }, shard: number | undefined, store: FrontierStore, progress: BatchProgress, stop: BatchStop): () => void {
  const { run, seq } = of;
  const context = Context.current();
  let checking = false;
  const tick = (): void => {
    context.heartbeat(progress);
    if (run === undefined || checking || stop.signal.aborted) return;
    checking = true;
    store
      .stopOrder(shard)
      .then((order) => {
        if (stopOrderAddresses(order, run, seq)) stop.obey(order);
      })
      // Not knowing only delays the stop to the next tick; the batch itself reports outages.
      .catch(() => undefined)
      .finally(() => (checking = false));
  };
  tick();
  const ticker = setInterval(tick, HEARTBEAT_TICK_MS);
  return () => clearInterval(ticker);
}
