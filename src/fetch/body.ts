/**
 * Reads a response body under a size cap, decompressing gzip, deflate and brotli. The cap
 * applies to the decompressed bytes too, so a decompression bomb stops at the cap.
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

export async function readBody(body: Readable, contentEncoding: string | undefined, maxBytes: number): Promise<BodyBytes> {
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
      total += chunk.length;
      if (total > maxBytes) throw new FetchError('too-large', `body exceeds ${maxBytes} bytes`);
      chunks.push(chunk);
    }
  } catch (err) {
    throw toFetchError(err);
  } finally {
    discardBody(body);
    decompressor?.destroy();
  }
  return { bytes: Buffer.concat(chunks, total), wireBytes };
}
