/** A live progress bar on a terminal, fed by the workflow's `progress` query. */
import { SingleBar } from 'cli-progress';
import type { CrawlHandle } from '../client/crawl-client';
import { progressQuery } from '../shared/messages';

const POLL_MS = 500;

export function followProgress(handle: CrawlHandle, maxPages: number): { stop(): void } {
  const bar = new SingleBar({
    format: '{crawlId} [{bar}] {value}/{total} | {rate}/s | queued {queued} | errors {errors} | {status}',
    stream: process.stderr,
    hideCursor: true,
    clearOnComplete: false,
  });
  const startedAt = Date.now();
  let started = false;
  const timer = setInterval(() => {
    handle.query(progressQuery).then(
      (progress) => {
        const total = Math.max(1, Math.min(maxPages, progress.processed + progress.queued));
        const payload = {
          crawlId: progress.crawlId,
          queued: progress.queued,
          errors: progress.errors,
          status: progress.status,
          rate: (progress.processed / Math.max(0.001, (Date.now() - startedAt) / 1000)).toFixed(1),
        };
        if (!started) bar.start(total, progress.processed, payload);
        else bar.update(progress.processed, payload);
        bar.setTotal(total);
        started = true;
      },
      () => undefined, // a query can fail between runs (continue-as-new); the next poll retries
    );
  }, POLL_MS);
  return {
    stop: () => {
      clearInterval(timer);
      if (started) bar.stop();
    },
  };
}
