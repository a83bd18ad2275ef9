/**
 * The one schema for a crawl's input. It is applied at every boundary (CLI flags, client
 * scripts, `temporal workflow start --input`) and carries the defaults, so the rest of the
 * code only ever sees a complete, valid `CrawlConfig`. Each setting also carries its CLI flag,
 * `--help` line and docs wording (`setting()`, src/shared/setting-meta.ts, says how).
 */
import { z } from 'zod';
import { toMilliseconds } from './duration';
import { DEFAULT_NORMALIZE_RULES, TRAILING_SLASH_RULES } from '../policy/normalize-url';
import { compileUrlPattern, InvalidUrlPatternError } from '../policy/url-patterns';
import { MEDIA_RANGE } from '../policy/content-type';
import { contentFields } from './content-config';
import { DEFAULT_RENDER_TASK_QUEUE, DEFAULT_USER_AGENT } from './names';
import { politenessFields } from './politeness-config';
import { setting } from './setting-meta';

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
  include: setting(urlPatterns, {
    section: 'discovery',
    flag: '--include <pattern>',
    help: 'follow only URLs matching one of these globs (/path/**, https://host/**) or re:<regex>',
    type: 'pattern[]',
    doc: 'A followed URL must match at least one (none given: every URL may be followed). Seeds are exempt.',
  }),
  exclude: setting(urlPatterns, {
    section: 'discovery',
    flag: '--exclude <pattern>',
    help: 'never follow URLs matching this glob or re:<regex>',
    type: 'pattern[]',
    doc: 'A followed URL may match none. Checked before `include`. Seeds are exempt.',
  }),
  normalize: setting(
    z
      .object({
        removeFragment: setting(z.boolean().default(DEFAULT_NORMALIZE_RULES.removeFragment), {
          doc: 'Drop `#fragment`. Keep it (`false`) only for sites that route on it.',
        }),
        trailingSlash: setting(z.enum(TRAILING_SLASH_RULES).default(DEFAULT_NORMALIZE_RULES.trailingSlash), {
          flag: '--trailing-slash <rule>',
          help: 'trailing slashes in paths',
          doc: '`strip`: `/a/` → `/a`; `add`: `/a` → `/a/` (not when the last segment has a dot, `/a.html`); the root stays `/`.',
        }),
        stripParams: setting(z.array(z.string().min(1).max(200)).max(200).default([...DEFAULT_NORMALIZE_RULES.stripParams]), {
          flag: '--strip-param <glob>',
          help: 'query parameter to drop from URLs, e.g. utm_*',
          type: 'glob[] (parameter names, case-insensitive)',
          doc: 'Query parameters removed. `[]` keeps every parameter.',
        }),
        sortQuery: setting(z.boolean().default(DEFAULT_NORMALIZE_RULES.sortQuery), {
          flag: '--sort-query',
          help: 'sort query parameters by name, so their order does not make URLs distinct',
          doc: 'Sort query parameters by name (stable: repeated names keep their order).',
        }),
        lowercasePath: setting(z.boolean().default(DEFAULT_NORMALIZE_RULES.lowercasePath), {
          doc: 'Lower-case the path, for servers with case-insensitive paths.',
        }),
      })
      .strict()
      .prefault({}),
    // How URLs become frontier keys (src/policy/normalize-url.ts).
    { section: 'discovery' },
  ),
  respectCanonical: setting(z.boolean().default(true), {
    section: 'discovery',
    flag: '--ignore-canonical',
    flagSets: false,
    help: 'do not treat pages whose rel=canonical names another URL as duplicates',
    doc: 'Pages whose `<link rel=canonical>` names another followable URL are recorded as its duplicates, and that URL is queued instead.',
  }),
  allowedContentTypes: setting(
    z
      .array(z.string().regex(MEDIA_RANGE, 'must be a media type such as text/html, or type/*'))
      .min(1, 'needs at least one media type')
      .max(100)
      .default(['text/html', 'application/xhtml+xml']),
    {
      section: 'discovery',
      flag: '--allowed-content-type <type>',
      help: 'media type to keep, e.g. text/html or text/*',
      type: 'media type[] (`type/subtype` or `type/*`)',
      doc:
        'A successful (2xx) response of another type is recorded `skipped: "content-type"` and its body is not read: ' +
        'the connection is dropped after the headers.',
    },
  ),
  sitemaps: setting(
    z
      .object({
        urls: setting(z.array(httpUrl).max(1_000).default([]), {
          flag: '--sitemap <url>',
          help: 'read this sitemap or sitemap index (XML or .xml.gz) for URLs when the crawl starts',
          type: 'URL[]',
          doc: 'Sitemaps or sitemap indexes (XML or gzipped XML) to read when the crawl starts.',
        }),
        fromRobots: setting(z.boolean().default(false), {
          flag: '--sitemaps-from-robots',
          help: "also read the sitemaps the seed hosts' robots.txt lists",
          doc: "Also read the `Sitemap:` lines of each seed origin's robots.txt (fetched even when `respectRobots` is false).",
        }),
        maxUrls: setting(count(1, 10_000_000).default(50_000), { doc: 'URLs taken from all sitemaps together.' }),
        maxFiles: setting(count(1, 10_000).default(100), { doc: 'Sitemap files fetched (indexes included).' }),
        maxIndexDepth: setting(count(0, 5).default(2), {
          doc: 'Levels of sitemap indexes followed: `1` reads the sitemaps an index lists, `2` also an index listed by an index, `0` ignores indexes.',
        }),
      })
      .strict()
      .prefault({}),
    // Sitemaps as a source of URLs, read once when the crawl starts.
    { section: 'discovery' },
  ),
};

export const RENDER_WAIT_UNTIL = ['load', 'domcontentloaded', 'networkidle'] as const;

/** Pages rendered in headless Chromium by render workers (see docs/rendering.md). */
const renderSchema = z
  .object({
    match: setting(z.array(urlPattern, { error: 'needs at least one URL pattern' }).min(1, 'needs at least one URL pattern').max(100), {
      flag: '--render <pattern>',
      help: 'render URLs matching this pattern (same syntax as --include) in headless Chromium',
      type: 'pattern[]',
      doc:
        'URLs (as queued, normalized) to render, in the same pattern language as `include`/`exclude` ' +
        '([discovery-and-scope.md](discovery-and-scope.md#include-and-exclude-patterns)): a glob starting with `/` over path and query (`/app/**`), ' +
        'a glob starting with `http(s)://` over the whole normalized URL, or `re:<regex>` searched anywhere in the URL.',
    }),
    waitUntil: setting(z.enum(RENDER_WAIT_UNTIL).default('load'), {
      flag: '--render-wait-until <event>',
      help: 'when a rendered page is done',
      doc: "When a rendered page counts as done (Playwright's navigation events).",
    }),
    timeoutMs: setting(count(1_000, 600_000).default(30_000), {
      flag: '--render-timeout-ms <ms>',
      help: 'time to render one page',
      doc:
        'Time for the browser to load and run one page, on top of fetching its HTML. ' +
        'A page not done in time is recorded with `error: "timeout"` (retried up to `maxRetries`).',
    }),
    taskQueue: setting(z.string().min(1).max(200).default(DEFAULT_RENDER_TASK_QUEUE), {
      flag: '--render-task-queue <name>',
      help: 'task queue of render batches',
      doc: 'Task queue of render batches; run `crawlflow render-worker --task-queue` on it.',
    }),
    maxConcurrentPages: setting(count(1, 256).default(2), {
      flag: '--render-max-concurrent-pages <n>',
      help: 'pages of this crawl rendered at once',
      doc: 'Pages of this crawl rendered at once, across all render workers (render batches in flight; each renders its pages one after another).',
    }),
    maxRequestsPerPage: setting(count(0, 10_000).default(100), {
      doc: 'Subrequests (scripts, XHR/fetch, frames) one rendered page may make; further ones are refused.',
    }),
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
  concurrency: count(1, 512),
  perHostConcurrency: count(1, 64),
  delayMs: count(0, 3_600_000),
};

/**
 * Seed URLs given inline: at least one of them, unless `seedsFile` names the seeds. A value
 * that is not a list (one URL as a string) is told so, not that a seed is missing.
 */
const seedList = z.array(httpUrl, {
  error: (issue) => (issue.input === undefined ? 'needs at least one seed URL' : 'must be a list of URLs, such as ["https://example.com/"]'),
});

export const crawlConfigSchema = z
  .object({
    seeds: setting(seedList.default([]), {
      section: 'limits',
      argument: '<seed-url...>',
      type: 'URL[]',
      shownDefault: 'required unless `seedsFile`',
      doc: 'Absolute http(s) URLs. At least one, unless `seedsFile` names the seeds.',
    }),
    seedsFile: setting(z.string().min(1).max(4_096).optional(), {
      section: 'limits',
      type: 'path',
      flag: '--seeds-file <path>',
      help: 'seed URLs, one a line, from this file (- for stdin), read by the workers, never kept in workflow history',
      doc:
        'A file of seed URLs, one a line (blank lines and `#` comments skipped), read by a worker and queued in chunks: the list never ' +
        'passes through workflow history. A path every worker of the task queue can read; see [Seed files](#seed-files).',
    }),
    scope: setting(z.enum(SCOPES).default('host'), {
      section: 'limits',
      flag: '--scope <scope>',
      help: 'which links to follow',
      doc:
        "Links followed: on a seed's host (host and port); on a seed's registrable domain (public-suffix aware: `a.example.co.uk` and " +
        '`b.example.co.uk` share one, `alice.github.io` and `bob.github.io` do not); under a seed\'s directory ' +
        '(`http://x/docs/v2/index.html` keeps `http://x/docs/v2/...`); or to any host (a broad crawl for search or archiving, ' +
        'bounded by `maxDepth`, `maxPages`, `maxPagesPerHost` and `include`/`exclude`; private addresses stay refused unless `allowPrivateNetwork`).',
    }),
    maxPages: setting(count(1, 100_000_000).default(10_000), {
      section: 'limits',
      flag: '--max-pages <n>',
      help: 'stop after this many URLs',
      doc:
        'URLs processed in total (fetched, failed or skipped); the crawl ends `max-pages-reached`. ' +
        'URLs discovered but not crawled stay in the frontier, counted as `queued`.',
    }),
    maxDepth: setting(count(0, 1_000).default(20), {
      section: 'limits',
      flag: '--max-depth <n>',
      help: 'follow links this many hops from a seed',
      doc: 'Link hops from a seed or sitemap URL (both are depth 0). `0` fetches the seeds and sitemap URLs only.',
    }),
    frontierOrder: setting(z.enum(FRONTIER_ORDERS).default('opic'), {
      section: 'limits',
      flag: '--frontier-order <order>',
      help: "which of a host's URLs go first",
      doc:
        "Which of a host's queued URLs go first: by OPIC priority (a page's found URLs share its priority, so a page with thousands of links " +
        'cannot crowd out its site under `maxPages`), or in discovery order. See [discovery-and-scope.md](discovery-and-scope.md#which-urls-go-first-the-frontier-order).',
    }),
    shards: setting(count(1, 64).default(1), {
      section: 'limits',
      flag: '--shards <n>',
      help: 'shard workflows to split the crawl into by politeness key',
      doc:
        'Shard workflows the crawl runs as (child workflows of the crawl), each owning the politeness keys that hash to it, so no row, lock ' +
        'or workflow is shared by every page; `maxPages` and `concurrency` are split evenly between them. See ' +
        '[multi-machine.md](multi-machine.md#sharded-crawls).',
    }),
    concurrency: setting(limitFields.concurrency.default(8), {
      section: 'limits',
      flag: '--concurrency <n>',
      help: 'batches in flight for the whole crawl',
      doc: 'Batches (each one connection\'s worth of sequential requests) in flight for the whole crawl, across all workers (per host: `perHostConcurrency`, [below](#politeness-and-requests)).',
    }),
    perHostConcurrency: setting(limitFields.perHostConcurrency.default(2), {
      section: 'politeness',
      flag: '--per-host-concurrency <n>',
      help: 'batches in flight per host, across workers',
      doc: 'Batches in flight per host, across all workers.',
    }),
    delayMs: setting(limitFields.delayMs.default(0), {
      section: 'politeness',
      flag: '--delay-ms <ms>',
      help: 'minimum gap between requests to one host',
      doc: 'Minimum gap between two requests to one host, across all workers.',
    }),
    timeoutMs: setting(count(100, 600_000).default(30_000), {
      section: 'fetching',
      flag: '--timeout-ms <ms>',
      help: 'total time allowed for one request',
      doc: 'Total time for one request, from connect to the last body byte.',
    }),
    deadline: setting(duration.optional(), {
      section: 'limits',
      flag: '--deadline <duration>',
      help: 'stop the crawl after this long, e.g. 90s, 10m, 2h',
      type: 'duration',
      doc: '`"90s"`, `"10m"` or milliseconds; when it passes the crawl ends as `deadline-exceeded` with its results so far.',
    }),
    respectRobots: setting(z.boolean().default(true), {
      section: 'fetching',
      flag: '--ignore-robots',
      flagSets: false,
      help: 'do not obey robots.txt',
      doc:
        'robots.txt per RFC 9309: a 4xx means no rules; a 5xx or an unreachable file (after 3 tries) means disallow all; ' +
        "when the cause is the host's, a name that does not resolve (`dns`), nothing listening (`connect`) or a refused TLS certificate " +
        "(`tls-certificate`, not retried), the host's pages are recorded with that error instead of `skipped: \"robots\"`; " +
        'more than 5 redirects, a loop or a blocked address mean no rules; only the first 512 KiB and the first 2,000 wildcards are parsed. Cached 24 h per crawl.',
    }),
    maxCrawlDelayMs: setting(count(0, 3_600_000).default(30_000), {
      section: 'fetching',
      doc: 'Upper bound on an honoured robots.txt `Crawl-delay`, so a hostile value cannot stall a crawl.',
    }),
    maxRetryAfterMs: setting(count(0, 86_400_000).default(3_600_000), {
      section: 'fetching',
      doc: 'Upper bound on an honoured `Retry-After`, so a date years ahead cannot park a host forever.',
    }),
    userAgent: setting(z.string().min(1).max(512).default(DEFAULT_USER_AGENT), {
      section: 'politeness',
      flag: '--user-agent <ua>',
      help: 'User-Agent header',
      shownDefault: '`crawlflow/<version>` (the `version` in package.json)',
      doc: 'User-Agent, and the agent robots.txt rules are matched for.',
    }),
    maxBodyBytes: setting(count(1_024, 1_073_741_824).default(5 * 1024 * 1024), {
      section: 'fetching',
      doc: 'Bytes of one body read, at most; this applies after decompression too, so a gzip bomb stops here (`too-large`).',
    }),
    maxRedirects: setting(count(0, 50).default(5), { section: 'fetching', doc: 'Redirects followed; every hop is checked against the scope.' }),
    maxLinksPerPage: setting(count(0, 1_000_000).default(5_000), { section: 'fetching', doc: 'Links taken from one page.' }),
    maxUrlLength: setting(count(16, 65_536).default(2_048), { section: 'fetching', doc: 'The longest URL followed.' }),
    batchSize: setting(count(1, 2_000).default(1_000), {
      section: 'limits',
      flag: '--batch-size <n>',
      help: 'URLs per batch activity',
      doc:
        'URLs one batch activity claims and fetches before it reports back. Every report costs a workflow task, the next batch\'s start and its ' +
        'claims, so larger batches cost less a page and make less history (bench/PROFILE.md). ' +
        'The workflow\'s totals (the `progress` query, the Web UI\'s details) move on at each report, and from a read of the store when no ' +
        'report has come for 10 s. A crawl with a page budget spreads it over its batches, so a small crawl still runs in several.',
    }),
    maxRetries: setting(count(0, 10).default(2), {
      section: 'fetching',
      doc:
        'Retries of one URL after `timeout`, `dns`, `connect`, `reset`, `truncated`, `network`, or HTTP 408/425/429/500/502/503/504, with backoff; ' +
        'a 429/503 `Retry-After` holds the whole host.',
    }),
    maxPagesPerHost: setting(count(1, 100_000_000).default(100_000), {
      section: 'limits',
      flag: '--max-pages-per-host <n>',
      help: 'URLs per host at most',
      doc:
        'URLs claimed per host across all workers (atomic in the store); further URLs of the host are recorded `skipped: "host-page-cap"`. ' +
        'Together with depth and URL length this bounds infinite URL spaces (calendars, session IDs).',
    }),
    allowPrivateNetwork: setting(z.boolean().default(false), {
      section: 'fetching',
      flag: '--allow-private-network',
      help: 'also fetch private, loopback and link-local addresses',
      doc:
        "Fetch private, loopback, link-local, CGNAT or multicast addresses. Without it only public addresses and the seeds' own addresses are fetched, " +
        'so links and redirects cannot reach internal services. DNS answers are checked (not the URL text) on every redirect hop, ' +
        'and the connection goes to the checked address (`blocked-address`).',
    }),
    ...discoveryFields,
    /** Extraction, body storage and incremental recrawl: see content-config.ts. */
    ...contentFields,
    /** Unset: no page is rendered. */
    render: setting(renderSchema.optional(), { section: 'render' }),
    /** Backoff, AutoThrottle, headers, cookies, proxy, per-host overrides (politeness-config.ts). */
    ...politenessFields,
  })
  .strict()
  .refine((config) => config.seeds.length > 0 || config.seedsFile !== undefined, { path: ['seeds'], message: 'needs at least one seed URL (or a seedsFile)' });

/** What a user writes: every field optional, but `seeds` or `seedsFile` must be given. */
export type CrawlInput = z.input<typeof crawlConfigSchema>;
/** What the code uses: defaults applied, durations in milliseconds. */
export type CrawlConfig = z.output<typeof crawlConfigSchema>;

/** The code of an invalid crawl input, wherever it is found. */
export const INVALID_CONFIG = 'invalid-config';
/**
 * The failure type a client sees for an invalid input: a crawl that fails on its input, and an
 * update the crawl refuses. Non-retryable: every attempt would fail the same way.
 */
export const INVALID_CONFIG_FAILURE = 'InvalidCrawlConfig';

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
/** The fields of a limits change. */
export const CRAWL_LIMITS = Object.keys(limitFields) as Array<keyof CrawlLimits>;

/** Validates a partial limits change; the first problem is reported with its field. */
export function parseLimitsChange(input: unknown): Partial<CrawlLimits> {
  return firstIssueOr(limitsChangeSchema.safeParse(input));
}

/** The most URLs one `addSeeds` takes. */
export const MAX_ADDED_SEEDS = 1_000;

/** Validates URLs given to `addSeeds` with the same rule as seeds. */
export function parseSeeds(input: unknown): string[] {
  return firstIssueOr(seedList.min(1, 'needs at least one seed URL').max(MAX_ADDED_SEEDS, `at most ${MAX_ADDED_SEEDS} URLs at once`).safeParse(input), 'seeds');
}

/** Why `value` cannot be a seed (the rule `seeds` applies), or null when it can: for seed files, checked line by line. */
export function seedRefusal(value: string): string | null {
  const result = httpUrl.safeParse(value);
  return result.success ? null : result.error.issues[0].message;
}

function firstIssueOr<T>(result: z.ZodSafeParseResult<T>, prefix?: string): T {
  if (result.success) return result.data;
  const { issues } = result.error;
  // An unknown key is reported before any other issue, at any depth: a typo (`render.mach`)
  // also leaves the field it meant missing, and naming that would hide the cause.
  const issue = issues.find((candidate) => candidate.code === 'unrecognized_keys') ?? issues[0];
  const path = [prefix, ...issue.path].filter((part) => part !== undefined).join('.');
  // Named with its path, so a nested typo is found where it is.
  const unknown = issue.code === 'unrecognized_keys' ? issue.keys.map((key) => (path ? `${path}.${key}` : key)).join(', ') : undefined;
  const field = unknown ?? (path || 'input');
  throw new InvalidCrawlConfigError(field, issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message);
}

/**
 * Why a crawl's input is not an object of settings at all, or undefined when it is. The
 * workflow asks before anything else, since it must look into its input (is it a continued
 * run's?) before the fields are parsed, and `temporal workflow start` without `--input` hands
 * it nothing at all.
 */
export function nonObjectInput(input: unknown): InvalidCrawlConfigError | undefined {
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) return undefined;
  const got = input === undefined ? 'no input' : input === null ? 'null' : Array.isArray(input) ? 'a list' : `a ${typeof input}`;
  return new InvalidCrawlConfigError('input', `must be an object of crawl settings, such as {"seeds": ["https://example.com/"]}, not ${got}`);
}

/** Validates once, at the boundary; the first problem is reported with the field it concerns. */
export function parseCrawlConfig(input: unknown): CrawlConfig {
  const notObject = nonObjectInput(input);
  if (notObject) throw notObject;
  return firstIssueOr(crawlConfigSchema.safeParse(input));
}
