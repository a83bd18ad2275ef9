/**
 * Word, within one worker process, that a crawl's frontier changed: a batch queued new links,
 * or a batch that had work ended. Batches waiting for work (`BatchOrder.waitsForWork`) wake on
 * it at once; what other workers' batches do they see only when their wait runs out.
 */
export class WorkNotices {
  private readonly waiting = new Map<string, Set<() => void>>();

  /** Wakes every batch of `crawlId` waiting now. */
  notify(crawlId: string): void {
    const wakers = this.waiting.get(crawlId);
    if (wakers === undefined) return;
    this.waiting.delete(crawlId);
    for (const wake of wakers) wake();
  }

  /** Resolves on the crawl's next notice, after `ms`, or when `signal` aborts, whichever is first; never rejects. */
  next(crawlId: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let wakers = this.waiting.get(crawlId);
      if (wakers === undefined) this.waiting.set(crawlId, (wakers = new Set()));
      const wake = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', wake);
        wakers.delete(wake);
        if (wakers.size === 0 && this.waiting.get(crawlId) === wakers) this.waiting.delete(crawlId);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      signal.addEventListener('abort', wake, { once: true });
      wakers.add(wake);
    });
  }
}
