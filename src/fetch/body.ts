/**
 * Reads a response body under a size cap, decompressing gzip, deflate and brotli. The cap
 * applies to the decompressed bytes too, so a decompression bomb stops at the cap: reading
 * stops there and the connection is dropped, so memory stays at about the cap whatever the
 * body's real size.
 *
 * The reader is fed chunk by chunk by whoever receives them (the transport's response
 * handler), not through a stream: a Readable per body, its events and its end-of-stream
 * watcher cost more CPU per page than the rest of the body's handling (bench/PROFILE.md).
 */
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Transform } from 'node:stream';
import { FetchError, toFetchError } from './errors';

function decompressorFor(contentEncoding: string | undefined): Transform | undefined {
  switch (contentEncoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      return undefined;
  }
}

export interface BodyBytes {
  bytes: Buffer;
  /** Bytes received on the wire (before decompression). */
  wireBytes: number;
  /** Set when `bytes` are the first `maxBytes` of a longer body (`truncate`). */
  truncated: boolean;
}

/** What the body is read under. */
export interface BodyLimits {
  /** `content-encoding` of the response. */
  contentEncoding: string | undefined;
  maxBytes: number;
  /**
   * Past `maxBytes` the body is `too-large`, unless `truncate` is set: then its first
   * `maxBytes` bytes are the result (robots.txt, whose RFC 9309 asks for the first 500 KiB to
   * be parsed rather than the file to be ignored).
   */
  truncate: boolean;
}

/** How a reader steers the connection its chunks come from. */
export interface BodyFlow {
  /** Stop sending chunks until `resume` (the decompressor is behind). */
  pause(): void;
  resume(): void;
  /** Drop the connection: the reader has all it will take. */
  abort(reason: Error): void;
}

export class BodyReader {
  /** Settles once: with the bytes, or with a FetchError. */
  readonly done: Promise<BodyBytes>;
  private resolve!: (body: BodyBytes) => void;
  private reject!: (error: FetchError) => void;
  private readonly chunks: Buffer[] = [];
  private total = 0;
  private wireBytes = 0;
  private settled = false;
  private readonly decompressor: Transform | undefined;

  constructor(
    private readonly limits: BodyLimits,
    private readonly flow: BodyFlow,
  ) {
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    const decompressor = decompressorFor(limits.contentEncoding);
    if (decompressor) {
      decompressor.on('data', (chunk: Buffer) => this.take(chunk));
      decompressor.on('end', () => this.finish());
      decompressor.on('error', (err) => this.fail(err));
      decompressor.on('drain', () => flow.resume());
    }
    this.decompressor = decompressor;
  }

  /** A chunk as it came off the wire. */
  write(chunk: Buffer): void {
    if (this.settled) return;
    this.wireBytes += chunk.length;
    if (this.decompressor === undefined) this.take(chunk);
    else if (!this.decompressor.write(chunk)) this.flow.pause();
  }

  /** The wire's body is complete. */
  end(): void {
    if (this.decompressor === undefined) this.finish();
    else this.decompressor.end();
  }

  /** The connection failed, or was stopped: `error` becomes the body's FetchError. */
  fail(error: unknown): void {
    if (this.settle()) this.reject(toFetchError(error, 'body'));
  }

  /** A decoded chunk, under the cap. */
  private take(chunk: Buffer): void {
    const { maxBytes, truncate } = this.limits;
    if (this.total + chunk.length <= maxBytes) {
      this.total += chunk.length;
      this.chunks.push(chunk);
      return;
    }
    if (truncate) {
      this.chunks.push(chunk.subarray(0, maxBytes - this.total));
      this.total = maxBytes;
      this.finish(true);
      this.flow.abort(new Error('body read up to its cap'));
    } else {
      const error = new FetchError('too-large', `body exceeds ${maxBytes} bytes`);
      this.fail(error);
      this.flow.abort(error);
    }
  }

  private finish(truncated = false): void {
    // Most pages come in one chunk: then it is the body as it is, without a copy.
    const bytes = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.total);
    if (this.settle()) this.resolve({ bytes, wireBytes: this.wireBytes, truncated });
  }

  /** True the first time: the caller settles the result. */
  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.decompressor?.destroy();
    return true;
  }
}
