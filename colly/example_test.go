package politecolly_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/polite-go/polite"
	politecolly "github.com/polite-go/polite/colly"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/pace"
)

// A collector whose links are followed through polite: the page that
// robots.txt disallows is refused before it is sent, and the others come
// at the host's pace.
func ExampleNewCollector() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
		case "/":
			fmt.Fprint(w, `<a href="/a">a</a> <a href="/private/b">b</a>`)
		default:
			fmt.Fprint(w, "a page")
		}
	}))
	defer site.Close()

	c, tr := politecolly.NewCollector("MyBot/1.0 (+https://example.com/bot)", politecolly.Options{Timeout: 30 * time.Second})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		if err := e.Request.Visit(e.Attr("href")); errors.Is(err, polite.ErrRobotsBlocked) {
			fmt.Println("refused:", e.Attr("href"))
		}
	})
	c.OnResponse(func(r *colly.Response) { fmt.Println("fetched:", r.Request.URL.Path) })
	if err := c.Visit(site.URL + "/"); err != nil {
		fmt.Println(err)
	}
	req, _ := http.NewRequest("GET", site.URL+"/private/b", nil)
	d, _ := tr.Check(req)
	fmt.Println("rule:", d.Rule)
	// Output:
	// fetched: /
	// fetched: /a
	// refused: /private/b
	// rule: Disallow: /private/
}

// A crawl whose links go through a frontier, which hands the workers only
// URLs whose hosts are ready and drops those robots.txt refuses before they
// take a turn.
func ExampleCrawl() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
		case "/":
			fmt.Fprint(w, `<a href="/a">a</a> <a href="/private/b">b</a> <a href="/">home</a>`)
		default:
			fmt.Fprint(w, "a page")
		}
	}))
	defer site.Close()

	c, tr := politecolly.NewCollector("ExampleBot/1.0 (+https://example.com/bot)", politecolly.Options{
		Timeout: 10 * time.Second,
		Polite:  []polite.Option{polite.WithPacing(pace.Policy{BaseDelay: 10 * time.Millisecond})},
	})
	f := frontier.New(tr, frontier.Options{
		Seen:    new(frontier.SeenSet).Seen,
		Refused: func(u string, d polite.Decision) { fmt.Println("refused:", u[len(site.URL):], "by", d.Rule) },
	})
	ctx := context.Background()
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { f.Add(ctx, e.Request.AbsoluteURL(e.Attr("href"))) })
	c.OnResponse(func(r *colly.Response) { fmt.Println("fetched:", r.Request.URL.Path) })
	f.Add(ctx, site.URL+"/")
	if err := politecolly.Crawl(ctx, c, f, 4); err != nil {
		fmt.Println(err)
	}
	// Output:
	// fetched: /
	// fetched: /a
	// refused: /private/b by Disallow: /private/
}
