/**
 * Reads a response body under a size cap, decompressing gzip, deflate and brotli. The cap
 * applies to the decompressed bytes too, so a decompression bomb stops at the cap: reading
 * stops there and the socket is dropped, so memory stays at about the cap whatever the
 * body's real size.
 */
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable, Transform } from 'node:stream';
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
 */
export async function readBody(body: Readable, contentEncoding: string | undefined, maxBytes: number, truncate = false): Promise<BodyBytes> {
  const decompressor = decompressorFor(contentEncoding);
  let wireBytes = 0;
  body.on('data', (chunk: Buffer) => {
    wireBytes += chunk.length;
  });
  const source: Readable = decompressor ? body.pipe(decompressor) : body;
  if (decompressor) body.once('error', (err) => decompressor.destroy(err));
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      if (total + chunk.length > maxBytes) {
        if (!truncate) throw new FetchError('too-large', `body exceeds ${maxBytes} bytes`);
        chunks.push(chunk.subarray(0, maxBytes - total));
        total = maxBytes;
        break;
      }
      total += chunk.length;
      chunks.push(chunk);
    }
  } catch (err) {
    throw toFetchError(err, 'body');
  } finally {
    discardBody(body);
    decompressor?.destroy();
  }
  return { bytes: Buffer.concat(chunks, total), wireBytes };
}
