// A minimal Crawlee CheerioCrawler for the crawlflow bench: follow every link on the seed's
// host at a fixed concurrency, with in-memory storage only. Prints one JSON line with its counts.
import { parseArgs } from 'node:util';
import { CheerioCrawler, Configuration, log } from '@crawlee/cheerio';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    concurrency: { type: 'string', default: '32' },
    'max-pages': { type: 'string' },
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
    // Pinned, not autoscaled: Crawlee otherwise starts low and scales by its own CPU and
    // memory readings, which would measure its autoscaler rather than its crawling.
    minConcurrency: concurrency,
    maxConcurrency: concurrency,
    ...(values['max-pages'] ? { maxRequestsPerCrawl: Number(values['max-pages']) } : {}),
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
