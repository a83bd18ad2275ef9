/**
 * The one schema for a crawl's input. It is applied at every boundary (CLI flags, client
 * scripts, `temporal workflow start --input`) and carries the defaults, so the rest of the
 * code only ever sees a complete, valid `CrawlConfig`.
 */
import { z } from 'zod';
import { toMilliseconds } from './duration';
import { DEFAULT_NORMALIZE_RULES, TRAILING_SLASH_RULES } from '../policy/normalize-url';
import { compileUrlPattern, InvalidUrlPatternError } from '../policy/url-patterns';
import { MEDIA_RANGE } from '../policy/content-type';
import { contentFields } from './content-config';
import { DEFAULT_RENDER_TASK_QUEUE, DEFAULT_USER_AGENT } from './names';
import { politenessFields } from './politeness-config';

function parsedUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

const httpUrl = z
  .string()
  .refine((value) => ['http:', 'https:'].includes(parsedUrl(value)?.protocol ?? ''), 'must be an absolute http(s) URL')
  // Crawl input is kept in workflow history and logs: credentials must never get there.
  .refine((value) => !parsedUrl(value)?.username && !parsedUrl(value)?.password, 'must not contain credentials (user:password@)');

const duration = z
  .union([z.number(), z.string()])
  .transform((value, ctx) => {
    const ms = toMilliseconds(value);
    if (ms === undefined || ms <= 0) {
      ctx.addIssue({ code: 'custom', message: 'must be a positive duration such as 90s, 10m or 1h' });
      return z.NEVER;
    }
    return ms;
  });

const count = (min: number, max: number) => z.number().int().min(min).max(max);

/** One URL pattern (src/policy/url-patterns.ts), compiled here so a bad one is refused with its index. */
const urlPattern = z
  .string()
  .min(1)
  .max(2_048)
  .superRefine((pattern, ctx) => {
    try {
      compileUrlPattern(pattern);
    } catch (err) {
      if (!(err instanceof InvalidUrlPatternError)) throw err;
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(pattern)}: ${err.message}` });
    }
  });

/** Include/exclude patterns. */
const urlPatterns = z.array(urlPattern).max(1_000).default([]);

/** Discovery and scope settings (docs/discovery-and-scope.md). */
const discoveryFields = {
  /** Globs/regexes a followed URL must match one of (empty: all); seeds are exempt. */
  include: urlPatterns,
  /** Globs/regexes no followed URL may match; seeds are exempt. */
  exclude: urlPatterns,
  /** How URLs are normalized into frontier keys (src/policy/normalize-url.ts). */
  normalize: z
    .object({
      removeFragment: z.boolean().default(DEFAULT_NORMALIZE_RULES.removeFragment),
      trailingSlash: z.enum(TRAILING_SLASH_RULES).default(DEFAULT_NORMALIZE_RULES.trailingSlash),
      stripParams: z.array(z.string().min(1).max(200)).max(200).default([...DEFAULT_NORMALIZE_RULES.stripParams]),
      sortQuery: z.boolean().default(DEFAULT_NORMALIZE_RULES.sortQuery),
      lowercasePath: z.boolean().default(DEFAULT_NORMALIZE_RULES.lowercasePath),
    })
    .strict()
    .prefault({}),
  /** A page whose rel=canonical names another followable URL is recorded as its duplicate, and that URL is queued instead. */
  respectCanonical: z.boolean().default(true),
  /** Media types kept; a successful response of another type is recorded as skipped (`content-type`), its body never read. */
  allowedContentTypes: z
    .array(z.string().regex(MEDIA_RANGE, 'must be a media type such as text/html, or type/*'))
    .min(1, 'needs at least one media type')
    .max(100)
    .default(['text/html', 'application/xhtml+xml']),
  /** Sitemaps as a source of URLs, read once when the crawl starts. */
  sitemaps: z
    .object({
      /** Sitemap (or sitemap index) URLs, XML or gzipped XML. */
      urls: z.array(httpUrl).max(1_000).default([]),
      /** Also read the `Sitemap:` lines of the seed hosts' robots.txt. */
      fromRobots: z.boolean().default(false),
      /** URLs taken from all sitemaps together, at most. */
      maxUrls: count(1, 10_000_000).default(50_000),
      /** Sitemap files fetched, at most (indexes included). */
      maxFiles: count(1, 10_000).default(100),
      /** Levels of sitemap indexes followed: 1 is an index of sitemaps, 0 ignores indexes. */
      maxIndexDepth: count(0, 5).default(2),
    })
    .strict()
    .prefault({}),
};

export const RENDER_WAIT_UNTIL = ['load', 'domcontentloaded', 'networkidle'] as const;

/** Pages rendered in headless Chromium by render workers (see docs/rendering.md). */
const renderSchema = z
  .object({
    /** URLs (as queued, normalized) rendered instead of only fetched: the same patterns as `include`. */
    match: z.array(urlPattern, { error: 'needs at least one URL pattern' }).min(1, 'needs at least one URL pattern').max(100),
    /** When a rendered page counts as loaded. */
    waitUntil: z.enum(RENDER_WAIT_UNTIL).default('load'),
    /** Time for the browser to load and run one page, on top of fetching its HTML. */
    timeoutMs: count(1_000, 600_000).default(30_000),
    /** The task queue render batches are scheduled on (polled by `crawlflow render-worker`). */
    taskQueue: z.string().min(1).max(200).default(DEFAULT_RENDER_TASK_QUEUE),
    /** Pages of this crawl rendered at once, across all render workers (render batches in flight). */
    maxConcurrentPages: count(1, 256).default(2),
    /** Subresource requests (scripts, XHR/fetch, frames) one rendered page may make; more are blocked. */
    maxRequestsPerPage: count(0, 10_000).default(100),
  })
  .strict();
export type RenderConfig = z.output<typeof renderSchema>;

export const SCOPES = ['host', 'domain', 'prefix', 'any'] as const;

/**
 * The order a host's URLs are fetched in: by OPIC importance (a page's outlinks share its
 * priority, and a URL's priority is what its in-links gave it), or breadth-first (discovery order).
 */
export const FRONTIER_ORDERS = ['opic', 'breadth-first'] as const;
export type FrontierOrder = (typeof FRONTIER_ORDERS)[number];
export type Scope = (typeof SCOPES)[number];

/** The limits a running crawl may change (`setLimits`), without defaults: absent means unchanged. */
const limitFields = {
  /** Batches (each one connection's worth of sequential requests) in flight for the whole crawl. */
  concurrency: count(1, 512),
  /** Batches in flight per host, across all workers. */
  perHostConcurrency: count(1, 64),
  /** Minimum gap between two requests to one host, across all workers. */
  delayMs: count(0, 3_600_000),
};

export const crawlConfigSchema = z
  .object({
    seeds: z.array(httpUrl, { error: 'needs at least one seed URL' }).min(1, 'needs at least one seed URL'),
    scope: z.enum(SCOPES).default('host'),
    maxPages: count(1, 100_000_000).default(10_000),
    maxDepth: count(0, 1_000).default(20),
    frontierOrder: z.enum(FRONTIER_ORDERS).default('opic'),
    concurrency: limitFields.concurrency.default(8),
    /**
     * Shard workflows the crawl runs as, each owning the politeness keys that hash to it
     * (src/scheduling/shards.ts); maxPages and concurrency are split between them.
     */
    shards: count(1, 64).default(1),
    perHostConcurrency: limitFields.perHostConcurrency.default(2),
    delayMs: limitFields.delayMs.default(0),
    /** Total time for one request, from connect to the last body byte. */
    timeoutMs: count(100, 600_000).default(30_000),
    /** Wall-clock budget of the whole crawl; unset means none. */
    deadline: duration.optional(),
    respectRobots: z.boolean().default(true),
    /** Upper bound on a robots.txt Crawl-delay we honour, so a hostile value cannot stall a crawl. */
    maxCrawlDelayMs: count(0, 3_600_000).default(30_000),
    /** Upper bound on an honoured Retry-After, so a date years ahead cannot park a host forever. */
    maxRetryAfterMs: count(0, 86_400_000).default(3_600_000),
    userAgent: z.string().min(1).max(512).default(DEFAULT_USER_AGENT),
    maxBodyBytes: count(1_024, 1_073_741_824).default(5 * 1024 * 1024),
    maxRedirects: count(0, 50).default(5),
    maxLinksPerPage: count(0, 1_000_000).default(5_000),
    maxUrlLength: count(16, 65_536).default(2_048),
    /** URLs one batch activity claims and fetches before it reports back. */
    batchSize: count(1, 2_000).default(50),
    /** Retries of one URL after a retryable failure (timeout, reset, 5xx), with backoff. */
    maxRetries: count(0, 10).default(2),
    /**
     * URLs of one host fetched at most, across all workers: a bound on infinite URL spaces
     * (calendars, session IDs) that depth and URL length alone do not stop. URLs past it are
     * recorded as skipped (`host-page-cap`).
     */
    maxPagesPerHost: count(1, 100_000_000).default(100_000),
    /**
     * Fetch private, loopback, link-local and other non-public addresses. Off by default, so
     * links and redirects cannot reach internal services; a seed whose host is such an
     * address allows that address only.
     */
    allowPrivateNetwork: z.boolean().default(false),
    ...discoveryFields,
    /** Extraction, body storage and incremental recrawl: see content-config.ts. */
    ...contentFields,
    /** Unset: no page is rendered. */
    render: renderSchema.optional(),
    /** Backoff, AutoThrottle, headers, cookies, proxy, per-host overrides (politeness-config.ts). */
    ...politenessFields,
  })
  .strict();

/** What a user writes: every field but `seeds` optional. */
export type CrawlInput = z.input<typeof crawlConfigSchema>;
/** What the code uses: defaults applied, durations in milliseconds. */
export type CrawlConfig = z.output<typeof crawlConfigSchema>;

/** The code of an invalid crawl input, wherever it is found. */
export const INVALID_CONFIG = 'invalid-config';

export class InvalidCrawlConfigError extends Error {
  readonly code = INVALID_CONFIG;
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`invalid crawl config: ${field}: ${reason}`);
    this.name = 'InvalidCrawlConfigError';
  }
}

const limitsChangeSchema = z.object(limitFields).partial().strict();
export type CrawlLimits = Required<z.output<typeof limitsChangeSchema>>;

/** Validates a partial limits change; the first problem is reported with its field. */
export function parseLimitsChange(input: unknown): Partial<CrawlLimits> {
  return firstIssueOr(limitsChangeSchema.safeParse(input));
}

/** Validates URLs given to `addSeeds` with the same rule as seeds. */
export function parseSeeds(input: unknown): string[] {
  return firstIssueOr(crawlConfigSchema.shape.seeds.max(1_000, 'at most 1000 URLs at once').safeParse(input), 'seeds');
}

function firstIssueOr<T>(result: z.ZodSafeParseResult<T>, prefix?: string): T {
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  const path = [prefix, ...issue.path].filter((part) => part !== undefined).join('.');
  // An unknown key is named with its path (`render.mach`), so nested typos are found.
  const unknown = issue.code === 'unrecognized_keys' ? issue.keys.map((key) => (path ? `${path}.${key}` : key)).join(', ') : undefined;
  const field = unknown ?? (path || 'input');
  throw new InvalidCrawlConfigError(field, issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message);
}

/** Validates once, at the boundary; the first problem is reported with the field it concerns. */
export function parseCrawlConfig(input: unknown): CrawlConfig {
  return firstIssueOr(crawlConfigSchema.safeParse(input));
}
