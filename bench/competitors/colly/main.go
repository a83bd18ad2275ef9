// A minimal Colly collector for the crawlflow bench: follow every link on the seed's host,
// at a fixed parallelism, with no storage beyond Colly's in-memory visited set. It prints one
// JSON line with its counts when done.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
)

func main() {
	seed := flag.String("url", "", "seed URL")
	concurrency := flag.Int("concurrency", 32, "requests in flight")
	maxPages := flag.Uint("max-pages", 0, "requests at most (0: no limit)")
	flag.Parse()
	parsed, err := url.Parse(*seed)
	if err != nil || parsed.Host == "" {
		fmt.Fprintf(os.Stderr, "colly: -url must be an absolute URL, got %q\n", *seed)
		os.Exit(2)
	}

	c := colly.NewCollector(
		colly.Async(true),
		colly.AllowedDomains(parsed.Hostname()),
		colly.MaxRequests(uint32(*maxPages)),
	)
	// Go's default transport keeps only 2 idle connections per host, so 30 of 32 parallel
	// requests would open a new connection each time; every other tool pools its connections.
	c.WithTransport(&http.Transport{MaxIdleConns: *concurrency, MaxIdleConnsPerHost: *concurrency, IdleConnTimeout: 30 * time.Second})
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: *concurrency}); err != nil {
		fmt.Fprintf(os.Stderr, "colly: %v\n", err)
		os.Exit(1)
	}

	var pages, failures atomic.Int64
	c.OnResponse(func(*colly.Response) { pages.Add(1) })
	c.OnError(func(_ *colly.Response, err error) {
		// MaxRequests and already-visited refusals come back as errors from Visit, not here.
		failures.Add(1)
		fmt.Fprintf(os.Stderr, "colly: %v\n", err)
	})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		_ = e.Request.Visit(e.Attr("href"))
	})

	started := time.Now()
	if err := c.Visit(*seed); err != nil {
		fmt.Fprintf(os.Stderr, "colly: seed: %v\n", err)
		os.Exit(1)
	}
	c.Wait()
	summary, _ := json.Marshal(map[string]any{
		"tool":    "colly",
		"pages":   pages.Load(),
		"errors":  failures.Load(),
		"seconds": time.Since(started).Seconds(),
	})
	fmt.Println(string(summary))
}
