/**
 * The transport: one GET, nothing else. Redirects, caps, decoding and policy live above it,
 * so tests (and a future proxy) can swap it without touching them.
 *
 * It is also where the address guard is enforced, because only the transport sees the
 * addresses a connection really goes to. Each guard policy gets its own undici Agent, whose
 * connector resolves the host name itself, checks every answer, and then connects to a
 * checked address, never to the name, so a second DNS answer (rebinding) cannot slip past
 * the check. Redirect hops are requests like any other, so each one is checked too.
 *
 * Through a proxy (undici's ProxyAgent, CONNECT tunnels for http and https targets alike) the
 * proxy opens the connection to the target, so the guard checks the target before the request
 * is handed to the proxy: a literal address exactly, a name by resolving it here and checking
 * every answer. The proxy resolves the name again itself; an operator who needs that second
 * lookup closed must make the proxy enforce its own egress policy. The proxy's own address is
 * operator configuration and is not checked.
 */
import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector, ProxyAgent, type Dispatcher } from 'undici';
import type { AddressGuard } from './address-guard';
import { ResponseHandler } from './response-handler';
import type { RequestStop, TransportResponse } from './response';
import type { ProxyRoute } from './request-profile';

export interface Transport {
  /**
   * `guard` decides which addresses this request may connect to, on every hop; `proxy` routes it
   * through a proxy; `onSent` is told when the request goes out (its connection ready, its
   * headers about to be written), the moment a site sees as its start.
   */
  get(url: URL, headers: Record<string, string>, stop: RequestStop, guard: AddressGuard, proxy?: ProxyRoute, onSent?: OnSent): Promise<TransportResponse>;
  /** What `hostname` resolves to, by the resolver this transport's connections use (politeness by IP asks it). */
  resolve: LookupAll;
  close(): Promise<void>;
}

export type OnSent = (url: URL, sentAt: number) => void;

/** Every address a name resolves to. */
export type LookupAll = (hostname: string) => Promise<ReadonlyArray<{ address: string }>>;

const systemLookup: LookupAll = (hostname) => dns.lookup(hostname, { all: true });

export interface UndiciTransportOptions {
  connectTimeoutMs: number;
  /** Time to the response headers, and the longest silence while the body streams. */
  idleTimeoutMs: number;
  connectionsPerOrigin: number;
  /** Name resolution for guarded requests; the system resolver unless a test stubs it. */
  lookup?: LookupAll;
  /** Opens the socket to an already checked address; a test seam, undici's connector otherwise. */
  connect?: buildConnector.connector;
}

async function checkedAddresses(hostname: string, guard: AddressGuard, lookup: LookupAll): Promise<string[]> {
  const addresses = isIP(hostname) ? [hostname] : (await lookup(hostname)).map((answer) => answer.address);
  if (addresses.length === 0) throw Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' });
  // Every answer, not only the one we would use: a name that mixes public and private
  // answers is what a rebinding attack looks like.
  for (const address of addresses) guard.check(hostname, address);
  return addresses;
}

/** Tries the checked addresses in the resolver's order until one connects. */
function connectToFirst(
  connect: buildConnector.connector,
  options: buildConnector.Options,
  addresses: readonly string[],
  callback: buildConnector.Callback,
): void {
  const [address, ...rest] = addresses;
  // `host` stays the name, so TLS still sends and verifies it as the server name.
  connect({ ...options, hostname: address }, (...result) => {
    if (result[0] !== null && rest.length > 0) connectToFirst(connect, options, rest, callback);
    else callback(...result);
  });
}

function guardedConnector(guard: AddressGuard, lookup: LookupAll, connect: buildConnector.connector): buildConnector.connector {
  return (options, callback) => {
    checkedAddresses(options.hostname, guard, lookup).then(
      (addresses) => connectToFirst(connect, options, addresses, callback),
      (err: Error) => callback(err, null),
    );
  };
}

export class UndiciTransport implements Transport {
  /** One Agent per guard policy; a worker sees a handful (open, public-only, a few seed sets). */
  private readonly agents = new Map<string, Dispatcher>();
  /** One ProxyAgent per proxy and credentials. */
  private readonly proxyAgents = new Map<string, Dispatcher>();
  private readonly connect: buildConnector.connector;
  private readonly lookup: LookupAll;

  constructor(private readonly options: UndiciTransportOptions) {
    this.connect = options.connect ?? buildConnector({ timeout: options.connectTimeoutMs });
    this.lookup = options.lookup ?? systemLookup;
  }

  resolve(hostname: string): ReturnType<LookupAll> {
    return this.lookup(hostname);
  }

  private agentFor(guard: AddressGuard): Dispatcher {
    let agent = this.agents.get(guard.key);
    if (!agent) {
      agent = new Agent({
        connect: guard.checksAddresses ? guardedConnector(guard, this.lookup, this.connect) : this.connect,
        headersTimeout: this.options.idleTimeoutMs,
        bodyTimeout: this.options.idleTimeoutMs,
        keepAliveTimeout: 10_000,
        connections: this.options.connectionsPerOrigin,
      });
      this.agents.set(guard.key, agent);
    }
    return agent;
  }

  private proxyAgentFor(proxy: ProxyRoute): Dispatcher {
    const key = `${proxy.url}\n${proxy.authorization ?? ''}`;
    let agent = this.proxyAgents.get(key);
    if (!agent) {
      agent = new ProxyAgent({
        uri: proxy.url,
        token: proxy.authorization,
        headersTimeout: this.options.idleTimeoutMs,
        bodyTimeout: this.options.idleTimeoutMs,
        keepAliveTimeout: 10_000,
        connections: this.options.connectionsPerOrigin,
      });
      this.proxyAgents.set(key, agent);
    }
    return agent;
  }

  /** The proxy's agent, once the guard has checked the target (the proxy connects to it, not us). */
  private async proxyDispatcherFor(url: URL, guard: AddressGuard, proxy: ProxyRoute): Promise<Dispatcher> {
    if (guard.checksAddresses) await checkedAddresses(url.hostname.replace(/^\[(.*)\]$/, '$1'), guard, this.lookup);
    return this.proxyAgentFor(proxy);
  }

  get(url: URL, headers: Record<string, string>, stop: RequestStop, guard: AddressGuard, proxy?: ProxyRoute, onSent?: OnSent): Promise<TransportResponse> {
    // Without a proxy the agent is at hand: taken without an await, it costs no promise per request.
    if (proxy === undefined) return this.dispatch(this.agentFor(guard), url, headers, stop, onSent);
    return this.proxyDispatcherFor(url, guard, proxy).then((dispatcher) => this.dispatch(dispatcher, url, headers, stop, onSent));
  }

  private dispatch(dispatcher: Dispatcher, url: URL, headers: Record<string, string>, stop: RequestStop, onSent: OnSent | undefined): Promise<TransportResponse> {
    return new Promise((resolve, reject) => {
      const handler = new ResponseHandler({ resolve, reject }, stop, onSent && (() => onSent(url, Date.now())));
      dispatcher.dispatch({ origin: url.origin, path: url.pathname + url.search, method: 'GET', headers }, handler);
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values(), ...this.proxyAgents.values()].map((agent) => agent.close()));
  }
}
