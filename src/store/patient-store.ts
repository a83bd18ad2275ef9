/**
 * A store whose calls wait out an outage (see store-errors.ts) for a while instead of failing:
 * a database restart or a file locked by another process for a few seconds costs a pause,
 * not a batch. Past `patienceMs` the outage is thrown as StoreUnavailableError, so the batch
 * can stop and the workflow can show the crawl waiting for its store.
 *
 * Every call of the FrontierStore interface is safe to repeat: writes are insert-or-ignore or
 * conditional on the row's state, so a call whose commit was lost with its connection changes
 * nothing the second time.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { CrawlMetrics } from '../observability/metrics';
import type { BodyWriter } from '../bodies/body-store';
import type { FrontierStore } from './frontier-store';
import { storeOutage } from './store-errors';

export interface Patience {
  patienceMs: number;
  signal: AbortSignal;
  /** Called once per call that starts waiting; the function it returns is called when that wait ends. */
  onWait?(): () => void;
}

const FIRST_PAUSE_MS = 100;
const LONGEST_PAUSE_MS = 2_000;

/**
 * `call`, repeated through an outage. A call that succeeds, nearly all of them, costs one
 * promise more than the call itself: the waiting loop starts only once it has failed (a
 * worker makes two store calls a page, and every promise pays the process's promise hooks).
 */
function patiently<T>(call: () => Promise<T>, patience: Patience): Promise<T> {
  let first: Promise<T>;
  try {
    first = call();
  } catch (err) {
    first = Promise.reject(err);
  }
  return first.catch((err: unknown) => waitOut(err, call, patience));
}

/** Repeats `call`, which just failed with `failure`, while the store is out, for `patience.patienceMs` at most. */
async function waitOut<T>(failure: unknown, call: () => Promise<T>, patience: Patience): Promise<T> {
  let started: number | undefined;
  let endWait: (() => void) | undefined;
  try {
    for (let pause = FIRST_PAUSE_MS, err = failure; ; pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
      const outage = storeOutage(err);
      if (outage === undefined) throw err;
      if (started === undefined) {
        started = Date.now();
        endWait = patience.onWait?.();
      }
      if (Date.now() - started >= patience.patienceMs) throw outage;
      await sleep(pause, undefined, { signal: patience.signal });
      try {
        return await call();
      } catch (next) {
        err = next;
      }
    }
  } finally {
    endWait?.();
  }
}

/**
 * The store with every method made patient. A Proxy rather than a delegating class: the
 * interface has twenty methods and each would be the same three lines.
 */
export function patientStore(store: FrontierStore, patience: Patience): FrontierStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      // records() is an async generator (not retried as a whole); everything else returns a promise.
      if (typeof value !== 'function' || property === 'records') return value;
      return (...args: unknown[]) => patiently(() => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args), patience);
    },
  });
}

/**
 * The writer with its appends made patient, for bodies kept in a server database. An append
 * whose commit was lost with its connection leaves a copy that no record references, which
 * counts for nothing (body-store.ts).
 */
export function patientBodyWriter(writer: BodyWriter, patience: Patience): BodyWriter {
  return {
    append: (bytes) => patiently(() => writer.append(bytes), patience),
    close: () => writer.close(),
  };
}

/** Waits on the worker's metrics: calls waiting now, and the time they have waited. */
export function storeWaitMetrics(metrics: CrawlMetrics): NonNullable<Patience['onWait']> {
  return () => metrics.storeWaitStarted();
}
