/**
 * One GET as an undici dispatch handler: the status line and headers settle the response,
 * and the body's chunks go straight to the reader that `read` starts.
 *
 * Why not `Dispatcher.request`: it makes a Readable for every body and an AsyncResource with
 * an abort listener for every request, and reporting a request's start from a `compose`
 * interceptor around it makes undici convert the headers twice. Together they cost about 30 µs
 * of CPU a request, and 60 µs of the worker's main thread a page in the bench's crawl
 * (bench/PROFILE.md).
 */
import type { Dispatcher } from 'undici';
import { BodyReader, type BodyBytes, type BodyLimits } from './body';
import type { RequestStop, ResponseBody, TransportResponse } from './response';

/** Chunks held for a body nobody reads yet; past this the connection waits. */
const UNREAD_BYTES_MAX = 64 * 1024;

export interface ResponseSettle {
  resolve(response: TransportResponse): void;
  reject(error: unknown): void;
}

export class ResponseHandler implements Dispatcher.DispatchHandler, ResponseBody {
  private controller: Dispatcher.DispatchController | undefined;
  /** Until the response's headers, or the request's failure. */
  private head: ResponseSettle | undefined;
  /** Set when the request was stopped before undici started it: it is aborted as it starts. */
  private stoppedEarly: { reason: unknown } | undefined;
  private reader: BodyReader | undefined;
  /** What came before `read`: chunks, the end or the failure. */
  private unread: Buffer[] = [];
  private unreadBytes = 0;
  private ended = false;
  private failure: { error: unknown } | undefined;
  private readonly unwatch: () => void;

  constructor(
    head: ResponseSettle,
    stop: RequestStop,
    private readonly onSent: (() => void) | undefined,
  ) {
    this.head = head;
    this.unwatch = stop.watch((reason) => this.stopWith(reason));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.stoppedEarly) controller.abort(this.stoppedEarly.reason as Error);
    // undici calls this just before it builds and writes the request's head, in the same call.
    // Told after that call (a microtask), the sender reads the clock once the request has left:
    // a thread paused in between (a busy machine, a GC) would otherwise date the send too early,
    // and a late request would not hold its host long enough.
    else if (this.onSent) queueMicrotask(this.onSent);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: TransportResponse['headers']): void {
    if (statusCode < 200) return; // 1xx: informational, the response is still to come
    const head = this.head;
    this.head = undefined;
    head?.resolve({ status: statusCode, headers, body: this });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.reader) return this.reader.write(chunk);
    this.unread.push(chunk);
    this.unreadBytes += chunk.length;
    if (this.unreadBytes > UNREAD_BYTES_MAX) controller.pause();
  }

  onResponseEnd(): void {
    this.ended = true;
    this.unwatch();
    this.reader?.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.unwatch();
    this.fail(error);
  }

  read(limits: BodyLimits): Promise<BodyBytes> {
    const controller = this.controller!;
    const reader = new BodyReader(limits, controller);
    this.reader = reader;
    for (const chunk of this.unread) reader.write(chunk);
    this.unread = [];
    if (this.failure) reader.fail(this.failure.error);
    else if (this.ended) reader.end();
    else controller.resume();
    return reader.done;
  }

  discard(): void {
    this.unread = [];
    // Closes a connection still receiving the body; undici ignores it once the response has
    // ended, and the connection stays for the next request.
    this.controller!.abort(new Error('response body not wanted'));
  }

  private stopWith(reason: unknown): void {
    if (this.controller) return this.controller.abort(reason as Error); // undici reports it to onResponseError
    this.stoppedEarly = { reason };
    this.fail(reason);
  }

  private fail(error: unknown): void {
    const head = this.head;
    this.head = undefined;
    if (head) head.reject(error);
    else if (this.reader) this.reader.fail(error);
    else this.failure ??= { error };
  }
}
