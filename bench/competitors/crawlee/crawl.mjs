// A minimal Crawlee CheerioCrawler for the crawlflow bench: follow every link on the seed's
// host at a fixed concurrency, with in-memory storage only. Prints one JSON line with its counts.
//
// No page limit (`maxRequestsPerCrawl`): the bench's site bounds the crawl by itself, and in
// Crawlee 3.18 a limit costs time once the remaining budget is smaller than a page's link
// count: enqueueLinks then adds its links in chunks of the remaining budget and sleeps 1 s
// between chunks (`addRequestsBatched`, `waitBetweenBatchesMillis`), even when every link is
// a duplicate, so each page's handler waits seconds (bench/README.md, "Crawlee: why the site matters").
import { parseArgs } from 'node:util';
import { CheerioCrawler, Configuration, log } from '@crawlee/cheerio';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    concurrency: { type: 'string', default: '32' },
  },
});
if (!values.url) {
  process.stderr.write('crawlee: --url is required\n');
  process.exit(2);
}
const concurrency = Number(values.concurrency);
log.setLevel(log.LEVELS.WARNING);

const crawler = new CheerioCrawler(
  {
    // Pinned, not autoscaled: Crawlee otherwise scales by its own CPU and event-loop readings,
    // which would measure its autoscaler rather than its crawling. The desired concurrency
    // must be pinned too: HttpCrawler's default of 10 wins over minConcurrency, and only the
    // autoscaler moves it from there (up in small steps when it reads the machine as idle, or
    // straight to minConcurrency at its first scale-down, which is floored there).
    minConcurrency: concurrency,
    maxConcurrency: concurrency,
    autoscaledPoolOptions: { desiredConcurrency: concurrency },
    async requestHandler({ enqueueLinks }) {
      await enqueueLinks({ strategy: 'same-hostname' });
    },
  },
  // Nothing is written to ./storage: request queue and datasets stay in memory.
  new Configuration({ persistStorage: false }),
);

const started = performance.now();
const stats = await crawler.run([values.url]);
process.stdout.write(
  `${JSON.stringify({ tool: 'crawlee', pages: stats.requestsFinished, errors: stats.requestsFailed, seconds: (performance.now() - started) / 1000 })}\n`,
);
