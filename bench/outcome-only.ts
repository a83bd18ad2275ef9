/**
 * A page's outcome alone: the bench site's pages turned into records and links to queue
 * (`fetchedOutcome`: content hash, link scan, normalization, scope), with no fetching, store or
 * Temporal. Like store-only.ts, it tells two builds of that path apart in seconds, where a
 * whole crawl's ±20% cannot.
 *
 *   node dist/bench/outcome-only.js [--rounds 7] [--pages 4000]
 *
 * Prints each round's CPU µs per page, then their median and minimum.
 */
import { buildPagePolicy, fetchedOutcome } from '../src/activities/page-outcome';
import type { FetchedPage } from '../src/fetch/fetch-page';
import { parseCrawlConfig } from '../src/shared/crawl-config';
import { pagePath, renderPage, SiteGraph } from '../src/sites/synthetic-site';
import { median, parseRounds } from './rounds';
import { parseFlags, runBenchCommand, wholeNumber } from './bench-args';
import { PAGE_BYTES, SITE_SEED } from './site-process';

const ORIGIN = 'http://127.0.0.1:8080';
const SITE_PAGES = 20_000;
/** Distinct pages rendered up front and cycled through: rendering is not what is timed. */
const RENDERED_PAGES = 2_000;

/** The bench site's first pages as a fetch returns them. */
function fetchedPages(): FetchedPage[] {
  const graph = new SiteGraph({ pages: SITE_PAGES, seed: SITE_SEED });
  return Array.from({ length: RENDERED_PAGES }, (_, page) => {
    const html = renderPage(graph, page, PAGE_BYTES);
    const body = Buffer.from(html);
    const url = `${ORIGIN}${pagePath(page)}`;
    return {
      finalUrl: url, status: 200, contentType: 'text/html; charset=utf-8', body, html, bytes: body.length, retryAfterMs: null,
      redirectBlocked: null, robotsHeader: null, headers: {}, requestHeaders: {}, latencyMs: 1, redirects: [],
    };
  });
}

const USAGE = `usage: node dist/bench/outcome-only.js [--rounds N] [--pages N]
  --rounds N   measured rounds after a warm-up one (default 7)
  --pages N    page outcomes per round (default 4000)
`;

function main(): void {
  const { values } = parseFlags({ options: { rounds: { type: 'string', default: '7' }, pages: { type: 'string', default: '4000' } } });
  const rounds = parseRounds(values.rounds);
  const perRound = wholeNumber('--pages', values.pages);
  const config = parseCrawlConfig({ seeds: [`${ORIGIN}/page/0`] });
  const policy = buildPagePolicy(config);
  const pages = fetchedPages();
  let linksQueued = 0;
  const round = (): number => {
    const started = process.cpuUsage();
    for (let n = 0; n < perRound; n += 1) {
      const page = pages[n % pages.length];
      linksQueued += fetchedOutcome({ url: page.finalUrl, depth: 1 }, page, config, policy).discovered.length;
    }
    const used = process.cpuUsage(started);
    return (used.user + used.system) / perRound;
  };
  round(); // warm-up: the optimizing compiler's turn
  const micros = Array.from({ length: rounds }, (_, n) => {
    const perPage = round();
    process.stdout.write(`round ${n + 1} | ${perRound} pages | ${perPage.toFixed(1)} µs CPU/page\n`);
    return perPage;
  });
  process.stdout.write(`median ${median(micros).toFixed(1)} µs, min ${Math.min(...micros).toFixed(1)} µs per page (${linksQueued} links queued)\n`);
}

runBenchCommand(main, USAGE);
