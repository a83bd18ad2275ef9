/**
 * Where a worker parses its HTML pages: on parse threads, so the link scan and the links'
 * normalization (a fifth of a worker's main thread, bench/PROFILE.md) run beside the fetches,
 * the store's commits and the SDK instead of taking turns with them; or in line, where a
 * thread would cost more than it saves (a one-off parse, a test of the outcome rules).
 *
 * The threads are plain `worker_threads` with one MessagePort each, not a pool library: for
 * tasks of about 100 µs a pool's own cost per task was most of what the thread saves. Measured
 * with an 8 KB page and a dozen links per task, one thread, 32 tasks in flight: piscina 59 µs
 * of CPU per task, tinypool 50, a bare MessagePort 25 (12 of them on the main thread).
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { buildNormalizer, type NormalizeRules } from '../policy/normalize-url';
import { HtmlTooDeepError, parseHtmlPage, type ParsedPage, type ParseLimits } from './html-page';

/** A fetched page to parse: its decoded HTML, the URL it came from and its X-Robots-Tag. */
export interface PageToParse {
  html: string;
  pageUrl: string;
  robotsHeader: string | null;
}

/** One crawl's parser: its normalization rules and limits are fixed when it is made. */
export interface PageParser {
  parse(page: PageToParse): Promise<ParsedPage>;
}

/** Makes a crawl's parser from its settings. */
export type PageParsing = (rules: Readonly<NormalizeRules>, limits: ParseLimits) => PageParser;

/** What the main thread posts: the page, and the rules by number (sent along the first time a thread sees them). */
export interface ParseRequest extends PageToParse, ParseLimits {
  id: number;
  rulesId: number;
  rules?: Readonly<NormalizeRules>;
}

/** What a parse thread posts back: the parse, or what went wrong with it. */
export type ParseReply = { id: number; parsed: ParsedPage } | { id: number; error: { code?: string; message: string } };

/** A parse thread exited, or a page broke the parser in an unexpected way: a worker-side failure, retried with the batch. */
export class ParseThreadError extends Error {
  readonly code = 'parse-thread';
}

/** Parses on the calling thread. */
export const inlineParsing: PageParsing = (rules, limits) => {
  const normalize = buildNormalizer(rules);
  return { parse: async ({ html, pageUrl, robotsHeader }) => parseHtmlPage(html, pageUrl, robotsHeader, limits, normalize) };
};

/** The thread's entry, compiled beside this module. */
const THREAD_SCRIPT = join(__dirname, 'parse-thread.js');

interface Pending {
  resolve(parsed: ParsedPage): void;
  reject(error: Error): void;
}

function replyError({ code, message }: { code?: string; message: string }): Error {
  return code === new HtmlTooDeepError('').code ? new HtmlTooDeepError(message) : new ParseThreadError(`page parse failed on the parse thread: ${message}`);
}

/**
 * One thread and the parses it owes. It starts on first use and again after it exits (the
 * parses it owed fail with ParseThreadError), and keeps the process alive only while it owes one.
 */
class ParseThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  /** Rules this thread has been sent, by number. */
  private readonly known = new Set<number>();
  private lastId = 0;

  get load(): number {
    return this.pending.size;
  }

  parse(page: PageToParse & ParseLimits, rulesId: number, rules: Readonly<NormalizeRules>): Promise<ParsedPage> {
    const worker = (this.worker ??= this.spawn());
    const id = ++this.lastId;
    const request: ParseRequest = { ...page, id, rulesId, ...(this.known.has(rulesId) ? {} : { rules }) };
    this.known.add(rulesId);
    if (this.pending.size === 0) worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage(request);
    });
  }

  private spawn(): Worker {
    const worker = new Worker(THREAD_SCRIPT);
    worker.unref();
    worker.on('message', (reply: ParseReply) => {
      const pending = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if ('parsed' in reply) pending?.resolve(reply.parsed);
      else pending?.reject(replyError(reply.error));
    });
    worker.on('error', (err) => this.failAll(`the parse thread failed: ${err.message}`));
    worker.on('exit', (code) => {
      this.worker = undefined;
      this.known.clear();
      this.failAll(`the parse thread exited with code ${code}`);
    });
    return worker;
  }

  private failAll(message: string): void {
    for (const pending of this.pending.values()) pending.reject(new ParseThreadError(message));
    this.pending.clear();
  }

  async close(): Promise<void> {
    await this.worker?.terminate();
  }
}

/** Parse threads for a worker with the cores to spare: one per core beyond the main thread's, up to four. */
export function defaultParseThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

/** A worker's parse threads; each page goes to the one that owes the fewest parses. */
export class ParseThreads {
  private readonly threads: ParseThread[];
  /** Each distinct set of normalization rules, numbered in the order crawls brought them. */
  private readonly rulesIds = new Map<string, number>();

  constructor(count: number) {
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`parse threads must be a whole number of at least 1, got ${count}`);
    this.threads = Array.from({ length: count }, () => new ParseThread());
  }

  readonly parsing: PageParsing = (rules, limits) => {
    const key = JSON.stringify(rules);
    const rulesId = this.rulesIds.get(key) ?? this.rulesIds.size;
    this.rulesIds.set(key, rulesId);
    const { maxLinks, maxUrlLength } = limits;
    return { parse: (page) => this.leastLoaded().parse({ ...page, maxLinks, maxUrlLength }, rulesId, rules) };
  };

  private leastLoaded(): ParseThread {
    let best = this.threads[0];
    for (const thread of this.threads) if (thread.load < best.load) best = thread;
    return best;
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((thread) => thread.close()));
  }
}
