/** The workflows a crawl worker registers (this module is the worker's `workflowsPath`). */
export { crawlSession } from './crawl-session';
export { crawlShard } from './crawl-shard';
export type { CrawlSessionInput, CarriedCrawl } from './open-crawl';
