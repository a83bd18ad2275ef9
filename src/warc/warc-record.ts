/**
 * WARC/1.1 records (ISO 28500:2017), each as its own gzip member, which is how `.warc.gz`
 * files are laid out: a reader can seek to any record, and files concatenate into a valid file.
 *
 * The crawler decompresses bodies as it reads them, so a response record holds the decoded
 * body: its HTTP headers say so honestly, the way warcio and pywb do it, by renaming the
 * headers that described the wire form (`Content-Encoding`, `Transfer-Encoding`,
 * `Content-Length`) to `X-Archive-Orig-*` and giving the real `Content-Length`. undici hands
 * over neither the HTTP version nor the reason phrase nor the header names' case: the status
 * line is written as `HTTP/1.1 <status> <standard reason>`, header names in lower case.
 */
import { createHash, randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { PayloadRecordRef } from '../store/frontier-store';

const CRLF = '\r\n';
/** Headers that described the body as it was on the wire, not as it is stored. */
const WIRE_HEADERS = new Set(['content-encoding', 'transfer-encoding', 'content-length']);

export type HttpHeaders = Record<string, string | string[] | undefined>;

/** What a stored page is made of (a subset of the fetch result, so tests can build one). */
export interface HttpExchange {
  url: string;
  status: number;
  headers: HttpHeaders;
  requestHeaders: Record<string, string>;
  /** The decoded body. */
  body: Buffer;
  /**
   * Set when `body` is not the whole body received: `length` past the size cap, `unspecified`
   * when it could not be read (a broken encoding, a dropped connection). Written as `WARC-Truncated`.
   */
  truncated?: 'length' | 'unspecified';
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32, the encoding WARC digests use by convention (`sha1:` + 32 characters). */
export function base32(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out.padEnd(Math.ceil(out.length / 8) * 8, '=');
}

export const sha1Digest = (bytes: Buffer): string => `sha1:${base32(createHash('sha1').update(bytes).digest())}`;

/** WARC-Date: UTC, second precision (what most readers expect even of WARC/1.1). */
export const warcDate = (date: Date): string => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

const recordId = (): string => `<urn:uuid:${randomUUID()}>`;

interface RecordSpec {
  type: 'warcinfo' | 'request' | 'response' | 'revisit';
  id: string;
  date: Date;
  contentType: string;
  block: Buffer;
  extra: Record<string, string | undefined>;
}

/**
 * `name: value` lines of WARC fields, the absent ones left out. Each value stays on its line: a
 * control character (a line break ends the field) is percent-encoded.
 */
function fieldLines(fields: Record<string, string | undefined>): string {
  return Object.entries(fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `${name}: ${value.replace(/\p{Cc}/gu, (char) => encodeURIComponent(char))}${CRLF}`)
    .join('');
}

function record({ type, id, date, contentType, block, extra }: RecordSpec): Buffer {
  const fields: Record<string, string | undefined> = {
    'WARC-Type': type,
    'WARC-Record-ID': id,
    'WARC-Date': warcDate(date),
    ...extra,
    'WARC-Block-Digest': sha1Digest(block),
    'Content-Type': contentType,
    'Content-Length': String(block.length),
  };
  return Buffer.concat([Buffer.from(`WARC/1.1${CRLF}${fieldLines(fields)}${CRLF}`), block, Buffer.from(CRLF + CRLF)]);
}

function headerLines(headers: HttpHeaders, rename: (name: string) => string): string {
  let lines = '';
  for (const [name, value] of Object.entries(headers)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) lines += `${rename(name)}: ${one}${CRLF}`;
  }
  return lines;
}

/** The status line and headers of a response whose stored body is `exchange.body`. */
function responseHead(exchange: HttpExchange): Buffer {
  const statusLine = `HTTP/1.1 ${exchange.status} ${STATUS_CODES[exchange.status] ?? 'Unknown'}${CRLF}`;
  const headers = headerLines(exchange.headers, (name) => (WIRE_HEADERS.has(name.toLowerCase()) ? `x-archive-orig-${name}` : name));
  return Buffer.from(`${statusLine}${headers}content-length: ${exchange.body.length}${CRLF}${CRLF}`, 'latin1');
}

function requestBlock(exchange: HttpExchange): Buffer {
  const url = new URL(exchange.url);
  const headers = headerLines({ host: url.host, ...exchange.requestHeaders }, (name) => name);
  return Buffer.from(`GET ${url.pathname}${url.search} HTTP/1.1${CRLF}${headers}${CRLF}`, 'latin1');
}

/** The `request` record, then the record of the response, each as its own gzip member. */
function withRequest(exchange: HttpExchange, date: Date, response: Omit<RecordSpec, 'id' | 'date' | 'contentType'>, responseId = recordId()): Buffer {
  const request = record({
    type: 'request',
    id: recordId(),
    date,
    contentType: 'application/http; msgtype=request',
    block: requestBlock(exchange),
    extra: { 'WARC-Target-URI': exchange.url, 'WARC-Concurrent-To': responseId },
  });
  const main = record({ ...response, id: responseId, date, contentType: 'application/http; msgtype=response' });
  return Buffer.concat([gzipSync(request), gzipSync(main)]);
}

/** What a page's stored records are, and which record holds its payload (what a later revisit refers to). */
export interface StoredCapture {
  bytes: Buffer;
  payload: PayloadRecordRef;
}

/** A page as two gzip members: its `request` record, then its `response` record (WARC-Record-ID `responseId`). */
export function exchangeRecords(exchange: HttpExchange, date: Date, responseId = recordId()): Buffer {
  return withRequest(
    exchange,
    date,
    {
      type: 'response',
      block: Buffer.concat([responseHead(exchange), exchange.body]),
      extra: { 'WARC-Target-URI': exchange.url, 'WARC-Payload-Digest': sha1Digest(exchange.body), 'WARC-Truncated': exchange.truncated },
    },
    responseId,
  );
}

/** The capture a revisit record points to: the response record that holds the payload. */
export type EarlierCapture = PayloadRecordRef;

export const REVISIT_PROFILES = {
  notModified: 'http://netpreserve.org/warc/1.1/revisit/server-not-modified',
  identicalPayload: 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest',
} as const;

/**
 * An unchanged page in a recrawl, the way archiving crawlers deduplicate: a `request` and a
 * `revisit` record holding the response's status line and headers but no body, pointing to
 * the earlier capture. A 304 is `server-not-modified`; a 200 whose body is the same is
 * `identical-payload-digest`, with the digest of that body. `earlier` is the original capture,
 * never an earlier revisit (WARC 1.1, section 6.7): a replay tool follows one reference.
 */
export function revisitRecords(exchange: HttpExchange, earlier: EarlierCapture, date: Date): Buffer {
  const notModified = exchange.status === 304;
  return withRequest(exchange, date, {
    type: 'revisit',
    block: responseHead(exchange),
    extra: {
      'WARC-Target-URI': exchange.url,
      'WARC-Profile': notModified ? REVISIT_PROFILES.notModified : REVISIT_PROFILES.identicalPayload,
      'WARC-Refers-To': earlier.id ?? undefined,
      'WARC-Refers-To-Target-URI': earlier.uri,
      'WARC-Refers-To-Date': earlier.date,
      'WARC-Payload-Digest': notModified ? undefined : sha1Digest(exchange.body),
    },
  });
}

/** A redirect followed on the way to a page: its exchange, and when its request was sent (its records' WARC-Date). */
export interface RedirectHop extends HttpExchange {
  sentAt: number;
}

/**
 * What a crawl stores of one page: the redirects its fetch followed, the exchange that ended it,
 * and for an unchanged page the capture that exchange repeats.
 */
export interface Capture {
  exchange: HttpExchange;
  /** Each redirect followed on the way to `exchange`, in order: its request and its 3xx response. */
  redirects: readonly RedirectHop[];
  earlier?: EarlierCapture;
}

/**
 * The records of the page's own exchange: a response, or a revisit of the earlier capture. Either
 * way the record holding the payload comes back with them, for the page record to carry on to the
 * next recrawl: a revisit's is the capture it refers to, so a chain of recrawls never refers to a revisit.
 */
function pageRecords(exchange: HttpExchange, earlier: EarlierCapture | undefined, date: Date): StoredCapture {
  if (earlier !== undefined) return { bytes: revisitRecords(exchange, earlier, date), payload: earlier };
  const payload = { id: recordId(), uri: exchange.url, date: warcDate(date) };
  return { bytes: exchangeRecords(exchange, date, payload.id), payload };
}

/**
 * The records of a capture, in the order the exchanges happened: a request and a response for
 * each redirect hop (a replay tool asked for a URL that redirected finds its 3xx there), then
 * the page's own pair, which is always last. A hop is stored as a response even in a recrawl:
 * it is small, and it is not what a revisit stands for.
 */
export function captureRecords({ exchange, redirects, earlier }: Capture, date: Date): StoredCapture {
  const page = pageRecords(exchange, earlier, date);
  if (redirects.length === 0) return page;
  const hops = redirects.map((hop) => exchangeRecords(hop, new Date(hop.sentAt)));
  return { bytes: Buffer.concat([...hops, page.bytes]), payload: page.payload };
}

/** The `warcinfo` record that opens an exported file, as one gzip member; a file written to standard output has no name to give. */
export function warcinfoRecord(filename: string | undefined, fields: Record<string, string>, date = new Date()): Buffer {
  const block = Buffer.from(fieldLines(fields));
  return gzipSync(record({ type: 'warcinfo', id: recordId(), date, contentType: 'application/warc-fields', block, extra: { 'WARC-Filename': filename } }));
}
