/**
 * When a run reads its store's counts for its progress alone. The schedule learns the crawl's
 * totals from each batch's report, and a batch of 1,000 URLs on a paced host reports after
 * many minutes: the `progress` query, `status`, the progress bar and the Web UI's details
 * would stand still that long. So while batches run, a run whose last view is older than
 * `PROGRESS_REFRESH_MS` reads a fresh one. The read is for progress only and never reaches
 * the schedule: a view that counts the running batches' pages while their shares are still
 * reserved would count those pages twice against the page budget.
 *
 * A plain class with no Temporal import; the driver turns `wake` into its durable timer.
 */
import type { CrawlView } from '../shared/crawl-types';
import { isNewerView, type Wake } from './crawl-scheduler';

/** The longest a running crawl's progress goes unread: a sharded crawl reads its whole view as often. */
export const PROGRESS_REFRESH_MS = 10_000;

/** The words of the refresh's timer in the Web UI. */
const WHY = 'reading progress while batches run';

export class ProgressRefresh {
  /** When the timer for the next look is due; undefined while no batch runs. */
  private dueAt: number | undefined;
  /** The schedule's view as last seen, and when it was first seen: a batch's report brings a new one. */
  private seen: CrawlView | undefined;
  private seenAt = 0;
  private read: CrawlView | undefined;

  /**
   * The wake for the next look while batches run (`running`): the same wake until it is due,
   * so the driver keeps one timer through every report meanwhile. None while no batch runs.
   */
  wake(now: number, running: boolean, scheduled: CrawlView): Wake | undefined {
    if (!running) {
      this.dueAt = undefined;
      return undefined;
    }
    this.see(now, scheduled);
    this.dueAt ??= now + PROGRESS_REFRESH_MS;
    return { at: this.dueAt, why: WHY };
  }

  /**
   * Whether to read the view now: the look is due and the last view came half an interval ago
   * or more. A younger one (a report) is fresh enough: the next look is then due an interval
   * after it, so no view is ever older than an interval and no look comes a moment after
   * another (the server's timers fire to the second).
   */
  due(now: number, scheduled: CrawlView): boolean {
    if (this.dueAt === undefined || now < this.dueAt) return false;
    this.see(now, scheduled);
    const stale = now - this.seenAt >= PROGRESS_REFRESH_MS / 2;
    // The read's own view counts as seen now: it arrives within moments.
    if (stale) this.seenAt = now;
    this.dueAt = this.seenAt + PROGRESS_REFRESH_MS;
    return stale;
  }

  /** A view read for progress; returns whether it moved the pages shown beside the schedule's view (`scheduled`). */
  arrived(view: CrawlView, scheduled: CrawlView): boolean {
    const before = this.shown(scheduled).totals.processed;
    if (this.read === undefined || isNewerView(view, this.read)) this.read = view;
    return this.shown(scheduled).totals.processed !== before;
  }

  /** The view progress shows: the newer of the schedule's and the last one read. */
  shown(scheduled: CrawlView): CrawlView {
    return this.read !== undefined && isNewerView(this.read, scheduled) ? this.read : scheduled;
  }

  private see(now: number, scheduled: CrawlView): void {
    if (scheduled === this.seen) return;
    this.seen = scheduled;
    this.seenAt = now;
  }
}
