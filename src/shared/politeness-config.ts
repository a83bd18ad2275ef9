/**
 * The crawl settings for politeness and requests: exponential backoff per host, AutoThrottle,
 * request headers and cookies, an HTTP proxy, and per-host overrides of all of them. Part of
 * the one crawl schema (`crawl-config.ts` spreads `politenessFields` into it); pure zod, so
 * the workflow may import it.
 *
 * Secrets: crawl input is stored in workflow history (and shown by the Web UI), so every
 * secret-bearing setting has a `...FromEnv` twin that names an environment variable of the
 * workers instead; only the variable's name enters history.
 */
import { z } from 'zod';
import { setting } from './setting-meta';

const millis = (max: number) => z.number().int().min(0).max(max);

/** RFC 9110 token: what a header (or cookie) name may be. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Headers a crawl may not set: hop-by-hop fields (RFC 9110 section 7.6.1) belong to one
 * connection, not to the request; Host and Content-Length are the transport's; the rest have
 * their own setting (User-Agent: `userAgent`, Cookie: `cookies`) or would break decoding
 * (Accept-Encoding: the body reader knows gzip, deflate and br only).
 */
const RESERVED_HEADERS: Readonly<Record<string, string>> = {
  connection: 'is hop-by-hop',
  'keep-alive': 'is hop-by-hop',
  'proxy-connection': 'is hop-by-hop',
  'proxy-authenticate': 'is hop-by-hop',
  'proxy-authorization': 'is hop-by-hop (use proxyAuthFromEnv)',
  te: 'is hop-by-hop',
  trailer: 'is hop-by-hop',
  'transfer-encoding': 'is hop-by-hop',
  upgrade: 'is hop-by-hop',
  host: 'is set by the transport',
  'content-length': 'is set by the transport',
  'accept-encoding': 'is set by the crawler (it decodes gzip, deflate and br)',
  'user-agent': 'has its own setting: userAgent',
  cookie: 'has its own setting: cookies',
};

/** A header value: no line breaks or NUL (header injection), bounded. */
export const headerValue = z
  .string()
  .max(8_192)
  .refine((value) => !/[\r\n\0]/.test(value), 'must not contain CR, LF or NUL');

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const envName = z.string().regex(ENV_NAME, 'must be an environment variable name (letters, digits, _)');

/** A record keyed by header names, each checked; errors name the offending key. */
function headerRecord<V extends z.ZodType<string>>(value: V) {
  return z.record(z.string(), value).superRefine((headers, ctx) => {
    const seen = new Set<string>();
    for (const name of Object.keys(headers)) {
      const lower = name.toLowerCase();
      const problem = !TOKEN.test(name)
        ? 'is not a valid header name'
        : RESERVED_HEADERS[lower] !== undefined
          ? `may not be set: it ${RESERVED_HEADERS[lower]}`
          : seen.has(lower)
            ? 'is given twice (header names are case-insensitive)'
            : undefined;
      seen.add(lower);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: `header ${problem}` });
    }
  });
}

/** RFC 6265 cookie-octets: no whitespace, quotes, commas, semicolons or backslashes. */
const COOKIE_VALUE = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*$/;

function cookieRecord<V extends z.ZodType<string>>(value: V) {
  return z.record(z.string(), value).superRefine((cookies, ctx) => {
    for (const name of Object.keys(cookies)) {
      if (!TOKEN.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'is not a valid cookie name' });
    }
  });
}

export const cookieValue = z.string().max(4_096).regex(COOKIE_VALUE, 'must be a cookie value (no spaces, quotes, commas, semicolons or backslashes)');

/** What a request looks like; set for the whole crawl, and again per host. */
const requestFields = {
  /** Extra request headers, by name. */
  headers: headerRecord(headerValue),
  /** Extra request headers whose values are read from the workers' environment: name -> variable. */
  headersFromEnv: headerRecord(envName),
  /** Cookies sent with every request: name -> value. */
  cookies: cookieRecord(cookieValue),
  /** Cookies whose values are read from the workers' environment: name -> variable. */
  cookiesFromEnv: cookieRecord(envName),
};

/** Per-host settings; absent fields fall back to the crawl's. Each says what it means for the docs' table (config-docs.ts). */
export const hostOverrideSchema = z
  .object({
    delayMs: millis(3_600_000).describe("the host's minimum delay, instead of `delayMs`"),
    perHostConcurrency: z.number().int().min(1).max(64).describe("the host's batches in flight, instead of `perHostConcurrency`"),
    userAgent: z.string().min(1).max(512).describe('User-Agent (and robots.txt agent) for the host'),
    headers: requestFields.headers.describe("merged over the crawl's `headers` (names case-insensitive; the host's win)"),
    headersFromEnv: requestFields.headersFromEnv.describe("merged over the crawl's `headersFromEnv` the same way; values read from the workers' environment"),
    cookies: requestFields.cookies.describe("merged over the crawl's `cookies` by name"),
    cookiesFromEnv: requestFields.cookiesFromEnv.describe("merged over the crawl's `cookiesFromEnv` by name; values read from the workers' environment"),
  })
  .partial()
  .strict();

export type HostOverride = z.output<typeof hostOverrideSchema>;

/**
 * A `hosts` key: a host as URLs spell it (lower case, port only when not the default), or
 * `*.` and a domain for every host under it.
 */
function hostPatternProblem(pattern: string): string | undefined {
  const bare = pattern.startsWith('*.') ? pattern.slice(2) : pattern;
  let host: string;
  try {
    host = new URL(`http://${bare}/`).host;
  } catch {
    return 'is not a host name';
  }
  if (host !== bare || bare.includes('*')) return `must be written as URLs spell the host (${host}), or *.domain`;
  return undefined;
}

const hostOverrides = z.record(z.string(), hostOverrideSchema).superRefine((hosts, ctx) => {
  for (const pattern of Object.keys(hosts)) {
    const problem = hostPatternProblem(pattern);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: [pattern], message: `host key ${problem}` });
  }
});

/** An HTTP proxy: http(s)://host:port, nothing else (credentials come from `proxyAuthFromEnv`). */
const proxyUrl = z.string().superRefine((value, ctx) => {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  const problem =
    url === undefined || !['http:', 'https:'].includes(url.protocol)
      ? 'must be an http(s) URL such as http://proxy.internal:3128'
      : url.username || url.password
        ? 'must not contain credentials (user:password@): use proxyAuthFromEnv'
        : url.pathname !== '/' || url.search || url.hash
          ? 'must be scheme://host:port only'
          : undefined;
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

const backoffSchema = z
  .object({
    baseMs: setting(millis(3_600_000).default(500), {
      flag: '--backoff-base-ms <ms>',
      help: "delay after a host's first failure, doubled per failure in a row; 0 = off",
      doc: "Wait after a host's first failure in a row; doubles per further failure; `0` turns backoff off.",
    }),
    maxMs: setting(millis(86_400_000).default(60_000), {
      flag: '--backoff-max-ms <ms>',
      help: 'longest per-host backoff delay',
      doc: 'Longest backoff wait (must be ≥ `baseMs`).',
    }),
  })
  .strict()
  .refine((backoff) => backoff.maxMs >= backoff.baseMs, { message: 'maxMs must be at least baseMs', path: ['maxMs'] });

const autoThrottleSchema = z
  .object({
    enabled: setting(z.boolean().default(false), {
      flag: '--auto-throttle',
      help: "adapt each host's delay to its measured latency (AutoThrottle)",
      doc: "Adapt each host's delay to its latency.",
    }),
    targetConcurrency: setting(z.number().positive().max(64).default(1), {
      flag: '--auto-throttle-target <n>',
      help: 'AutoThrottle: requests in flight per host to aim for',
      doc: "Requests in flight per host to aim for, on average (Scrapy's `AUTOTHROTTLE_TARGET_CONCURRENCY`).",
    }),
    startDelayMs: setting(millis(3_600_000).default(5_000), { doc: "A host's delay before its first measured response." }),
    maxDelayMs: setting(millis(3_600_000).default(60_000), {
      flag: '--auto-throttle-max-delay-ms <ms>',
      help: 'AutoThrottle: the largest delay it sets',
      doc: 'The largest delay AutoThrottle sets.',
    }),
  })
  .strict();

/**
 * What politeness is counted per: the host name (with its port), the registrable domain (ICANN
 * part of the Public Suffix List: `a.example.co.uk` and `b.example.co.uk` share one key), or the
 * IP address the host resolves to (thousands of shared-hosting names on one server share one).
 */
export const POLITENESS_KEYS = ['host', 'domain', 'ip'] as const;
export type PolitenessKeyKind = (typeof POLITENESS_KEYS)[number];

/** Spread into the crawl schema. */
export const politenessFields = {
  politenessKey: setting(z.enum(POLITENESS_KEYS).default('host'), {
    section: 'politeness',
    flag: '--politeness-key <key>',
    help: 'what delays, concurrency and the per-host cap count per',
    doc:
      'What the gap (`delayMs`, Crawl-delay, Retry-After, backoff), `perHostConcurrency` and `maxPagesPerHost` count per: a host; a registrable ' +
      'domain (ICANN suffixes only, so all of `*.github.io` is one key, where scope `domain` keeps them apart); or the address a host resolves to, ' +
      'so thousands of shared-hosting names on one server share one key. See [politeness-and-requests.md](politeness-and-requests.md#what-a-host-is-the-politeness-key).',
  }),
  backoff: setting(backoffSchema.prefault({}), { section: 'politeness' }),
  autoThrottle: setting(autoThrottleSchema.prefault({}), { section: 'politeness' }),
  headers: setting(requestFields.headers.default({}), {
    section: 'politeness',
    flag: '--header <Name: value>',
    help: 'extra request header; it is stored in workflow history, so use headersFromEnv for secrets',
    type: 'object name → value',
    doc: 'Extra request headers.',
  }),
  headersFromEnv: setting(requestFields.headersFromEnv.default({}), {
    section: 'politeness',
    type: 'object name → env var',
    doc: 'Extra headers whose values the workers read from their environment.',
  }),
  cookies: setting(requestFields.cookies.default({}), {
    section: 'politeness',
    flag: '--cookie <name=value>',
    help: 'cookie sent with every request; it is stored in workflow history, so use cookiesFromEnv for secrets',
    type: 'object name → value',
    doc: 'Cookies sent with every request (one `Cookie` header).',
  }),
  cookiesFromEnv: setting(requestFields.cookiesFromEnv.default({}), {
    section: 'politeness',
    type: 'object name → env var',
    doc: 'Cookies whose values the workers read from their environment.',
  }),
  proxy: setting(proxyUrl.optional(), {
    section: 'politeness',
    flag: '--proxy <url>',
    help: 'send every request through this HTTP proxy, e.g. http://proxy.internal:3128',
    type: '`http(s)://host:port`',
    doc: 'HTTP proxy every request goes through (CONNECT tunnels, for http and https targets).',
  }),
  proxyAuthFromEnv: setting(envName.optional(), {
    section: 'politeness',
    flag: '--proxy-auth-env <VAR>',
    help: "environment variable of the workers holding the proxy's user:password",
    type: 'env var name',
    doc: "Variable holding the proxy's `user:password` (sent as Basic Proxy-Authorization).",
  }),
  hosts: setting(hostOverrides.default({}), {
    section: 'politeness',
    type: 'object host → override',
    doc: 'Per-host overrides, keyed by host[:port] or `*.domain`: [below](#per-host-overrides).',
  }),
};
