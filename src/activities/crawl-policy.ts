/**
 * What a crawl's config implies for every URL a batch meets: its scope and page rules, the
 * address guard, the extractor, render routing, the proxy, politeness keys and each host's
 * request profile. Built once per crawl and worker, and again when seeds are added.
 */
import type { CrawlConfig } from '../shared/crawl-config';
import type { FrontierStore } from '../store/frontier-store';
import type { HostOverride } from '../shared/politeness-config';
import { AddressGuard } from '../fetch/address-guard';
import type { Transport } from '../fetch/transport';
import type { StoreRegistry } from '../store/store-registry';
import { revalidatesEarlierRecords } from '../recrawl/revalidation';
import { proxyRoute, requestProfile, type HopHeaders, type ProxyRoute, type RequestProfile } from '../fetch/request-profile';
import { renderMatcher, type UrlMatcher } from '../policy/render-routing';
import { hostOverride, hostOverrideKey } from '../policy/host-overrides';
import { politenessKeys, type PolitenessKeys } from '../policy/politeness-key';
import type { Extractor } from '../parse/extract-fields';
import { loadExtractor } from '../parse/load-extractor';
import { buildPagePolicy, type PagePolicy } from './page-outcome';
import { seedFileScope } from './seed-scope';

/** A host's override and what requests to it look like. */
export interface HostRequests {
  override: HostOverride | undefined;
  profile: RequestProfile;
}

/** The entry of hosts without an override (no `hosts` key is empty). */
const NO_OVERRIDE = '';

/**
 * Every request profile of the crawl, by `hosts` key: as many as the config has, however many
 * hosts the crawl meets. Built up front, so a variable missing on this worker fails a batch at
 * once, never in the middle of a redirect; kept per key, so it fails only the batches of the
 * hosts whose requests need it.
 */
function requestsByOverride(config: CrawlConfig): (key: string) => HostRequests {
  const build = (key: string): HostRequests | Error => {
    const override = key === NO_OVERRIDE ? undefined : config.hosts[key];
    try {
      return { override, profile: requestProfile(config, override === undefined ? undefined : key) };
    } catch (err) {
      return err as Error;
    }
  };
  const requests = new Map<string, HostRequests | Error>([NO_OVERRIDE, ...Object.keys(config.hosts)].map((key) => [key, build(key)]));
  return (key) => {
    const requestsOf = requests.get(key)!;
    if (requestsOf instanceof Error) throw requestsOf;
    return requestsOf;
  };
}

export interface CrawlPolicy {
  page: PagePolicy;
  guard: AddressGuard;
  extractor: Extractor | undefined;
  /** A recrawl whose earlier crawl extracted with the same settings: it sends that crawl's validators (recrawl/revalidation.ts). */
  revalidates: boolean;
  /** Which discovered URLs are queued for rendering (`render.match`); null when the crawl renders nothing. */
  renders: UrlMatcher | null;
  proxy: ProxyRoute | undefined;
  /** Puts found URLs under their politeness keys and shards. */
  keys: PolitenessKeys;
  hostRequests(host: string): HostRequests;
  /** The override whose delay and concurrency apply to a politeness key. */
  pacingOverride(key: string): HostOverride | undefined;
  /** Asked on every redirect hop: each host gets its own headers and cookies. */
  headersFor(url: URL): HopHeaders;
}

/** One policy per crawl, rebuilt when seeds are added (they join the scope and the trusted seed addresses). */
export class CrawlPolicies {
  private readonly policies = new Map<string, CrawlPolicy & { seeds: number }>();

  constructor(
    private readonly transport: Transport,
    private readonly stores: StoreRegistry,
  ) {}

  async forCrawl(crawlId: string, config: CrawlConfig, store: FrontierStore): Promise<CrawlPolicy> {
    const known = this.policies.get(crawlId);
    if (known?.seeds === config.seeds.length) return known;
    const requests = requestsByOverride(config);
    const hostRequests = (host: string): HostRequests => requests(hostOverrideKey(config.hosts, host) ?? NO_OVERRIDE);
    const policy = {
      page: buildPagePolicy(config, await seedFileScope(store, config)),
      guard: AddressGuard.forCrawl(config),
      extractor: await loadExtractor(config.extract),
      revalidates: await revalidatesEarlierRecords(this.stores, config),
      renders: renderMatcher(config),
      proxy: proxyRoute(config),
      keys: politenessKeys(config, (hostname) => this.transport.resolve(hostname)),
      hostRequests,
      pacingOverride: (key: string) => hostOverride(config.hosts, key),
      headersFor: (url: URL) => hostRequests(url.host).profile,
      seeds: config.seeds.length,
    };
    this.policies.set(crawlId, policy);
    return policy;
  }
}
