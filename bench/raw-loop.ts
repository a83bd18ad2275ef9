/**
 * The ceiling the bench compares every crawler with: the least code that crawls a site with
 * the same libraries crawlflow uses — an undici pool per origin, cheerio, an in-memory seen-set
 * and a FIFO queue drained by `concurrency` loops. No retries, politeness, storage or
 * durability. Each `--url` is a seed, and its origin is in scope: one for a site, one per
 * host for the broad scenario's many-host site (bench/broad-bench.ts).
 *
 *   node dist/bench/raw-loop.js --url http://127.0.0.1:PORT/page/0 [--url ...] --concurrency 32 --max-pages N
 *
 * prints one JSON line with its counts.
 */
import { parseArgs } from 'node:util';
import { load } from 'cheerio';
import { Pool } from 'undici';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string', multiple: true },
      concurrency: { type: 'string', default: '32' },
      'max-pages': { type: 'string' },
    },
  });
  if (!values.url) throw new Error('--url is required');
  const seeds = values.url.map((url) => new URL(url));
  const concurrency = Number(values.concurrency);
  const maxPages = values['max-pages'] === undefined ? Infinity : Number(values['max-pages']);
  // A pool per origin, as crawlflow's transport keeps: an Agent would add its own dispatch.
  const pools = new Map(seeds.map(({ origin }) => [origin, new Pool(origin, { connections: concurrency })]));

  const seen = new Set<string>(seeds.map((seed) => seed.href));
  const queue: string[] = [...seen];
  let head = 0;
  let active = 0;
  let pages = 0;
  let errors = 0;
  /** Loops with nothing to do wait here until a page adds links or the last one finishes. */
  let wake: Array<() => void> = [];
  const wakeAll = (): void => {
    for (const resolve of wake) resolve();
    wake = [];
  };

  const crawl = async (url: string): Promise<void> => {
    // Queued URLs are normalized hrefs: the origin ends at the first slash after the scheme's.
    const pathStart = url.indexOf('/', url.indexOf('//') + 2);
    const { statusCode, body } = await pools.get(url.slice(0, pathStart))!.request({ path: url.slice(pathStart), method: 'GET' });
    const html = await body.text();
    pages += 1;
    if (statusCode !== 200) return;
    // htmlparser2 rather than cheerio's default parse5: about twice as fast, and what
    // crawlflow's parser (src/parse/html-page.ts) and Crawlee's CheerioCrawler use.
    const $ = load(html, { xml: { xmlMode: false, decodeEntities: true } });
    for (const element of $('a[href]')) {
      if (seen.size >= maxPages) break;
      const link = new URL($(element).attr('href') ?? '', url);
      link.hash = '';
      if (pools.has(link.origin) && !seen.has(link.href)) {
        seen.add(link.href);
        queue.push(link.href);
      }
    }
  };

  const loop = async (): Promise<void> => {
    for (;;) {
      if (head < queue.length) {
        const url = queue[head];
        head += 1;
        active += 1;
        try {
          await crawl(url);
        } catch (err) {
          errors += 1;
          process.stderr.write(`raw-loop: ${url}: ${(err as Error).message}\n`);
        }
        active -= 1;
        wakeAll();
      } else if (active === 0) {
        return;
      } else {
        await new Promise<void>((resolve) => wake.push(resolve));
      }
    }
  };

  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  await Promise.all([...pools.values()].map((pool) => pool.close()));
  process.stdout.write(`${JSON.stringify({ tool: 'raw', pages, errors, seconds: (performance.now() - started) / 1000 })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`raw-loop: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
