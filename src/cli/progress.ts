/** A live progress bar on a terminal, fed by the workflow's `progress` query. */
import { SingleBar } from 'cli-progress';
import type { CrawlHandle } from '../client/crawl-client';
import { progressQuery } from '../shared/messages';

const POLL_MS = 500;

/** Polls the crawl's progress and draws it on `stream` (a terminal) until stopped. */
export function followProgress(handle: Pick<CrawlHandle, 'query'>, maxPages: number, stream: NodeJS.WritableStream = process.stderr): { stop(): void } {
  const bar = new SingleBar({
    format: '{crawlId} [{bar}] {value}/{total} | {rate}/s | queued {queued} | errors {errors} | {status}',
    stream,
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
        // The total first: drawn with the new count against the old total, the bar showed more
        // pages done than its total whenever the frontier had grown since the last poll.
        if (started) {
          bar.setTotal(total);
          bar.update(progress.processed, payload);
        } else {
          bar.start(total, progress.processed, payload);
          started = true;
        }
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
