/**
 * What requests to a host look like: user agent, extra headers and cookies (the crawl's,
 * with the host's override over them), and the proxy they go through. Built once per crawl,
 * override and worker, so the per-page path only looks the answer up.
 *
 * Values named by `...FromEnv` settings are read here, from the worker's environment: they
 * never pass through workflow history. No value, and no secret, ever appears in an error.
 */
import type { CrawlConfig } from '../shared/crawl-config';
import { cookieValue, headerValue, type HostOverride } from '../shared/politeness-config';

export interface RequestProfile {
  /** The user agent robots.txt rules are matched against, also sent as User-Agent. */
  userAgent: string;
  /** Request headers with lower-case names: user-agent, the configured ones, cookie. */
  headers: Readonly<Record<string, string>>;
}

/** An HTTP proxy and its Proxy-Authorization value, if any. */
export interface ProxyRoute {
  url: string;
  authorization?: string;
}

export type Environment = Readonly<Record<string, string | undefined>>;

/** A `...FromEnv` setting names a variable the worker does not have (or one with an unusable value). */
export class RequestSecretError extends Error {
  readonly code = 'request-secret';
  constructor(
    readonly field: string,
    readonly variable: string,
    reason: string,
  ) {
    super(`${field}: environment variable ${variable} ${reason} on this worker`);
    this.name = 'RequestSecretError';
  }
}

function fromEnv(env: Environment, field: string, variable: string, valid: (value: string) => boolean): string {
  const value = env[variable];
  if (value === undefined || value === '') throw new RequestSecretError(field, variable, 'is not set');
  if (!valid(value)) throw new RequestSecretError(field, variable, 'holds a value that is not allowed here');
  return value;
}

const isHeaderValue = (value: string): boolean => headerValue.safeParse(value).success;
const isCookieValue = (value: string): boolean => cookieValue.safeParse(value).success;

type RequestSettings = Pick<HostOverride, 'headers' | 'headersFromEnv' | 'cookies' | 'cookiesFromEnv'>;

/** Adds one level's headers and cookies (the crawl's, then the host's) to the maps. */
function addLevel(level: RequestSettings, prefix: string, env: Environment, headers: Map<string, string>, cookies: Map<string, string>): void {
  for (const [name, value] of Object.entries(level.headers ?? {})) headers.set(name.toLowerCase(), value);
  for (const [name, variable] of Object.entries(level.headersFromEnv ?? {})) {
    headers.set(name.toLowerCase(), fromEnv(env, `${prefix}headersFromEnv.${name}`, variable, isHeaderValue));
  }
  for (const [name, value] of Object.entries(level.cookies ?? {})) cookies.set(name, value);
  for (const [name, variable] of Object.entries(level.cookiesFromEnv ?? {})) {
    cookies.set(name, fromEnv(env, `${prefix}cookiesFromEnv.${name}`, variable, isCookieValue));
  }
}

/**
 * The profile of requests to hosts without an override (`overrideKey` undefined), or to those
 * the `hosts` entry `overrideKey` applies to; throws RequestSecretError when a variable it
 * names is missing.
 */
export function requestProfile(config: CrawlConfig, overrideKey: string | undefined, env: Environment = process.env): RequestProfile {
  const override = overrideKey === undefined ? undefined : config.hosts[overrideKey];
  const userAgent = override?.userAgent ?? config.userAgent;
  const headers = new Map<string, string>([['user-agent', userAgent]]);
  const cookies = new Map<string, string>();
  addLevel(config, '', env, headers, cookies);
  if (override) addLevel(override, `hosts.${overrideKey}.`, env, headers, cookies);
  if (cookies.size > 0) headers.set('cookie', [...cookies].map(([name, value]) => `${name}=${value}`).join('; '));
  return { userAgent, headers: Object.fromEntries(headers) };
}

/** The crawl's proxy, with its credentials read from the environment; undefined without one. */
export function proxyRoute(config: Pick<CrawlConfig, 'proxy' | 'proxyAuthFromEnv'>, env: Environment = process.env): ProxyRoute | undefined {
  if (config.proxy === undefined) return undefined;
  if (config.proxyAuthFromEnv === undefined) return { url: config.proxy };
  const credentials = fromEnv(env, 'proxyAuthFromEnv', config.proxyAuthFromEnv, (value) => value.includes(':') && isHeaderValue(value));
  return { url: config.proxy, authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
}
