/**
 * The frontier's order spends a page budget where it matters, through a real crawl: a site of
 * 301 pages has one page with 5,000 links (a link farm). Under OPIC (the default) the farm's
 * links share one page's priority, so a budget of 400 pages, far smaller than the farm, fetches
 * every page of the site; breadth-first, the documented alternative, spends it on the farm.
 *
 * One batch at a time on the host (`perHostConcurrency` 1), so which URLs each claim takes is
 * decided by the order alone, and the counts below are exact.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FrontierOrder } from '../src/shared/crawl-config';
import { page, startRecordingSite, type Handler, type RecordingSite } from './helpers/recording-site';
import { testNetwork } from './helpers/hostile-site';
import { realCrawler } from './helpers/real-crawl';

const SECTIONS = 10;
const PAGES_PER_SECTION = 29;
const FARM_LINKS = 5_000;
const BUDGET = 400;

/** `/` links to the farm and the sections; a section to its pages; a page back home and to the next. */
function siteRoutes(): { routes: Record<string, Handler>; sitePaths: string[] } {
  const routes: Record<string, Handler> = {};
  const sections = Array.from({ length: SECTIONS }, (_, s) => `/s/${s}`);
  routes['/'] = (_req, res) => page(res, ['/farm', ...sections]);
  routes['/farm'] = (_req, res) => page(res, Array.from({ length: FARM_LINKS }, (_, n) => `/farm/${n}`));
  for (let n = 0; n < FARM_LINKS; n += 1) routes[`/farm/${n}`] = (_req, res) => page(res);
  const sitePaths = ['/', ...sections];
  for (const section of sections) {
    const pages = Array.from({ length: PAGES_PER_SECTION }, (_, p) => `${section}/p/${p}`);
    routes[section] = (_req, res) => page(res, pages);
    pages.forEach((path, p) => (routes[path] = (_req, res) => page(res, ['/', pages[(p + 1) % pages.length]])));
    sitePaths.push(...pages);
  }
  return { routes, sitePaths };
}

describe('frontier order: a link farm under a page budget', () => {
  const crawler = realCrawler(testNetwork().network);
  const { routes, sitePaths } = siteRoutes();
  let site: RecordingSite;
  before(async () => {
    site = await startRecordingSite(routes);
  });
  after(() => site?.close());

  /** Crawls the site under `frontierOrder` and returns the paths requested, with how often. */
  async function crawl(frontierOrder: FrontierOrder): Promise<Map<string, number>> {
    site.requests.length = 0;
    const records = await crawler.crawl({
      seeds: [`${site.origin}/`],
      frontierOrder,
      maxPages: BUDGET,
      perHostConcurrency: 1,
      batchSize: 50,
      respectRobots: false,
      allowPrivateNetwork: true,
    });
    assert.equal(records.filter((record) => record.status === 200).length, BUDGET, 'the whole budget is fetched');
    const counts = new Map<string, number>();
    for (const { path } of site.pages()) counts.set(path, (counts.get(path) ?? 0) + 1);
    assert.ok([...counts.values()].every((n) => n === 1), 'no page is fetched twice');
    return counts;
  }

  it('by OPIC (the default), every page of the site is fetched within a budget far smaller than the farm', async () => {
    const fetched = await crawl('opic');
    assert.deepEqual(sitePaths.filter((path) => !fetched.has(path)), [], 'no page of the site is left out');
    assert.equal(fetched.has('/farm'), true);
    assert.equal([...fetched.keys()].filter((path) => path.startsWith('/farm/')).length, BUDGET - sitePaths.length - 1, 'the farm gets what is left');
  });

  it('breadth-first, the farm found first takes the budget', async () => {
    const fetched = await crawl('breadth-first');
    assert.deepEqual(
      sitePaths.filter((path) => fetched.has(path)),
      ['/', ...Array.from({ length: SECTIONS }, (_, s) => `/s/${s}`)],
      'of the site, only the home page and the sections, found before the farm was read',
    );
  });
});
