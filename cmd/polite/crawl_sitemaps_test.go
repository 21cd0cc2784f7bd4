package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

// urlset returns a sitemap that lists urls.
func urlset(urls ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, u := range urls {
		fmt.Fprintf(&b, "<url><loc>%s</loc></url>", u)
	}
	b.WriteString("</urlset>")
	return b.String()
}

// gzipped returns s gzipped.
func gzipped(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	io.WriteString(w, s)
	w.Close()
	return b.String()
}

// TestCrawlSitemaps crawls sites whose pages no link reaches: one whose
// robots.txt names a sitemap index, one that names none and has
// /sitemap.xml. With -sitemaps their pages are crawled as seeds no one
// gave, a disallowed page or sitemap is refused by the transport, and a
// sitemap that cannot be had is named; without it, no sitemap is asked
// for.
func TestCrawlSitemaps(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	files := map[string]string{}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		body, ok := files[r.URL.Path]
		mu.Unlock()
		switch {
		case !ok:
			http.NotFound(w, r)
		case strings.HasSuffix(r.URL.Path, ".xml") || strings.HasSuffix(r.URL.Path, ".gz") || r.URL.Path == "/robots.txt":
			io.WriteString(w, body)
		default:
			htmlPage(strings.Fields(body)...)(w, r)
		}
	}))
	defer site.Close()
	s := site.URL
	files["/robots.txt"] = "User-agent: *\nDisallow: /private/\nSitemap: " + s + "/maps/index.xml\n"
	files["/maps/index.xml"] = `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
		"<sitemap><loc>" + s + "/maps/a.xml</loc></sitemap><sitemap><loc>" + s + "/maps/b.xml.gz</loc></sitemap>" +
		"<sitemap><loc>" + s + "/private/c.xml</loc></sitemap></sitemapindex>"
	files["/maps/a.xml"] = urlset(s+"/orphan1", s+"/linked", s+"/private/p")
	files["/maps/b.xml.gz"] = gzipped(urlset(s + "/orphan2"))
	files["/private/c.xml"] = urlset(s + "/never")
	files["/"] = "/linked"
	files["/linked"] = ""
	files["/orphan1"] = ""
	files["/orphan2"] = ""

	var plainMu sync.Mutex
	plainHits := map[string]int{}
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plainMu.Lock()
		plainHits[r.URL.Path]++
		plainMu.Unlock()
		switch r.URL.Path {
		case "/sitemap.xml": // a text sitemap, whatever its name says
			fmt.Fprintf(w, "%s/t1\n%s/t2\n", "http://"+r.Host, "http://"+r.Host)
		case "/", "/t1", "/t2":
			htmlPage()(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	defer plain.Close()
	p := plain.URL

	tests := []struct {
		name        string
		flags       []string
		seed        string
		want        map[string]string // URL → "status" or "blocked", then " sitemap" when a sitemap listed it
		wantStderr  []string
		wantUnasked []string // paths of site never asked for
		either      []string // URLs a link and a sitemap both give: which queued them first is the walk's race
	}{
		{
			name:  "robots.txt names an index",
			flags: []string{"-sitemaps", "-max-depth", "0"},
			seed:  s + "/",
			want: map[string]string{s + "/": "200", s + "/linked": "200 sitemap", s + "/orphan1": "200 sitemap",
				s + "/orphan2": "200 sitemap", s + "/private/p": "blocked sitemap"},
			wantStderr: []string{"polite crawl: sitemap " + s + "/private/c.xml: ",
				"4 sitemaps read (1 failed) listing 4 URLs"},
			wantUnasked: []string{"/private/p", "/private/c.xml", "/never"},
		},
		{
			name:  "a link and a sitemap give the same page once",
			flags: []string{"-sitemaps", "-max-depth", "1"},
			seed:  s + "/",
			want: map[string]string{s + "/": "200", s + "/linked": "200", s + "/orphan1": "200 sitemap",
				s + "/orphan2": "200 sitemap", s + "/private/p": "blocked sitemap"},
			either: []string{s + "/linked"},
		},
		{
			name:        "without -sitemaps",
			flags:       []string{"-max-depth", "0"},
			seed:        s + "/",
			want:        map[string]string{s + "/": "200"},
			wantUnasked: []string{"/maps/index.xml", "/orphan1"},
		},
		{
			name:       "no robots.txt: /sitemap.xml",
			flags:      []string{"-sitemaps"},
			seed:       p + "/",
			want:       map[string]string{p + "/": "200", p + "/t1": "200 sitemap", p + "/t2": "200 sitemap"},
			wantStderr: []string{"1 sitemaps read (0 failed) listing 2 URLs"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			clear(hits)
			mu.Unlock()
			code, stdout, stderr := runCmd(t, append(append([]string{"crawl", "-delay", "0"}, tt.flags...), tt.seed)...)
			if code != exitOK {
				t.Fatalf("exit status = %d; want 0\nstderr:\n%s", code, stderr)
			}
			got := map[string]string{}
			for u, l := range decodeCrawl(t, stdout) {
				v := fmt.Sprint(*l.Status)
				if l.Blocked != "" {
					v = "blocked"
				}
				if l.Sitemap {
					v += " sitemap"
				}
				if *l.Depth != 0 && l.Sitemap {
					t.Errorf("%s: depth %d; want 0, a seed", u, *l.Depth)
				}
				if slices.Contains(tt.either, u) {
					v = strings.TrimSuffix(v, " sitemap")
				}
				got[u] = v
			}
			if !equalMaps(got, tt.want) {
				t.Errorf("crawled %v;\nwant %v", got, tt.want)
			}
			for _, want := range tt.wantStderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr = %q; want it to contain %q", stderr, want)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, path := range tt.wantUnasked {
				if hits[path] != 0 {
					t.Errorf("the site saw %d requests for %s; want none", hits[path], path)
				}
			}
		})
	}
}

// sitemapWeb is a RoundTripper for one host in a bubble's time: its
// robots.txt sets a Crawl-delay and names no sitemap, its /sitemap.xml
// lists n pages, and each answer takes a second.
type sitemapWeb struct{ n int }

func (w sitemapWeb) RoundTrip(req *http.Request) (*http.Response, error) {
	time.Sleep(time.Second)
	body, status := "", http.StatusOK
	switch req.URL.Path {
	case "/robots.txt":
		body = "User-agent: *\nCrawl-delay: 5\n"
	case "/sitemap.xml":
		var b strings.Builder
		for i := range w.n {
			fmt.Fprintf(&b, "http://site.test/p%d\n", i)
		}
		body = b.String()
	}
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"text/html"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

// TestCrawlSitemapsKeepsThePace crawls, in a bubble's time, one host
// whose sitemap lists its pages: every request to it, the sitemap's
// included, starts at least the Crawl-delay after the one before. A
// sitemap longer than the crawl's backlog is read only as the workers
// take its pages, and the walk stops with the crawl.
func TestCrawlSitemapsKeepsThePace(t *testing.T) {
	tests := []struct {
		name     string
		pages    int // the sitemap lists
		maxPages int
		wantURLs func(int) bool // the URLs the walk passed on
	}{
		{"every page", 30, 100, func(n int) bool { return n == 30 }},
		{"a long sitemap, a short crawl", 3 * sitemapBacklog, 5, func(n int) bool { return n >= sitemapBacklog && n <= sitemapBacklog+5 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				wire := &wireRecorder{base: sitemapWeb{tt.pages}}
				tr := polite.New(wire, polite.WithRobotsTransport(wire),
					polite.WithPacing(pace.Policy{BaseDelay: time.Second, Jitter: pace.None, LatencyFactor: pace.None}))
				opts := crawlOptions{maxPages: tt.maxPages, maxDepth: 0, concurrency: 4, sitemaps: true, idleTimeout: time.Minute}
				res := crawl(context.Background(), tr, wire, opts, []*url.URL{mustParse(t, "http://site.test/")}, io.Discard, func(pageRecord) {})
				if !tt.wantURLs(res.sitemaps.urls) {
					t.Errorf("the walk passed on %d URLs", res.sitemaps.urls)
				}
				var starts []time.Time
				pages := 0
				for _, r := range res.wire {
					if r.Robots {
						continue
					}
					starts = append(starts, r.Start)
					if r.URL != "http://site.test/sitemap.xml" {
						pages++
					}
				}
				if want := min(tt.pages+1, tt.maxPages); pages != want {
					t.Errorf("%d pages fetched; want %d", pages, want)
				}
				for i := 1; i < len(starts); i++ {
					if gap := starts[i].Sub(starts[i-1]); gap < 5*time.Second {
						t.Errorf("request %d started %v after the one before; want the Crawl-delay, 5s or more", i, gap)
					}
				}
			})
		})
	}
}
