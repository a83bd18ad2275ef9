/**
 * Reads a response body under a size cap, decompressing gzip, deflate and brotli. The cap
 * applies to the decompressed bytes too, so a decompression bomb stops at the cap: reading
 * stops there and the socket is dropped, so memory stays at about the cap whatever the
 * body's real size.
 */
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { finished, type Readable, type Transform } from 'node:stream';
import { FetchError, toFetchError } from './errors';
import { discardBody } from './transport';

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
}

/**
 * Past `maxBytes` the body is `too-large`, unless `truncate` is set: then its first
 * `maxBytes` bytes are the result (robots.txt, whose RFC 9309 asks for the first 500 KiB to
 * be parsed rather than the file to be ignored).
 *
 * Read with listeners and `finished`, not `for await`: a stream's async iterator makes several
 * promises per body, and every promise pays each enabled AsyncLocalStorage's hook
 * (bench/PROFILE.md). `finished` reports what the iterator would have thrown: the stream's
 * error, or a premature close.
 */
export function readBody(body: Readable, contentEncoding: string | undefined, maxBytes: number, truncate = false): Promise<BodyBytes> {
  const decompressor = decompressorFor(contentEncoding);
  const source: Readable = decompressor ? body.pipe(decompressor) : body;
  if (decompressor) body.once('error', (err) => decompressor.destroy(err));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let wireBytes = 0;
    let settled = false;
    const settle = (error: unknown): void => {
      if (settled) return;
      settled = true;
      stopWatching();
      discardBody(body);
      decompressor?.destroy();
      if (error) reject(toFetchError(error, 'body'));
      else resolve({ bytes: Buffer.concat(chunks, total), wireBytes });
    };
    if (decompressor) body.on('data', (chunk: Buffer) => (wireBytes += chunk.length));
    source.on('data', (chunk: Buffer) => {
      if (!decompressor) wireBytes += chunk.length;
      if (total + chunk.length <= maxBytes) {
        total += chunk.length;
        chunks.push(chunk);
        return;
      }
      if (!truncate) return settle(new FetchError('too-large', `body exceeds ${maxBytes} bytes`));
      chunks.push(chunk.subarray(0, maxBytes - total));
      total = maxBytes;
      settle(undefined);
    });
    const stopWatching = finished(source, settle);
  });
}
