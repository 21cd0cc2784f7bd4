package politecolly

import (
	"context"
	"errors"
	"sync"

	"github.com/gocolly/colly/v2"
	"github.com/polite-go/polite/frontier"
)

// Crawl visits the URLs that f hands out with c, workers visits at a time,
// until f is empty (it returns nil) or ctx ends (it returns ctx's error).
// f hands out only URLs whose hosts the transport reports ready, so that
// no worker waits in polite for one host's turn while others could take a
// request, and drops the URLs robots.txt refuses (to f's Refused hook)
// before they take a worker's turn. Build f over the transport that
// [NewCollector] returns, and feed it the links the collector finds, in
// place of colly's Visit:
//
//	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
//		f.Add(ctx, e.Request.AbsoluteURL(e.Attr("href")))
//	})
//
// Each worker visits a URL with c.Visit and ends its turn when the visit's
// callbacks have run, so c must not be Async: the workers are the crawl's
// concurrency, and Crawl fails at once if c.Async is set. Every URL is
// visited at depth 1, so c.MaxDepth does not bound the crawl; give f a
// Seen hook to visit each URL once, as colly's own check does for the
// URLs it visits. A visit under way when ctx ends runs to its end unless
// c's Context ends with ctx.
func Crawl(ctx context.Context, c *colly.Collector, f *frontier.Frontier, workers int) error {
	if c.Async {
		return errors.New("politecolly: Crawl needs a collector that is not Async: its workers are the crawl's concurrency")
	}
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for {
				t, err := f.Next(ctx)
				if err != nil {
					return
				}
				// A request that failed went to c's OnError callbacks; the
				// other errors (a URL visited before, a filter) sent nothing.
				c.Visit(t.URL)
				t.Done()
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}
