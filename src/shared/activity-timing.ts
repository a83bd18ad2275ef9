/**
 * How batch activities are timed out and retried. The workflow sets them; the fault tests
 * derive their bounds from them (a heartbeat gap must stay under the timeout, a killed
 * worker's batch must be retried within the timeout plus the first retry interval).
 */

/** A batch that has not heartbeated for this long is taken for dead and retried. */
export const ACTIVITY_HEARTBEAT_TIMEOUT_MS = 10_000;

/** Heartbeated activities call heartbeat this often, whatever their work does. */
export const HEARTBEAT_TICK_MS = 1_000;

/**
 * The SDK sends at most one heartbeat per this interval: each is a write of the workflow's
 * state on the server. Half the timeout, so one late heartbeat does not make a live batch dead.
 */
export const HEARTBEAT_THROTTLE_MS = ACTIVITY_HEARTBEAT_TIMEOUT_MS / 2;

/** Delay before a failed or timed-out batch's first retry (it doubles on each further one). */
export const BATCH_RETRY_INITIAL_INTERVAL_MS = 1_000;
