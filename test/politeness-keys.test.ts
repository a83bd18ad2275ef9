/**
 * Politeness by host, registrable domain or IP (`politenessKey`), through a real crawl: four
 * host names on three loopback addresses, each a small site. Under each key, the requests of
 * the hosts that share a key are spaced by the delay between them (as undici wrote them) and
 * never overlap, while hosts of different keys are crawled side by side.
 *
 * The names resolve through the test's own resolver (the crawl's, and its connector's, which
 * reaches loopback only), so no query or packet leaves the machine.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { LookupAll } from '../src/fetch/transport';
import type { PolitenessKeyKind } from '../src/shared/politeness-config';
import { buildConnector } from 'undici';
import { realCrawler } from './helpers/real-crawl';
import { gapsBetween } from './helpers/recording-site';

/** Host name -> the loopback address it resolves to. a and c share an address; a and b a domain. */
const ADDRESSES: Readonly<Record<string, string>> = {
  'a.alpha.test': '127.0.0.2',
  'b.alpha.test': '127.0.0.3',
  'c.beta.test': '127.0.0.2',
  'd.gamma.test': '127.0.0.4',
};
const NAMES = Object.keys(ADDRESSES);

/** Which hosts share a key, under each key. */
const GROUPS: Record<PolitenessKeyKind, string[][]> = {
  host: NAMES.map((name) => [name]),
  domain: [['a.alpha.test', 'b.alpha.test'], ['c.beta.test'], ['d.gamma.test']],
  ip: [['a.alpha.test', 'c.beta.test'], ['b.alpha.test'], ['d.gamma.test']],
};

const PAGES_PER_HOST = 6;
const DELAY_MS = 150;
const LATENCY_MS = 50;
/** undici writes a request within the millisecond its start was taken (see politeness.test.ts). */
const SEND_TOLERANCE_MS = 3;

const lookup: LookupAll = async (hostname) => {
  const address = ADDRESSES[hostname];
  if (address === undefined) throw Object.assign(new Error(`test resolver: no such name ${hostname}`), { code: 'ENOTFOUND' });
  return [{ address }];
};

/** Opens each name's socket to the address the test resolver gives, and only ever to loopback. */
function loopbackConnector(): buildConnector.connector {
  const connect = buildConnector({ timeout: 2_000 });
  return (options, callback) => {
    lookup(options.hostname).then(
      ([{ address }]) =>
        address.startsWith('127.') ? connect({ ...options, hostname: address }, callback) : callback(new Error(`refusing ${address}`), null),
      (err: Error) => callback(err, null),
    );
  };
}

interface Exchange {
  host: string;
  startedAt: number;
  endedAt: number;
}

/** One server per address, answering every name: `/` links to the host's other pages, after LATENCY_MS. */
async function startServers(): Promise<{ ports: Map<string, number>; exchanges: Exchange[]; close(): Promise<void> }> {
  const exchanges: Exchange[] = [];
  const servers: Server[] = [];
  const ports = new Map<string, number>();
  for (const address of new Set(Object.values(ADDRESSES))) {
    const server = createServer((req, res) => {
      const startedAt = Date.now();
      const host = (req.headers.host ?? '').replace(/:\d+$/, '');
      const links = req.url === '/' ? Array.from({ length: PAGES_PER_HOST - 1 }, (_, n) => `<a href="/p${n}">p</a>`).join('') : '';
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>${host}</title>${links}`);
        exchanges.push({ host, startedAt, endedAt: Date.now() });
      }, LATENCY_MS);
    });
    server.listen(0, address);
    await once(server, 'listening');
    ports.set(address, (server.address() as AddressInfo).port);
    servers.push(server);
  }
  return {
    ports,
    exchanges,
    close: async () => {
      for (const server of servers) server.closeAllConnections();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}

/** When undici wrote each request, by host name: the crawler's own moment of sending. */
function recordSends(): { byHost: Map<string, number[]>; stop(): void } {
  const byHost = new Map<string, number[]>();
  const onSend = (message: unknown): void => {
    const { request } = message as { request: { origin: string } };
    const host = new URL(String(request.origin)).hostname;
    if (!(host in ADDRESSES)) return;
    byHost.set(host, [...(byHost.get(host) ?? []), Date.now()]);
  };
  subscribe('undici:client:sendHeaders', onSend);
  return { byHost, stop: () => unsubscribe('undici:client:sendHeaders', onSend) };
}

/** The most exchanges of `hosts` the site was serving at one moment. */
function maxOverlap(exchanges: readonly Exchange[], hosts: readonly string[]): number {
  const mine = exchanges.filter((exchange) => hosts.includes(exchange.host));
  return Math.max(...mine.map((one) => mine.filter((other) => other.startedAt <= one.startedAt && one.startedAt < other.endedAt).length));
}

describe('politeness key: host, registrable domain or IP', () => {
  const crawler = realCrawler({ lookup, connect: loopbackConnector() });
  let site: Awaited<ReturnType<typeof startServers>>;
  before(async () => {
    site = await startServers();
  });
  after(() => site?.close());

  for (const key of ['host', 'domain', 'ip'] as const) {
    it(`by ${key}: hosts sharing a key are spaced by the delay and never overlap; other keys run side by side`, async () => {
      site.exchanges.length = 0;
      const seeds = NAMES.map((name) => `http://${name}:${site.ports.get(ADDRESSES[name])}/`);
      const sends = recordSends();
      const records = await crawler.crawl({
        seeds,
        politenessKey: key,
        delayMs: DELAY_MS,
        perHostConcurrency: 1,
        concurrency: 8,
        respectRobots: false,
        allowPrivateNetwork: true,
      }).finally(() => sends.stop());

      assert.equal(records.length, NAMES.length * PAGES_PER_HOST);
      assert.ok(records.every((record) => record.status === 200), 'every page fetched');
      assert.equal(site.exchanges.length, NAMES.length * PAGES_PER_HOST, 'each page requested once');
      for (const group of GROUPS[key]) {
        const times = group.flatMap((host) => sends.byHost.get(host) ?? []).sort((x, y) => x - y);
        assert.equal(times.length, group.length * PAGES_PER_HOST, `${group.join('+')}: every request seen`);
        const closest = Math.min(...gapsBetween(times));

        assert.ok(closest >= DELAY_MS - SEND_TOLERANCE_MS, `${group.join('+')} share a key: closest requests ${closest} ms apart, delay ${DELAY_MS}`);
        assert.equal(maxOverlap(site.exchanges, group), 1, `${group.join('+')}: one request at a time (perHostConcurrency 1)`);
      }
      assert.ok(maxOverlap(site.exchanges, NAMES) > 1, 'different keys are crawled at the same time');
    });
  }
});
