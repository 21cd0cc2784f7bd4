package sitemap_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/pace"
	"github.com/polite-go/polite/robotstxt"
	"github.com/polite-go/polite/sitemap"
)

// A Walker seeds a crawl: here the site's robots.txt names a sitemap
// index, whose sitemaps list the pages, and add stands for a frontier's
// Add. In a crawler, the Walker's Client fetches through the polite
// transport. The index's old sitemap is not fetched, being older than
// Since; the page on another site is skipped, out of scope; and
// pages.xml.gz, served plain, is read as what it is.
func ExampleWalker() {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	files := map[string]string{
		"/robots.txt": "User-agent: *\nDisallow: /private/\nSitemap: $HOST/sitemaps/index.xml\n",
		"/sitemaps/index.xml": `<sitemapindex>
			<sitemap><loc>$HOST/sitemaps/pages.xml.gz</loc></sitemap>
			<sitemap><loc>$HOST/sitemaps/old.xml</loc><lastmod>2019-03-01</lastmod></sitemap>
		</sitemapindex>`,
		"/sitemaps/pages.xml.gz": `<urlset>
			<url><loc>$HOST/</loc><lastmod>2026-11-02</lastmod></url>
			<url><loc>$HOST/about</loc></url>
			<url><loc>https://elsewhere.example/</loc></url>
		</urlset>`,
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.ReplaceAll(files[r.URL.Path], "$HOST", srv.URL))
	})

	ctx := context.Background()
	add := func(ctx context.Context, rawURL string) error { // a frontier's Add
		fmt.Println("seed", strings.TrimPrefix(rawURL, srv.URL))
		return nil
	}
	resp, err := srv.Client().Get(srv.URL + "/robots.txt") // a transport's Robots does this
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()

	w := &sitemap.Walker{Client: srv.Client(), Since: mustTime("2025-01-01")}
	sources := sitemap.FromRobots(srv.URL+"/robots.txt", robotstxt.Parse(body))
	stats, err := w.Walk(ctx, sources, func(e sitemap.Entry) error { return add(ctx, e.URL) })
	fmt.Printf("%+v %v\n", stats, err)
	// Output:
	// seed /
	// seed /about
	// {Sitemaps:2 Failed:0 URLs:2 Unchanged:1 Skipped:1} <nil>
}

// A Reader reads a body the caller fetched, one entry at a time, and
// notes what it passes over.
func ExampleReader() {
	body := strings.NewReader(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <url>
    <loc>https://example.com/en/</loc>
    <lastmod>2026-11-02T10:00:00+01:00</lastmod>
    <xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/"/>
  </url>
  <url><loc>/relative</loc></url>
  <url><loc>https://example.com/a?b=1&c=2</loc></url>
</urlset>`)
	u, _ := url.Parse("https://example.com/sitemap.xml")
	r := sitemap.NewReader(body, u)
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Println(e.URL, e.LastMod.Format("2006-01-02T15:04Z"), e.Alternates)
	}
	fmt.Println(r.Format(), r.Skipped())
	// Output:
	// https://example.com/en/ 2026-11-02T09:00Z [{de https://example.com/de/}]
	// https://example.com/a?b=1&c=2 0001-01-01T00:00Z []
	// urlset [{8 /relative not an absolute http(s) URL}]
}

func mustTime(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

// A crawl seeded from a site's sitemaps, fetched through the polite
// transport, into a frontier.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nSitemap: http://%s/sitemap.xml\n", r.Host)
		case "/sitemap.xml":
			fmt.Fprintf(w, "<urlset><url><loc>http://%s/a</loc></url><url><loc>http://%s/b</loc></url></urlset>", r.Host, r.Host)
		}
	}))
	defer srv.Close()
	origin := srv.URL
	ctx := context.Background()
	tr := polite.New(nil, polite.WithPacing(pace.Policy{BaseDelay: pace.None}))
	fr := frontier.New(tr, frontier.Options{})
	req, _ := http.NewRequestWithContext(ctx, "GET", origin+"/", nil)

	w := &sitemap.Walker{Client: &http.Client{Transport: tr}} // tr: a *polite.PoliteTransport
	f, _ := tr.Robots(req)                                    // req: a GET of origin's home page
	stats, err := w.Walk(ctx, sitemap.FromRobots(origin+"/robots.txt", f),
		func(e sitemap.Entry) error {
			_, err := fr.Add(ctx, e.URL) // fr: a *frontier.Frontier
			return err
		})
	fmt.Println(stats.URLs, err, fr.Len())
	// Output:
	// 2 <nil> 2
}
