/**
 * A client connection that retries nothing once it is closed.
 *
 * The SDK's retry interceptor makes each retry a new gRPC call, which cancelling the first call
 * does not reach. A server ends each connection at its maximum age (the frontend's
 * `keepAliveMaxConnectionAge`, 5 minutes by default), and a long poll in flight then is
 * retried that way. `crawlflow crawl` cancels its wait, closes the connection and then stops
 * the embedded server: the retry would outlive the cancelled wait, fail when the server stops,
 * and the interceptor's next attempt would throw "Channel has been shut down" from a timer,
 * uncaught. So the retry decision asks first whether the connection has been closed.
 */
import { Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type ConnectionOptions } from '@temporalio/client';

export class ClosableConnection extends Connection {
  /** Shared with the retry interceptor, which exists before the connection does. */
  private retries = { closed: false };

  static async open(options: ConnectionOptions): Promise<ClosableConnection> {
    const retries = { closed: false };
    const retry = defaultGrpcRetryOptions();
    const interceptor = makeGrpcRetryInterceptor({
      delayFunction: retry.delayFunction,
      retryableDecider: (attempt, status) => !retries.closed && retry.retryableDecider(attempt, status),
    });
    // `connect` constructs `this`, so the instance is a ClosableConnection.
    const connection = (await ClosableConnection.connect({ ...options, interceptors: [interceptor] })) as ClosableConnection;
    connection.retries = retries;
    return connection;
  }

  override async close(): Promise<void> {
    this.retries.closed = true;
    await super.close();
  }
}
