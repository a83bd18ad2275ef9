"""A minimal Scrapy spider for the crawlflow bench: follow every link on the seed's host at a
fixed concurrency, robots.txt off, nothing stored. Prints one JSON line with its counts."""
import argparse
import json
import time
from urllib.parse import urlsplit

import scrapy
from scrapy.crawler import CrawlerProcess


class SiteSpider(scrapy.Spider):
    name = "bench"

    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--max-pages", type=int, default=0)
    args = parser.parse_args()

    process = CrawlerProcess(
        settings={
            "CONCURRENT_REQUESTS": args.concurrency,
            # The per-domain default (8) would cap a one-host crawl well below the others.
            "CONCURRENT_REQUESTS_PER_DOMAIN": args.concurrency,
            "DOWNLOAD_DELAY": 0,
            "ROBOTSTXT_OBEY": False,
            "CLOSESPIDER_PAGECOUNT": args.max_pages,
            "LOG_LEVEL": "WARNING",
            "TELNETCONSOLE_ENABLED": False,
        }
    )
    crawler = process.create_crawler(SiteSpider)
    started = time.monotonic()
    process.crawl(
        crawler,
        start_urls=[args.url],
        allowed_domains=[urlsplit(args.url).hostname],
    )
    process.start()
    stats = crawler.stats.get_stats()
    print(
        json.dumps(
            {
                "tool": "scrapy",
                "pages": stats.get("response_received_count", 0),
                "errors": stats.get("downloader/exception_count", 0),
                "seconds": time.monotonic() - started,
            }
        )
    )


if __name__ == "__main__":
    main()
