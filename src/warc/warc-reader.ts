/**
 * Reads back what `warc-record.ts` writes: the records of a stored page (one or more
 * concatenated gzip members), and the HTTP response inside its `response` record. Enough for
 * later processing of stored bodies; archive tools read the exported files themselves.
 */
import { gunzipSync } from 'node:zlib';

export class BadWarcError extends Error {
  readonly code = 'bad-warc';
}

export interface WarcRecord {
  headers: Record<string, string>;
  block: Buffer;
}

export interface StoredResponse {
  url: string;
  status: number;
  headers: Record<string, string[]>;
  body: Buffer;
}

const BLANK_LINE = Buffer.from('\r\n\r\n');

function parseFields(text: string): Array<[string, string]> {
  return text
    .split('\r\n')
    .filter((line) => line.includes(':'))
    .map((line) => [line.slice(0, line.indexOf(':')).trim(), line.slice(line.indexOf(':') + 1).trim()]);
}

/** The WARC records in `gzipped` (concatenated members, decompressed together). */
export function readWarcRecords(gzipped: Buffer): WarcRecord[] {
  const data = gunzipSync(gzipped);
  const records: WarcRecord[] = [];
  for (let at = 0; at < data.length; ) {
    const end = data.indexOf(BLANK_LINE, at);
    if (end < 0 || !data.subarray(at, at + 5).equals(Buffer.from('WARC/'))) throw new BadWarcError(`no WARC record at byte ${at}`);
    const headers: Record<string, string> = {};
    for (const [name, value] of parseFields(data.subarray(at, end).toString('utf8'))) headers[name.toLowerCase()] = value;
    const length = Number(headers['content-length']);
    if (!Number.isSafeInteger(length) || end + 4 + length > data.length) throw new BadWarcError(`bad Content-Length at byte ${at}`);
    records.push({ headers, block: data.subarray(end + 4, end + 4 + length) });
    at = end + 4 + length + 4;
  }
  return records;
}

/**
 * The response (status, headers, decoded body) stored for a page: its last record, after the
 * records of any redirect hops its fetch followed.
 */
export function readStoredResponse(gzipped: Buffer): StoredResponse {
  const response = readWarcRecords(gzipped).at(-1);
  if (response?.headers['warc-type'] !== 'response') throw new BadWarcError(`the page's last record is ${response?.headers['warc-type'] ?? 'missing'}, not a response`);
  const end = response.block.indexOf(BLANK_LINE);
  if (end < 0) throw new BadWarcError('response record without an HTTP header block');
  const [statusLine, ...rest] = response.block.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string[]> = {};
  for (const [name, value] of parseFields(rest.join('\r\n'))) (headers[name.toLowerCase()] ??= []).push(value);
  return {
    url: response.headers['warc-target-uri'] ?? '',
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: response.block.subarray(end + 4),
  };
}
