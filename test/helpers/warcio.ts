/**
 * The standard Python WARC library (webrecorder's warcio, pinned in package.json's
 * config.warcio), installed project-locally into `.tools/warcio` by `npm install`
 * (scripts/install-warcio.mjs), to check that our WARC files are readable by the tools
 * archivists use: `warcio check` verifies every record's block and payload digest, and
 * `records()` reads every record back through warcio's ArchiveIterator.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/temporal/project-paths';

const execFileAsync = promisify(execFile);
const TARGET = join(projectRoot, '.tools', 'warcio');

/** Rejects with the command to run when the pinned warcio is not installed: tests never install it themselves. */
function requireWarcio(): void {
  const { warcio: version } = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { config: { warcio: string } }).config;
  if (!existsSync(join(TARGET, `warcio-${version}.dist-info`))) {
    throw new Error(`warcio ${version} is not installed in .tools/warcio (npm install puts it there); run: node scripts/install-warcio.mjs`);
  }
}

async function python(args: string[]): Promise<string> {
  requireWarcio();
  const { stdout } = await execFileAsync('python3', args, { env: { ...process.env, PYTHONPATH: TARGET }, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** `warcio check -v`: rejects (non-zero exit) when any digest is wrong or the file is unreadable. */
export function warcioCheck(file: string): Promise<string> {
  return python(['-m', 'warcio.cli', 'check', '-v', file]);
}

export interface WarcioRecord {
  type: string;
  uri: string | null;
  id: string;
  concurrentTo: string | null;
  payloadDigest: string | null;
  profile: string | null;
  refersToUri: string | null;
  /** WARC-Refers-To and WARC-Refers-To-Date of a revisit; WARC-Date of any record. */
  refersTo: string | null;
  refersToDate: string | null;
  date: string | null;
  status: string | null;
  headers: Array<[string, string]>;
  /** sha256 (hex) of the payload as warcio decodes it. */
  payloadSha256: string;
  payloadLength: number;
}

const READ_ALL = `
import hashlib, json, sys
from warcio.archiveiterator import ArchiveIterator
with open(sys.argv[1], 'rb') as f:
    for r in ArchiveIterator(f):
        payload = r.content_stream().read()
        h = r.http_headers
        print(json.dumps({
            'type': r.rec_type,
            'uri': r.rec_headers.get_header('WARC-Target-URI'),
            'id': r.rec_headers.get_header('WARC-Record-ID'),
            'concurrentTo': r.rec_headers.get_header('WARC-Concurrent-To'),
            'payloadDigest': r.rec_headers.get_header('WARC-Payload-Digest'),
            'profile': r.rec_headers.get_header('WARC-Profile'),
            'refersToUri': r.rec_headers.get_header('WARC-Refers-To-Target-URI'),
            'refersTo': r.rec_headers.get_header('WARC-Refers-To'),
            'refersToDate': r.rec_headers.get_header('WARC-Refers-To-Date'),
            'date': r.rec_headers.get_header('WARC-Date'),
            'status': h.get_statuscode() if h is not None and r.rec_type in ('response', 'revisit') else None,
            'headers': h.headers if h is not None else [],
            'payloadSha256': hashlib.sha256(payload).hexdigest(),
            'payloadLength': len(payload),
        }))
`;

/** Every record of a WARC file, as warcio's ArchiveIterator reads it. */
export async function warcioRecords(file: string): Promise<WarcioRecord[]> {
  const out = await python(['-c', READ_ALL, file]);
  return out.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as WarcioRecord);
}
