// Package politecolly runs a gocolly/colly v2 collector through a
// [polite.PoliteTransport], so that polite obeys robots.txt and paces each
// host while colly parses pages and follows links. It is named politecolly
// rather than colly so that it does not clash with gocolly's package
// colly, which its callers import beside it.
//
//	c, tr := politecolly.NewCollector("MyBot/1.0 (+https://example.com/bot)", politecolly.Options{Timeout: 30 * time.Second})
//	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
//		if err := e.Request.Visit(e.Attr("href")); errors.Is(err, polite.ErrRobotsBlocked) {
//			fmt.Println("refused:", e.Attr("href"))
//		}
//	})
//
// A refused URL comes back from Visit as an error that matches
// [polite.ErrRobotsBlocked]; tr's Stats say what polite did per host.
//
// For a concurrent crawl, [Crawl] runs a pool of workers over a frontier
// (package github.com/polite-go/polite/frontier) built on tr, which hands
// them only URLs whose hosts are ready, and drops the URLs robots.txt
// refuses before they take a turn; the collector's OnHTML adds the links
// it finds to the frontier. Setting the collector's Async field instead
// also keeps each host to its pace, but a goroutine waits in polite for
// every URL queued on a host that is paced or paused.
package politecolly
