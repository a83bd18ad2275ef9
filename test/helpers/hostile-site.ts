/**
 * A hostile web site for the hostile-* and security-* tests: one node:http server on
 * 127.0.0.1 with an endpoint for each trick a site can play on a crawler (redirect traps,
 * infinite URL spaces, huge, compressed, slow, broken and mislabelled bodies, odd charsets,
 * hostile HTML and robots.txt files).
 *
 * Host names ending in `.test` reach the same server through a stub resolver, so one server
 * can be many origins (each with its own robots.txt). A few names stand for internal
 * addresses (10.0.0.1, 169.254.169.254, ...). Nothing here may open a socket to a
 * non-loopback address: the stub resolver never asks the system resolver, and the test
 * connector refuses every address that is not a loopback literal, so even a broken address
 * guard could not reach one. The connector also records what it was asked to connect to,
 * which is how tests prove that a blocked address never got as far as a connect.
 */
import { after, before } from 'node:test';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import { createGzip } from 'node:zlib';
import { buildConnector } from 'undici';
import { AddressGuard } from '../../src/fetch/address-guard';
import { UndiciTransport, type LookupAll } from '../../src/fetch/transport';
import type { WorkerNetwork } from '../../src/workers/crawl-worker';
import { realCrawler, type RealCrawler } from './real-crawl';

/** Names that resolve to internal addresses; every other `.test` name resolves to 127.0.0.1. */
export const INTERNAL_NAMES: Readonly<Record<string, readonly string[]>> = {
  'evil.test': ['10.0.0.1'],
  'metadata.test': ['169.254.169.254'],
  'cgnat.test': ['100.64.0.1'],
  'ula.test': ['fd00::1'],
  'mapped.test': ['::ffff:192.168.1.1'],
  // A public-looking answer list with one internal address in it, as DNS rebinding serves.
  'rebind.test': ['127.0.0.1', '10.0.0.1'],
};

/** The stub resolver: never the system's, so no DNS query leaves the machine. */
export const stubLookup: LookupAll = async (hostname) => {
  const internal = INTERNAL_NAMES[hostname];
  if (internal) return internal.map((address) => ({ address }));
  if (hostname.endsWith('.test')) return [{ address: '127.0.0.1' }];
  throw Object.assign(new Error(`stub resolver: no such name ${hostname}`), { code: 'ENOTFOUND' });
};

function isLoopbackLiteral(hostname: string): boolean {
  return isIP(hostname) !== 0 && (hostname.startsWith('127.') || hostname === '::1');
}

export interface TestNetwork {
  /** The stub resolver and a connector that only ever reaches loopback, for a transport or a crawl worker. */
  network: Required<WorkerNetwork>;
  /** Every host the connector was asked to open a socket to, in order. */
  connects: string[];
}

/** A fresh stub resolver and recording connector: each test file keeps its own log of connects. */
export function testNetwork(): TestNetwork {
  const connects: string[] = [];
  const loopbackOnly = buildConnector({ timeout: 2_000 });
  const connect: buildConnector.connector = (options, callback) => {
    connects.push(options.hostname);
    if (isLoopbackLiteral(options.hostname)) return loopbackOnly(options, callback);
    callback(Object.assign(new Error(`test connector: refusing ${options.hostname}`), { code: 'ECONNREFUSED' }), null);
  };
  return { network: { lookup: stubLookup, connect }, connects };
}

export interface TestTransport extends TestNetwork {
  transport: UndiciTransport;
}

/** An UndiciTransport over a fresh test network, for tests of the fetch path below the activities. */
export function testTransport(): TestTransport {
  const testNet = testNetwork();
  const transport = new UndiciTransport({ connectTimeoutMs: 2_000, idleTimeoutMs: 10_000, connectionsPerOrigin: 8, ...testNet.network });
  return { ...testNet, transport };
}

/** The guard of a crawl seeded on the loopback site: 127.0.0.1, and no other internal address. */
export const LOOPBACK_GUARD = AddressGuard.forCrawl({ seeds: ['http://127.0.0.1/'], allowPrivateNetwork: false });

const page = (title: string, body: string) => `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;
const links = (hrefs: readonly string[]) => hrefs.map((href) => `<a href="${href}">${href}</a>`).join('\n');
const latin1 = (...parts: Array<string | number[]>) => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part))));

export const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]);
/** A PDF start: binary, yet without a NUL byte in its first kilobyte. */
export const PDF = Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n', 'latin1');

export const ROBOTS_CAP = 512 * 1024;
/** A robots.txt over 512 KiB: a rule before the cap, a line cut by it, a rule after it. */
function hugeRobots(): string {
  const head = 'User-agent: *\nDisallow: /early\n';
  const filler = '# padding padding padding padding padding padding padding padding\n';
  let text = head;
  while (text.length + filler.length < ROBOTS_CAP - 100) text += filler;
  text += `${'#'.repeat(ROBOTS_CAP - 20 - text.length - 1)}\n`;
  // The cut at 512 KiB falls 20 bytes into this line: "Disallow: /cut-line-" must not become a rule.
  text += 'Disallow: /cut-line-that-the-cap-goes-through\n';
  while (text.length < ROBOTS_CAP + 100 * 1024) text += filler;
  return `${text}Disallow: /late\n`;
}

/** robots.txt behaviours, one per host name (each its own origin, served by this one site). */
const ROBOTS_BY_HOST: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  'robots-huge.test': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(hugeRobots()),
  'robots-wildcards.test': (_req, res) =>
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(`User-agent: *\nDisallow: /early*wild\n${'Disallow: /*a*a*a*a*a*a*a*a*a*a*b # many * in a comment do not count\n'.repeat(5_000)}Disallow: /late-wild\n`),
  'robots-malformed.test': (_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end(
      Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from('<html>this is not a robots file</html>\n\u0000\u0001\u0002 binary junk\nDisalow: /typo\nUser-agent crawlflow\n'),
        Buffer.from('Disallow /no-colon\n:::\nUser-agent: *\r\nDisallow: /private   # trailing comment\r\nAllow: /private/open\r\nCrawl-delay: banana\n'),
        Buffer.from(`Disallow: /${'x'.repeat(100_000)}\n`),
      ]),
    ),
  'robots-5xx.test': (_req, res) => res.writeHead(503, { 'content-type': 'text/plain' }).end('down'),
  'robots-4xx.test': (_req, res) => res.writeHead(403, { 'content-type': 'text/plain' }).end('forbidden'),
  'robots-redirect.test': (_req, res) => res.writeHead(301, { location: '/robots-hop/1?to=4' }).end(),
  'robots-redirect-far.test': (_req, res) => res.writeHead(301, { location: '/robots-hop/1?to=7' }).end(),
  'robots-private.test': (_req, res) => res.writeHead(302, { location: 'http://metadata.test/robots.txt' }).end(),
  'robots-stall.test': () => undefined,
};

/** Route handlers by path; `url` is the request URL resolved against the site's origin. */
type Route = (req: IncomingMessage, res: ServerResponse, url: URL) => void;

export class HostileSite {
  readonly requests: Array<{ host: string; path: string }> = [];
  origin = '';
  port = 0;
  private readonly server: Server;
  private bomb: Buffer = Buffer.alloc(0);
  /** Bytes of the gzip bomb once inflated. */
  static readonly BOMB_INFLATED_BYTES = 200 * 1024 * 1024;

  constructor() {
    this.server = createServer((req, res) => this.handle(req, res));
    // Once per connection: a kept-alive socket serves many requests, and a listener per request piled up.
    this.server.on('connection', (socket) => socket.on('error', () => undefined));
  }

  async start(): Promise<void> {
    this.bomb = await gzipZeros(HostileSite.BOMB_INFLATED_BYTES);
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as AddressInfo).port;
    this.origin = `http://127.0.0.1:${this.port}`;
  }

  url(path: string, host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${path}`;
  }

  /** Requests for `path` (with its query) on any host. */
  seen(path: string): number {
    return this.requests.filter((request) => request.path === path).length;
  }

  get bombBytes(): number {
    return this.bomb.length;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const url = new URL(req.url ?? '/', this.url('/', host));
    this.requests.push({ host, path: url.pathname + url.search });
    res.on('error', () => undefined);
    if (url.pathname === '/robots.txt') {
      const robots = ROBOTS_BY_HOST[host];
      if (robots) robots(req, res);
      else res.writeHead(404, { 'content-type': 'text/plain' }).end('no robots here');
      return;
    }
    if (url.pathname.startsWith('/robots-hop/')) return this.robotsHop(res, url);
    const route = this.routes[url.pathname];
    if (route) route(req, res, url);
    else res.writeHead(404, { 'content-type': 'text/html' }).end(page('not found', ''));
  }

  private readonly routes: Record<string, Route> = {
    '/': (_req, res) => html(res, page('hostile', 'a hostile site')),

    // Redirect traps.
    '/redirect/loop/a': (_req, res) => redirect(res, '/redirect/loop/b'),
    '/redirect/loop/b': (_req, res) => redirect(res, '/redirect/loop/a'),
    '/redirect/chain': (_req, res, url) => {
      const n = Number(url.searchParams.get('n') ?? 0);
      if (n >= 20) html(res, page('end of chain', ''));
      else redirect(res, `/redirect/chain?n=${n + 1}`);
    },
    '/redirect/forever': (_req, res, url) => redirect(res, `/redirect/forever?n=${Number(url.searchParams.get('n') ?? 0) + 1}`),
    '/redirect/out-of-scope': (_req, res) => redirect(res, this.url('/landing', 'elsewhere.test')),
    '/redirect/private': (_req, res) => redirect(res, this.url('/internal', 'evil.test')),
    '/redirect/metadata': (_req, res) => redirect(res, 'http://169.254.169.254/latest/meta-data/'),
    '/redirect/link-local': (_req, res) => redirect(res, this.url('/latest/meta-data/', 'metadata.test')),
    '/redirect/rebind': (_req, res) => redirect(res, this.url('/', 'rebind.test')),

    // Infinite URL spaces.
    '/calendar': (_req, res, url) => {
      const month = Number(url.searchParams.get('month') ?? 0);
      html(res, page(`month ${month}`, links([`/calendar?month=${month - 1}`, `/calendar?month=${month + 1}`])));
    },
    '/session': (_req, res, url) => {
      // Every link carries a fresh session ID, so no two URLs are ever the same.
      const next = Number(url.searchParams.get('page') ?? 0) + 1;
      const sid = () => Math.random().toString(36).slice(2);
      html(res, page('session', links([`/session?sid=${sid()}&page=${next}`, `/session?sid=${sid()}&page=${next}`])));
    },
    '/grow': (_req, res, url) => {
      const q = url.searchParams.get('q') ?? '';
      html(res, page('grow', links([`/grow?q=${q}0123456789`])));
    },

    // Bodies.
    '/body/huge': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    },
    '/body/bomb': (_req, res) => res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(this.bomb),
    '/body/trickle': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      const timer = setInterval(() => res.write('a'), 1_000);
      res.on('close', () => clearInterval(timer));
    },
    '/body/reset': (req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': '100000' });
      res.write('<html><body>' + 'x'.repeat(1_000));
      // A moment later, so the bytes are on the wire before the RST.
      setTimeout(() => req.socket.resetAndDestroy(), 50);
    },
    '/body/truncated': (req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': '100000' });
      res.write('<html><body>' + 'x'.repeat(1_000), () => req.socket.end());
    },
    '/body/truncated-chunked': (req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<html><body>' + 'x'.repeat(1_000), () => req.socket.end());
    },
    '/body/not-http': (req) => req.socket.end('SSH-2.0-OpenSSH_9.6\r\n'),
    '/body/huge-headers': (_req, res) => res.writeHead(200, { 'content-type': 'text/html', 'x-padding': 'p'.repeat(1024 * 1024) }).end('<p>'),

    // Content types.
    '/content/no-type': (_req, res) => res.writeHead(200).end(page('untyped', links(['/untyped-link']))),
    '/content/text-plain': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(page('plain', links(['/plain-link']))),
    '/content/png-as-html': (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PNG),
    '/content/pdf-as-html': (_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PDF),
    '/content/png-untyped': (_req, res) => res.writeHead(200).end(PNG),

    // Charsets: the title is what must come out.
    '/charset/shift-jis': (_req, res) => raw(res, 'text/html; charset=Shift_JIS', latin1('<title>', [0x93, 0xfa, 0x96, 0x7b], '</title>')),
    '/charset/gbk-meta': (_req, res) => raw(res, 'text/html', latin1('<meta charset="gb2312"><title>', [0xc4, 0xe3, 0xba, 0xc3], '</title>')),
    '/charset/windows-1252': (_req, res) => raw(res, 'text/html; charset=windows-1252', latin1('<title>', [0x80, 0x20, 0x93, 0x71, 0x94, 0x20, 0xe9], '</title>')),
    '/charset/latin1-label': (_req, res) => raw(res, 'text/html; charset=ISO-8859-1', latin1('<title>', [0x93, 0x71, 0x94], '</title>')),
    '/charset/unknown-label': (_req, res) => raw(res, 'text/html; charset=x-klingon', Buffer.from('<title>naïve ✓</title>')),
    '/charset/bogus-meta': (_req, res) => raw(res, 'text/html', Buffer.from('<meta charset="utf-7"><title>naïve ✓</title>')),
    '/charset/utf16-bom': (_req, res) => raw(res, 'text/html', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<title>wide ✓</title>', 'utf16le')])),

    // HTML.
    '/html/malformed': (_req, res) =>
      html(
        res,
        `<html><head><title>Broken &amp; <b>bold</title><base href="/base/">
        <body><div><p>unclosed <a href=unquoted>one</a <a href='/ignored'>two
        <a href="/three?x=1&amp;y=2"><a href="/nested">nested</a></a><table><tr><td><a href=/in-table>t</a></span>
        <a href="javascript:alert(1)">js</a><a href="http://user:pw@127.0.0.1/creds">creds</a><a href="http://[bad/">bad</a>
        <script>document.write('<a href="/in-script">')</script><a href="/after-script">ok</a>
        <!-- <a href="/in-comment"> --> <a href="/after-comment">ok</a> <!-- unterminated <a href="/lost">`,
      ),
    '/html/many-links': (_req, res) => html(res, page('many', Array.from({ length: 100_000 }, (_, n) => `<a href="/p/${n}">${n}</a>`).join(''))),
    '/html/deep': (_req, res) => html(res, `<title>deep</title>${'<div>'.repeat(200_000)}<a href="/bottom">bottom</a>`),
    '/html/long-list': (_req, res) =>
      html(res, `<title>list</title><ul>${Array.from({ length: 20_000 }, (_, i) => `<li><p>item ${i}<br><img src=x.png><a href="/item/${i}">${i}</a>`).join('')}</ul>`),
    '/html/meta-nofollow': (_req, res) => html(res, `<meta name="robots" content="nofollow">${page('nofollow', links(['/followed-1', '/followed-2']))}`),
    '/html/x-robots-nofollow': (_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html', 'x-robots-tag': 'nofollow' }).end(page('header', links(['/followed-3']))),
    '/html/x-robots-noindex': (_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html', 'x-robots-tag': ['noarchive', 'noindex'] }).end(page('noindex', links(['/followed-4']))),
  };

  /** /robots-hop/N?to=M redirects to hop N+1, and hop M serves the rules. */
  private robotsHop(res: ServerResponse, url: URL): void {
    const n = Number(url.pathname.split('/').pop());
    const to = Number(url.searchParams.get('to'));
    if (n < to) redirect(res, `/robots-hop/${n + 1}?to=${to}`);
    else res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /secret\n');
  }
}

function html(res: ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
}

function raw(res: ServerResponse, contentType: string, body: Buffer): void {
  res.writeHead(200, { 'content-type': contentType }).end(body);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { location }).end();
}

/** Gzip of `size` zero bytes, made a megabyte at a time so the test process never holds them. */
async function gzipZeros(size: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const out: Buffer[] = [];
  gzip.on('data', (chunk: Buffer) => out.push(chunk));
  const zeros = Buffer.alloc(1024 * 1024);
  for (let written = 0; written < size; written += zeros.length) {
    if (!gzip.write(zeros)) await once(gzip, 'drain');
  }
  gzip.end();
  await once(gzip, 'end');
  return Buffer.concat(out);
}

export interface HostileSiteFixture extends TestTransport {
  site: HostileSite;
}

/** The site and a test transport over it, started before and closed after the calling suite. */
export function hostileSite(): HostileSiteFixture {
  const site = new HostileSite();
  const client = testTransport();
  before(() => site.start());
  after(async () => {
    await client.transport.close();
    await site.close();
  });
  return { site, ...client };
}

export interface HostileFixture extends HostileSiteFixture {
  crawler: RealCrawler;
}

/**
 * The site, a test transport, and real crawls of it: a worker whose requests go through the
 * same stub resolver and recording connector, so `connects` holds the crawls' sockets too.
 */
export function hostileFixture(): HostileFixture {
  const fixture = hostileSite();
  return { ...fixture, crawler: realCrawler(fixture.network) };
}
