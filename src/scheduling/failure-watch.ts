/**
 * Batches that failed for good, and the rule that fails a crawl fast when nothing can make
 * progress. Pure: no Temporal, no I/O (the workflow and unit tests use it alike).
 *
 * A failed batch's URLs are recorded as failures and the crawl goes on: one host whose
 * requests cannot be made (a variable missing for its override) must not stop the others.
 * But when failures of one cause follow one another with no batch succeeding in between, and
 * they cover every host that has work (or three hosts, on a broad crawl), every batch would
 * fail the same way: the crawl fails with that cause instead of recording its whole frontier
 * as failures.
 */
import type { BatchFailure, FailureTally } from '../shared/crawl-types';

/** Distinct hosts a run of same-cause failures must cover, at most, to fail the crawl. */
export const FAIL_FAST_HOSTS = 3;
/** Failures in a row it takes at least, so a single host's one bad batch is not fatal on its own. */
export const FAIL_FAST_FAILURES = 2;

export interface FailureStreak extends BatchFailure {
  count: number;
  hosts: string[];
}

export interface FailureWatchState {
  tallies: FailureTally[];
  streak: FailureStreak | null;
}

export class FailureWatch {
  private readonly tallies: FailureTally[];
  private streak: FailureStreak | null;

  constructor(state: FailureWatchState = { tallies: [], streak: null }) {
    this.tallies = state.tallies.map((tally) => ({ ...tally }));
    this.streak = state.streak && { ...state.streak, hosts: [...state.streak.hosts] };
  }

  failed(hosts: readonly string[], failure: BatchFailure): void {
    const tally = this.tallies.find((entry) => entry.code === failure.code);
    if (tally) {
      tally.batches += 1;
      tally.message = failure.message;
    } else this.tallies.push({ ...failure, batches: 1 });
    if (this.streak?.code !== failure.code) this.streak = { ...failure, count: 0, hosts: [] };
    this.streak.count += 1;
    this.streak.message = failure.message;
    for (const host of hosts) if (!this.streak.hosts.includes(host)) this.streak.hosts.push(host);
  }

  succeeded(): void {
    this.streak = null;
  }

  /**
   * The cause to fail the crawl with, given how many hosts have work; null while progress is
   * possible. A crawl left with no work whose every batch failed fails too: it crawled nothing.
   */
  fatal(hostsWithWork: number, succeededEver: boolean): BatchFailure | null {
    const { streak } = this;
    if (streak === null) return null;
    if (hostsWithWork === 0 && !succeededEver) return { code: streak.code, message: streak.message };
    if (streak.count < FAIL_FAST_FAILURES) return null;
    if (streak.hosts.length < Math.min(FAIL_FAST_HOSTS, Math.max(1, hostsWithWork))) return null;
    return { code: streak.code, message: streak.message };
  }

  summary(): FailureTally[] {
    return this.tallies.map((tally) => ({ ...tally }));
  }

  state(): FailureWatchState {
    return { tallies: this.summary(), streak: this.streak && { ...this.streak, hosts: [...this.streak.hosts] } };
  }
}
