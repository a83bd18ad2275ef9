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
  /**
   * The same headers, in the same order, as a WARC request record keeps them: secret values
   * replaced by `[redacted]` (see `recordedValue`). Built with the profile, once.
   */
  recordedHeaders: Readonly<Record<string, string>>;
}

/** The headers a request to one host adds, as sent and as recorded. */
export type HopHeaders = Pick<RequestProfile, 'headers' | 'recordedHeaders'>;

/** What stands for a secret value in a stored request record: the marker FetchError messages use. */
export const REDACTED = '[redacted]';

/**
 * Headers whose value is a credential by HTTP's definition (RFC 9110, section 11.6.2), recorded
 * redacted wherever the value came from: a WARC file is made to be handed on, to an archive or
 * a replay service, and a token written inline in `headers` is no less a token there.
 */
const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization']);

/** A header or cookie value, and whether it is secret (read from the environment). */
interface Value {
  value: string;
  secret: boolean;
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
function addLevel(level: RequestSettings, prefix: string, env: Environment, headers: Map<string, Value>, cookies: Map<string, Value>): void {
  for (const [name, value] of Object.entries(level.headers ?? {})) headers.set(name.toLowerCase(), { value, secret: false });
  for (const [name, variable] of Object.entries(level.headersFromEnv ?? {})) {
    headers.set(name.toLowerCase(), { value: fromEnv(env, `${prefix}headersFromEnv.${name}`, variable, isHeaderValue), secret: true });
  }
  for (const [name, value] of Object.entries(level.cookies ?? {})) cookies.set(name, { value, secret: false });
  for (const [name, variable] of Object.entries(level.cookiesFromEnv ?? {})) {
    cookies.set(name, { value: fromEnv(env, `${prefix}cookiesFromEnv.${name}`, variable, isCookieValue), secret: true });
  }
}

/**
 * A value as a stored request record keeps it. Values read from the environment (`headersFromEnv`,
 * `cookiesFromEnv`) are secrets the crawl keeps out of history, logs and records, so out of the
 * WARC file too; a credential header is redacted whatever its origin. The name stays, so the
 * record still says what was sent.
 */
function recordedValue(name: string, { value, secret }: Value): string {
  return secret || CREDENTIAL_HEADERS.has(name) ? REDACTED : value;
}

/** The Cookie header: each cookie as sent, or as recorded (a secret cookie's value redacted, its name kept). */
function cookieHeader(cookies: Map<string, Value>, recorded: boolean): string {
  return [...cookies].map(([name, cookie]) => `${name}=${recorded && cookie.secret ? REDACTED : cookie.value}`).join('; ');
}

/**
 * The profile of requests to hosts without an override (`overrideKey` undefined), or to those
 * the `hosts` entry `overrideKey` applies to; throws RequestSecretError when a variable it
 * names is missing.
 */
export function requestProfile(config: CrawlConfig, overrideKey: string | undefined, env: Environment = process.env): RequestProfile {
  const override = overrideKey === undefined ? undefined : config.hosts[overrideKey];
  const userAgent = override?.userAgent ?? config.userAgent;
  const headers = new Map<string, Value>([['user-agent', { value: userAgent, secret: false }]]);
  const cookies = new Map<string, Value>();
  addLevel(config, '', env, headers, cookies);
  if (override) addLevel(override, `hosts.${overrideKey}.`, env, headers, cookies);
  const entries = [...headers];
  const sent = entries.map(([name, header]): [string, string] => [name, header.value]);
  const recorded = entries.map(([name, header]): [string, string] => [name, recordedValue(name, header)]);
  if (cookies.size > 0) {
    sent.push(['cookie', cookieHeader(cookies, false)]);
    recorded.push(['cookie', cookieHeader(cookies, true)]);
  }
  return { userAgent, headers: Object.fromEntries(sent), recordedHeaders: Object.fromEntries(recorded) };
}

/** The crawl's proxy, with its credentials read from the environment; undefined without one. */
export function proxyRoute(config: Pick<CrawlConfig, 'proxy' | 'proxyAuthFromEnv'>, env: Environment = process.env): ProxyRoute | undefined {
  if (config.proxy === undefined) return undefined;
  if (config.proxyAuthFromEnv === undefined) return { url: config.proxy };
  const credentials = fromEnv(env, 'proxyAuthFromEnv', config.proxyAuthFromEnv, (value) => value.includes(':') && isHeaderValue(value));
  return { url: config.proxy, authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
}
