/**
 * An https site on 127.0.0.1 that is several host names, told apart by SNI, each with its own
 * certificate: one that verifies, and one for each way verification fails. The certificates
 * are made for the test by the `openssl` CLI: a test CA the crawler is told to trust, and a
 * rogue CA it is not. The server has no default certificate, so a handshake without a known
 * server name fails: every request that gets through proves the crawler sent the host name
 * (SNI) while connecting to the address.
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';
import { promisify } from 'node:util';
import { buildConnector } from 'undici';
import type { LookupAll } from '../../src/fetch/transport';
import { html } from './fixtures';

const run = promisify(execFile);

/** The names the site answers to, by what their certificate does. */
export const TLS_HOSTS = {
  /** Issued for its name by the trusted test CA, valid now. */
  valid: 'secure.test',
  /** Issued for its name, by a CA the crawler does not trust. */
  untrusted: 'rogue.test',
  /** A valid certificate from the trusted CA, but for another name (secure.test). */
  wrongName: 'wrong-name.test',
  /** Issued for its name by the trusted CA, expired in 2020. */
  expired: 'expired.test',
  /** Issued for its name by the trusted CA; the one name the system resolver maps to 127.0.0.1 (/etc/hosts). */
  localhost: 'localhost',
} as const;

/** Resolves every `.test` name to 127.0.0.1 and nothing else, so no DNS query leaves the machine. */
const loopbackLookup: LookupAll = async (hostname) => {
  if (hostname.endsWith('.test')) return [{ address: '127.0.0.1' }];
  throw Object.assign(new Error(`test lookup: no such name ${hostname}`), { code: 'ENOTFOUND' });
};

/**
 * undici's own connector, trusting `caPem` instead of Node's bundled CAs, that opens every
 * `.test` name's socket to the address the lookup gives. `host` keeps the name, so TLS sends
 * it as the server name and checks the certificate against it, as for a name DNS resolved.
 */
export function loopbackConnector(caPem: string): buildConnector.connector {
  const connect = buildConnector({ ca: [caPem], timeout: 2_000 });
  return (options, callback) => {
    loopbackLookup(options.hostname).then(
      ([{ address }]) => connect({ ...options, hostname: address }, callback),
      (err: Error) => callback(err, null),
    );
  };
}

interface Validity {
  /** openssl `ca` dates, YYYYMMDDHHMMSSZ. */
  start: string;
  end: string;
}

const opensslDate = (ms: number): string => new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
const VALID_NOW: Validity = { start: opensslDate(Date.now() - 86_400_000), end: opensslDate(Date.now() + 86_400_000) };
const EXPIRED: Validity = { start: '20200101000000Z', end: '20200102000000Z' };

/** A CA: a self-signed certificate in `dir` with an `openssl ca` database, so it can sign with chosen dates. */
class TestCa {
  private constructor(
    private readonly dir: string,
    readonly certPem: string,
  ) {}

  get certFile(): string {
    return `${this.dir}.pem`;
  }

  static async create(dir: string, name: string): Promise<TestCa> {
    const ca = join(dir, name);
    writeFileSync(`${ca}.index`, '');
    writeFileSync(`${ca}.serial`, '01\n');
    writeFileSync(
      `${ca}.cnf`,
      `[ca]\ndefault_ca = this\n[this]\ndatabase = ${ca}.index\nserial = ${ca}.serial\nnew_certs_dir = ${dir}\n` +
        'default_md = sha256\npolicy = any\nunique_subject = no\n[any]\ncommonName = supplied\n',
    );
    await run('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-subj', `/CN=crawlflow ${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign',
      '-keyout', `${ca}.key`, '-out', `${ca}.pem`,
    ]);
    return new TestCa(ca, readFileSync(`${ca}.pem`, 'utf8'));
  }

  /** A server certificate for `dnsName`, signed by this CA, valid over `validity`. */
  async issue(dnsName: string, validity: Validity): Promise<{ key: string; cert: string }> {
    const leaf = `${this.dir}-${dnsName}-${validity.end}`;
    writeFileSync(
      `${leaf}.ext`,
      `[leaf]\nbasicConstraints = CA:FALSE\nkeyUsage = digitalSignature\nextendedKeyUsage = serverAuth\nsubjectAltName = DNS:${dnsName}\n`,
    );
    await run('openssl', [
      'req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${dnsName}`, '-keyout', `${leaf}.key`, '-out', `${leaf}.csr`,
    ]);
    await run('openssl', [
      'ca', '-batch', '-notext', '-config', `${this.dir}.cnf`, '-cert', `${this.dir}.pem`, '-keyfile', `${this.dir}.key`,
      '-extfile', `${leaf}.ext`, '-extensions', 'leaf', '-startdate', validity.start, '-enddate', validity.end,
      '-in', `${leaf}.csr`, '-out', `${leaf}.pem`,
    ]);
    return { key: readFileSync(`${leaf}.key`, 'utf8'), cert: readFileSync(`${leaf}.pem`, 'utf8') };
  }
}

export interface TlsSite {
  /** The CA the crawler must be told to trust (PEM). */
  caPem: string;
  /** The same CA as a file, for a process told to trust it through NODE_EXTRA_CA_CERTS. */
  caFile: string;
  port: number;
  url(host: string, path?: string): string;
  /** The server name of every handshake, in order. */
  handshakes: string[];
  /** Requests that got through a handshake: `host` header and path. */
  requests: Array<{ host: string; path: string }>;
  close(): Promise<void>;
}

/** Pages per host: a seed linking to two pages, and a robots.txt that allows everything. */
function respond(path: string, res: ServerResponse): void {
  if (path === '/robots.txt') res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
  else if (path === '/') html(res, '<a href="/a">a</a><a href="/b">b</a>');
  else if (path === '/a' || path === '/b') html(res, `page ${path}`);
  else res.writeHead(404).end();
}

async function certificates(dir: string): Promise<{ caPem: string; caFile: string; contexts: Map<string, SecureContext> }> {
  const trusted = await TestCa.create(dir, 'test-ca');
  const rogue = await TestCa.create(dir, 'rogue-ca');
  const valid = await trusted.issue(TLS_HOSTS.valid, VALID_NOW);
  const contexts = new Map<string, SecureContext>([
    [TLS_HOSTS.valid, createSecureContext(valid)],
    [TLS_HOSTS.untrusted, createSecureContext(await rogue.issue(TLS_HOSTS.untrusted, VALID_NOW))],
    [TLS_HOSTS.wrongName, createSecureContext(valid)],
    [TLS_HOSTS.expired, createSecureContext(await trusted.issue(TLS_HOSTS.expired, EXPIRED))],
    [TLS_HOSTS.localhost, createSecureContext(await trusted.issue(TLS_HOSTS.localhost, VALID_NOW))],
  ]);
  return { caPem: trusted.certPem, caFile: trusted.certFile, contexts };
}

export async function startTlsSite(): Promise<TlsSite> {
  const dir = mkdtempSync(join(tmpdir(), 'crawlflow-tls-'));
  const { caPem, caFile, contexts } = await certificates(dir);
  const handshakes: string[] = [];
  const requests: Array<{ host: string; path: string }> = [];
  const server: Server = createServer({
    SNICallback: (servername, callback) => {
      handshakes.push(servername);
      const context = contexts.get(servername);
      callback(context ? null : new Error(`no certificate for server name "${servername}"`), context);
    },
  });
  server.on('request', (req, res) => {
    const path = req.url ?? '/';
    requests.push({ host: (req.headers.host ?? '').replace(/:\d+$/, ''), path });
    respond(path, res);
  });
  server.on('tlsClientError', () => undefined);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    caPem,
    caFile,
    port,
    url: (host, path = '/') => `https://${host}:${port}${path}`,
    handshakes,
    requests,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
