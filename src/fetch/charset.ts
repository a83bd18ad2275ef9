/**
 * Turns HTML bytes into text: charset from a BOM, else the Content-Type header, else a
 * `<meta>` in the first 1024 bytes, else UTF-8. Legacy encodings (Shift_JIS, GBK,
 * windows-1252, ...) come from Node's ICU-backed TextDecoder.
 */
import { TextDecoder } from 'node:util';

const META_CHARSET = /<meta[^>]+charset\s*=\s*["']?\s*([a-z0-9_:.-]+)/i;
const HEADER_CHARSET = /charset\s*=\s*["']?([a-z0-9_:.-]+)/i;

function bomCharset(bytes: Buffer): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return undefined;
}

function decoderFor(label: string | undefined): TextDecoder | undefined {
  if (!label) return undefined;
  try {
    return new TextDecoder(label);
  } catch {
    return undefined; // unknown label: fall through to the next source
  }
}

export function decodeHtml(bytes: Buffer, contentType: string | undefined): string {
  const decoder =
    decoderFor(bomCharset(bytes)) ??
    decoderFor(contentType?.match(HEADER_CHARSET)?.[1]) ??
    decoderFor(bytes.subarray(0, 1024).toString('latin1').match(META_CHARSET)?.[1]) ??
    new TextDecoder('utf-8');
  return decoder.decode(bytes);
}
