/**
 * Custom search attributes of a crawl, so crawls can be found in the Web UI and with
 * `temporal workflow list --query "CrawlStatus = 'running'"`. Registered by the embedded dev
 * server's start flags, by `crawlflow worker` on start-up where the server allows it, or by
 * the operator command in docs/operations.md#search-attributes.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const CRAWL_ID = defineSearchAttributeKey('CrawlId', SearchAttributeType.KEYWORD);
export const SEED_HOST = defineSearchAttributeKey('SeedHost', SearchAttributeType.KEYWORD);
export const CRAWL_STATUS = defineSearchAttributeKey('CrawlStatus', SearchAttributeType.KEYWORD);
export const PAGES_CRAWLED = defineSearchAttributeKey('PagesCrawled', SearchAttributeType.INT);

export const CRAWL_SEARCH_ATTRIBUTES = [CRAWL_ID, SEED_HOST, CRAWL_STATUS, PAGES_CRAWLED] as const;
