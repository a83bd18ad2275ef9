/**
 * Turns HTML bytes into text: charset from a BOM, else the Content-Type header, else a
 * `<meta>` in the first 1024 bytes, else UTF-8. Labels are resolved the way browsers do
 * (WHATWG Encoding: "latin1" and "iso-8859-1" mean windows-1252), then decoded with
 * iconv-lite, because Node 20's ICU decoder gets windows-1252's 0x80-0x9F range wrong.
 * UTF-8, nearly every page, is decoded by Buffer itself (see `decodeUtf8`).
 */
import { TextDecoder } from 'node:util';
import iconv from 'iconv-lite';

const META_CHARSET = /<meta[^>]+charset\s*=\s*["']?\s*([a-z0-9_:.-]+)/i;
const HEADER_CHARSET = /charset\s*=\s*["']?([a-z0-9_:.-]+)/i;

function bomCharset(bytes: Buffer): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return undefined;
}

/** The WHATWG name for a charset label, if it is one iconv-lite can decode. */
function resolveLabel(label: string): string | undefined {
  try {
    const name = new TextDecoder(label).encoding;
    return iconv.encodingExists(name) ? name : undefined;
  } catch {
    return undefined; // unknown label: fall through to the next source
  }
}

/**
 * Labels resolved so far. Resolving one builds a TextDecoder, and nearly every page names one
 * of a few labels; servers name the labels, so only so many are kept.
 */
const resolvedLabels = new Map<string, string | undefined>();
const RESOLVED_LABELS_KEPT = 256;

function encodingFor(label: string | undefined): string | undefined {
  if (!label) return undefined;
  if (resolvedLabels.has(label)) return resolvedLabels.get(label);
  const name = resolveLabel(label);
  if (resolvedLabels.size < RESOLVED_LABELS_KEPT) resolvedLabels.set(label, name);
  return name;
}

/**
 * UTF-8 as iconv-lite decodes it (a StringDecoder, then the BOM dropped), by Buffer in one
 * native call: iconv-lite's streaming decoder took twice as long on a page.
 */
function decodeUtf8(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

export function decodeHtml(bytes: Buffer, contentType: string | undefined): string {
  const encoding =
    encodingFor(bomCharset(bytes)) ??
    encodingFor(contentType?.match(HEADER_CHARSET)?.[1]) ??
    encodingFor(bytes.subarray(0, 1024).toString('latin1').match(META_CHARSET)?.[1]) ??
    'utf-8';
  return encoding === 'utf-8' ? decodeUtf8(bytes) : iconv.decode(bytes, encoding); // either strips a BOM
}
