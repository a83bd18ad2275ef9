/**
 * How the requests of one batch (or one sitemap reading) to a host are spaced: every request
 * waits until the store lets it start, and a request that went out late holds the host from
 * when it really left. The store decides; this only sleeps between asking, and a cancelled
 * activity stops sleeping at once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { FrontierStore } from './frontier-store';

/**
 * A request that leaves this much later than its start was taken holds the host again from
 * when it left. Below it, the request left as the start was taken (a warm connection, an
 * in-process store), and a store write per request would buy nothing.
 */
const LATE_SEND_MS = 2;

/** Sleeps `ms`, or throws the signal's reason (the activity's cancellation) when it aborts. */
export async function cancellableSleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return;
  try {
    await sleep(ms, undefined, { signal });
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    throw err;
  }
}

export interface TakenStart {
  waitedMs: number;
  /**
   * To be told when a request to the host went out (the transport's `onSent`), on every hop:
   * a redirect to the same host is a request to it too. Absent when the host has no gap to
   * keep, so a crawl without delays pays nothing per request.
   */
  sent?: (url: URL, sentAt: number) => void;
}

export class RequestStarts {
  /** Holds still on their way to the store. */
  private readonly holds = new Set<Promise<void>>();

  /**
   * `key` is the politeness key the store paces; `ofKey` tells whether a request's host is
   * under it (a redirect may leave it), the key itself when politeness is by host.
   */
  constructor(
    private readonly store: FrontierStore,
    private readonly key: string,
    private readonly signal: AbortSignal,
    private readonly ofKey: (host: string) => boolean = (host) => host === key,
  ) {}

  /**
   * Returns once a request may start, or the host's deferral when it would have to wait longer
   * than `maxWaitMs`. The start is taken the moment this returns: the caller sends right away.
   */
  async take(gapMs: number, maxWaitMs: number): Promise<TakenStart | { deferUntil: number }> {
    const askedAt = Date.now();
    for (;;) {
      const start = await this.store.startRequest(this.key, gapMs, maxWaitMs, Date.now);
      if ('deferUntil' in start) return start;
      if ('takenAt' in start) {
        const { takenAt } = start;
        const waitedMs = takenAt - askedAt;
        return gapMs === 0 ? { waitedMs } : { waitedMs, sent: (url, sentAt) => this.sent(url, sentAt, takenAt, gapMs) };
      }
      await cancellableSleep(start.waitMs, this.signal);
    }
  }

  private sent(url: URL, sentAt: number, takenAt: number, gapMs: number): void {
    if (!this.ofKey(url.host) || sentAt - takenAt <= LATE_SEND_MS) return;
    // Not awaited: the request is on its way now, and the hold lands long before anyone may
    // take the next start (a gap later). A failed hold costs only that much precision; the
    // store's failure shows on the batch's next store call.
    const hold = this.store
      .holdHost(this.key, sentAt + gapMs)
      .catch(() => undefined)
      .finally(() => this.holds.delete(hold));
    this.holds.add(hold);
  }

  /** Waits for the holds still on their way, so none outlives the batch. */
  async settled(): Promise<void> {
    await Promise.all(this.holds);
  }
}
