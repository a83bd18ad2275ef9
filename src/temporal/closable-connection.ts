/**
 * A client connection that retries nothing once it is closed.
 *
 * The SDK's retry interceptor makes each retry a new gRPC call, which cancelling the first call
 * does not reach. A server ends each connection at its maximum age (the frontend's
 * `keepAliveMaxConnectionAge`, 5 minutes by default), and a long poll in flight then is
 * retried that way. `crawlflow crawl` cancels its wait, closes the connection and then stops
 * the embedded server: the retry would outlive the cancelled wait and fail when the server
 * stops, and the interceptor's next attempt would throw "Channel has been shut down" from a
 * timer, uncaught; so would an attempt already waiting on its backoff when the channel closes.
 * So once `close()` is called nothing more is retried, and the channel closes only after the
 * attempts already scheduled have started (at most 5 s, the interceptor's longest backoff).
 */
import { setTimeout } from 'node:timers/promises';
import { Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type ConnectionOptions } from '@temporalio/client';

/** What the connection and its retry interceptor share (the interceptor exists first). */
interface RetryState {
  closed: boolean;
  /** When the last retry scheduled starts (ms since the epoch). */
  lastScheduledAt: number;
}

export class ClosableConnection extends Connection {
  private retries: RetryState = { closed: false, lastScheduledAt: 0 };

  static async open(options: ConnectionOptions): Promise<ClosableConnection> {
    const retries: RetryState = { closed: false, lastScheduledAt: 0 };
    const retry = defaultGrpcRetryOptions();
    const interceptor = makeGrpcRetryInterceptor({
      delayFunction: (attempt, status) => {
        const delayMs = retry.delayFunction(attempt, status);
        retries.lastScheduledAt = Math.max(retries.lastScheduledAt, Date.now() + delayMs);
        return delayMs;
      },
      retryableDecider: (attempt, status) => !retries.closed && retry.retryableDecider(attempt, status),
    });
    // `connect` constructs `this`, so the instance is a ClosableConnection.
    const connection = (await ClosableConnection.connect({ ...options, interceptors: [interceptor] })) as ClosableConnection;
    connection.retries = retries;
    return connection;
  }

  override async close(): Promise<void> {
    this.retries.closed = true;
    const pendingMs = this.retries.lastScheduledAt - Date.now();
    // A timer set for the same moment or later runs after the retry's.
    if (pendingMs >= 0) await setTimeout(Math.ceil(pendingMs) + 1);
    await super.close();
  }
}
