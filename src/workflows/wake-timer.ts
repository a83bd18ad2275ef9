/**
 * The schedule's next wake-up (a held host's hold ending, the store's retry) as one durable
 * timer, kept for as long as the wake it is for stays the same. The schedule waits for a
 * change after every batch's report; a timer started afresh for each wait was cancelled by the
 * next report, two history events a report for as long as a host was held.
 */
import { CancellationScope, isCancellation, sleep } from '@temporalio/workflow';
import type { Wake } from '../scheduling/crawl-scheduler';

export class WakeTimer {
  private current: { wake: Wake; scope: CancellationScope } | undefined;

  /** `onFire` runs when a timer fires; `onError` gets anything but its cancellation. */
  constructor(
    private readonly onFire: () => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  get pending(): boolean {
    return this.current !== undefined;
  }

  /**
   * Keeps the timer while `wake` is the one it is for (the same time, said the same way: a
   * hold's reason may arrive after the hold); otherwise cancels it, and starts one for `wake`.
   */
  set(wake: Wake | undefined): void {
    if (this.current !== undefined && (this.current.wake.at !== wake?.at || this.current.wake.why !== wake.why)) {
      this.current.scope.cancel();
      this.current = undefined;
    }
    if (wake !== undefined && this.current === undefined) this.start(wake);
  }

  private start(wake: Wake): void {
    const timer = { wake, scope: new CancellationScope() };
    this.current = timer;
    const forget = () => {
      if (this.current === timer) this.current = undefined;
    };
    timer.scope.run(() => sleep(Math.max(1, wake.at - Date.now()), { summary: wake.why })).then(
      () => {
        forget();
        this.onFire();
      },
      (err: unknown) => {
        forget();
        if (!isCancellation(err)) this.onError(err);
      },
    );
  }
}
