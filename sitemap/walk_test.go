package sitemap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/polite-go/polite/robotstxt"
	"go.uber.org/goleak"
)

// site serves files by path, and counts the requests for each.
type site struct {
	mu    sync.Mutex // guards asked
	asked map[string]int
	files map[string]string
}

func newSite(t *testing.T, files map[string]string) (*httptest.Server, *site) {
	s := &site{asked: make(map[string]int), files: files}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.asked[r.URL.Path]++
		s.mu.Unlock()
		body, ok := s.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, strings.ReplaceAll(body, "$HOST", "http://"+r.Host))
	}))
	t.Cleanup(srv.Close)
	return srv, s
}

func (s *site) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[path]
}

// countingTransport passes requests to base and counts them; it refuses
// the paths in refuse, as a polite transport refuses what robots.txt
// disallows.
type countingTransport struct {
	base   http.RoundTripper
	refuse map[string]bool
	mu     sync.Mutex // guards n
	n      int
}

var errRefused = errors.New("refused by robots.txt")

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	if c.refuse[req.URL.Path] {
		return nil, fmt.Errorf("%s: %w", req.URL, errRefused)
	}
	return c.base.RoundTrip(req)
}

// walk runs w from the sources at srv and returns the page URLs passed on,
// in order, the reports by path, and the stats.
func walk(t *testing.T, w *Walker, srv *httptest.Server, sources ...Source) ([]string, map[string]Report, Stats) {
	t.Helper()
	reports := make(map[string]Report)
	w.Report = func(r Report) { reports[strings.TrimPrefix(r.URL, srv.URL)] = r }
	for i := range sources {
		sources[i].URL = srv.URL + sources[i].URL
		if sources[i].Robots != "" {
			sources[i].Robots = srv.URL + sources[i].Robots
		}
	}
	var got []string
	st, err := w.Walk(context.Background(), sources, func(e Entry) error {
		got = append(got, strings.TrimPrefix(e.URL, srv.URL))
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return got, reports, st
}

func index(locs ...string) string {
	var b strings.Builder
	b.WriteString("<sitemapindex>")
	for _, l := range locs {
		b.WriteString("<sitemap><loc>$HOST" + l + "</loc></sitemap>")
	}
	return b.String() + "</sitemapindex>"
}

func pages(locs ...string) string {
	var entries []string
	for _, l := range locs {
		entries = append(entries, "<loc>$HOST"+l+"</loc>")
	}
	return string(urlset(entries...))
}

func TestWalk(t *testing.T) {
	srv, s := newSite(t, map[string]string{
		"/index.xml":     index("/a.xml", "/b.xml.gz", "/a.xml", "/missing.xml", "/refused.xml", "/html.xml", "/nested.xml"),
		"/a.xml":         pages("/1", "/2"),
		"/b.xml.gz":      pages("/3"),
		"/html.xml":      "<html><body>Soft 404</body></html>",
		"/nested.xml":    index("/deep.xml"),
		"/deep.xml":      index("/deeper.xml"),
		"/deeper.xml":    pages("/never"),
		"/other.txt":     "$HOST/4\n",
		"/sub/pages.xml": pages("/sub/5", "/6"),
	})
	tr := &countingTransport{base: http.DefaultTransport, refuse: map[string]bool{"/refused.xml": true}}
	w := &Walker{Client: &http.Client{Transport: tr}}
	got, reports, st := walk(t, w, srv, Source{URL: "/index.xml"}, Source{URL: "/other.txt"}, Source{URL: "/index.xml"}, Source{URL: "/sub/pages.xml"})
	want := []string{"/4", "/sub/5", "/1", "/2", "/3"}
	if !slices.Equal(got, want) {
		t.Errorf("walked %q; want %q", got, want)
	}
	for path, n := range map[string]int{"/index.xml": 1, "/a.xml": 1, "/deep.xml": 1, "/deeper.xml": 0, "/refused.xml": 0} {
		if got := s.count(path); got != n {
			t.Errorf("%s fetched %d times; want %d", path, got, n)
		}
	}
	if tr.n != 10 {
		t.Errorf("the client's transport made %d requests; want all 10", tr.n)
	}
	wantStats := Stats{Sitemaps: 10, Failed: 3, URLs: 5, Skipped: 2}
	if st != wantStats {
		t.Errorf("Stats = %+v; want %+v", st, wantStats)
	}
	checks := []struct {
		path string
		ok   func(Report) bool
	}{
		{"/index.xml", func(r Report) bool { return r.Format == Index && r.Sitemaps == 6 && r.Err == nil && r.Depth == 0 }},
		{"/a.xml", func(r Report) bool { return r.Format == URLSet && r.URLs == 2 && r.Depth == 1 }},
		{"/missing.xml", func(r Report) bool {
			var se *StatusError
			return errors.As(r.Err, &se) && se.StatusCode == 404 && errors.Is(r.Err, ErrStatus)
		}},
		{"/refused.xml", func(r Report) bool { return errors.Is(r.Err, errRefused) && r.Format == "" }},
		{"/html.xml", func(r Report) bool { return errors.Is(r.Err, ErrNotSitemap) }},
		{"/sub/pages.xml", func(r Report) bool {
			return r.URLs == 1 && r.NumSkipped == 1 && r.Skipped[0].Reason == "out of scope"
		}},
		{"/deep.xml", func(r Report) bool {
			return r.Depth == 2 && r.Sitemaps == 0 && r.NumSkipped == 1 && r.Skipped[0].Reason == "nested deeper than MaxDepth"
		}},
	}
	for _, c := range checks {
		if r, ok := reports[c.path]; !ok || !c.ok(r) {
			t.Errorf("report of %s: %+v", c.path, r)
		}
	}
}

func TestWalkRobotsNamedSitemapsMayListTheirSite(t *testing.T) {
	// robots.txt names an index in a directory of its own, whose
	// sitemaps list pages all over the site: the index's robots.txt
	// vouches for them.
	srv, _ := newSite(t, map[string]string{
		"/maps/index.xml": index("/maps/a.xml"),
		"/maps/a.xml":     pages("/", "/blog/1"),
	})
	got, _, _ := walk(t, &Walker{}, srv, Source{URL: "/maps/index.xml", Robots: "/robots.txt"})
	if want := []string{"/", "/blog/1"}; !slices.Equal(got, want) {
		t.Errorf("walked %q; want %q", got, want)
	}
	got, _, st := walk(t, &Walker{}, srv, Source{URL: "/maps/index.xml"})
	if len(got) != 0 || st.Skipped != 2 {
		t.Errorf("not named by robots.txt: walked %q, %d skipped; want none, 2", got, st.Skipped)
	}
}

func TestWalkLimits(t *testing.T) {
	srv, s := newSite(t, map[string]string{
		"/index.xml":  index("/1.xml", "/2.xml", "/3.xml", "/4.xml"),
		"/1.xml":      pages("/a"),
		"/2.xml":      pages("/b"),
		"/3.xml":      pages("/c"),
		"/4.xml":      pages("/d"),
		"/nested.xml": index("/index.xml"),
	})
	got, reports, st := walk(t, &Walker{Limits: Limits{MaxSitemaps: 3}}, srv, Source{URL: "/index.xml"})
	if want := []string{"/a", "/b"}; !slices.Equal(got, want) || st.Sitemaps != 3 || s.count("/3.xml") != 0 {
		t.Errorf("MaxSitemaps 3: walked %q in %d sitemaps; want %q in 3", got, st.Sitemaps, want)
	}
	if r := reports["/index.xml"]; r.NumSkipped != 2 || r.Skipped[0].Reason != "more sitemaps than MaxSitemaps" {
		t.Errorf("index report %+v", r)
	}
	got, _, _ = walk(t, &Walker{Limits: Limits{MaxDepth: -1}}, srv, Source{URL: "/index.xml"})
	if len(got) != 0 {
		t.Errorf("MaxDepth -1: walked %q; want nothing", got)
	}
	got, _, _ = walk(t, &Walker{Limits: Limits{MaxDepth: 1}}, srv, Source{URL: "/nested.xml"})
	if len(got) != 0 {
		t.Errorf("MaxDepth 1, an index of indexes: walked %q; want nothing", got)
	}
	before := s.count("/2.xml")
	_, reports, st = walk(t, &Walker{Limits: Limits{MaxSitemaps: 1}}, srv, Source{URL: "/1.xml"}, Source{URL: "/2.xml"})
	if r := reports["/2.xml"]; !errors.Is(r.Err, ErrTooMany) || st.Skipped != 1 || s.count("/2.xml") != before {
		t.Errorf("a source past MaxSitemaps: report %+v, stats %+v", r, st)
	}
}

func TestWalkSince(t *testing.T) {
	srv, s := newSite(t, map[string]string{
		"/index.xml": `<sitemapindex>
			<sitemap><loc>$HOST/old.xml</loc><lastmod>2004-01-01T20:00:00+00:00</lastmod></sitemap>
			<sitemap><loc>$HOST/new.xml</loc><lastmod>2005-01-01</lastmod></sitemap></sitemapindex>`,
		"/old.xml": pages("/old"),
		"/new.xml": string(urlset("<loc>$HOST/english/</loc><lastmod>2010-01-01</lastmod>",
			"<loc>$HOST/portuguese/</loc><lastmod>2004-06-01</lastmod>", "<loc>$HOST/undated/</loc>")),
	})
	since := time.Date(2005, 1, 1, 0, 0, 0, 0, time.UTC)
	got, _, st := walk(t, &Walker{Since: since}, srv, Source{URL: "/index.xml"})
	if want := []string{"/english/", "/undated/"}; !slices.Equal(got, want) || st.Unchanged != 2 || s.count("/old.xml") != 0 {
		t.Errorf("walked %q, %d unchanged, /old.xml fetched %d times; want %q, 2, 0", got, st.Unchanged, s.count("/old.xml"), want)
	}
}

func TestWalkStops(t *testing.T) {
	srv, _ := newSite(t, map[string]string{"/a.xml": pages("/1", "/2", "/3"), "/b.xml": pages("/4")})
	stop := errors.New("frontier full")
	n := 0
	w := &Walker{}
	st, err := w.Walk(context.Background(), []Source{{URL: srv.URL + "/a.xml"}, {URL: srv.URL + "/b.xml"}}, func(Entry) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || st.URLs != 1 || st.Sitemaps != 1 {
		t.Errorf("Walk = %+v, %v; want 1 URL of 1 sitemap, %v", st, err, stop)
	}
}

func TestWalkHostileServers(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := w.(http.Flusher)
		switch r.URL.Path {
		case "/endless.xml": // entries that never end
			io.WriteString(w, "<urlset>")
			for i := 0; r.Context().Err() == nil; i++ {
				fmt.Fprintf(w, "<url><loc>http://%s/%d</loc></url>", r.Host, i)
			}
		case "/blank.xml": // white space that never ends
			for r.Context().Err() == nil {
				io.WriteString(w, strings.Repeat(" ", 4096))
			}
		case "/bomb.xml.gz":
			w.Write(bomb(t, 8<<20))
		case "/stalls.xml": // an entry, then nothing until the client leaves
			fmt.Fprintf(w, "<urlset><url><loc>http://%s/first</loc></url>", r.Host)
			f.Flush()
			select {
			case <-r.Context().Done():
			case <-block:
			}
		}
	}))
	defer srv.Close()
	defer close(block)

	reports := make(map[string]Report)
	w := &Walker{Limits: Limits{MaxURLs: 1000, MaxBytes: 1 << 20}, Report: func(r Report) {
		reports[strings.TrimPrefix(r.URL, srv.URL)] = r
	}}
	st, err := w.Walk(context.Background(), []Source{
		{URL: srv.URL + "/endless.xml"}, {URL: srv.URL + "/blank.xml"}, {URL: srv.URL + "/bomb.xml.gz"},
	}, func(Entry) error { return nil })
	if err != nil || st.URLs != 1000 || st.Failed != 3 {
		t.Errorf("Walk = %+v, %v; want 1000 URLs and 3 failed", st, err)
	}
	for path, want := range map[string]error{"/endless.xml": ErrTooMany, "/blank.xml": ErrTooLarge, "/bomb.xml.gz": ErrTooLarge} {
		if !errors.Is(reports[path].Err, want) {
			t.Errorf("%s: %v; want %v", path, reports[path].Err, want)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	st, err = w.Walk(ctx, []Source{{URL: srv.URL + "/stalls.xml"}}, func(Entry) error {
		cancel() // the crawl is called off while the server stalls
		return nil
	})
	if !errors.Is(err, context.Canceled) || st.URLs != 1 {
		t.Errorf("Walk = %+v, %v; want 1 URL, context.Canceled", st, err)
	}
	http.DefaultClient.CloseIdleConnections()
}

// bomb returns a gzip stream of n zero bytes: about 1,000 times smaller.
func bomb(t testing.TB, n int) []byte {
	t.Helper()
	return gz(make([]byte, n))
}

func TestFromRobots(t *testing.T) {
	f := robotstxt.Parse([]byte("User-agent: *\nDisallow: /private/\nSitemap: https://example.com/sitemap-index.xml\n" +
		"Sitemap: HTTP://cdn.example.net/s.xml.gz\nSitemap: /relative.xml\n"))
	got := FromRobots("https://example.com/robots.txt", f)
	want := []Source{
		{URL: "https://example.com/sitemap-index.xml", Robots: "https://example.com/robots.txt"},
		{URL: "http://cdn.example.net/s.xml.gz", Robots: "https://example.com/robots.txt"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("FromRobots = %+v; want %+v", got, want)
	}
	for _, f := range []*robotstxt.File{nil, robotstxt.Parse([]byte("User-agent: *\nDisallow:\n"))} {
		got := FromRobots("https://example.com:8443/robots.txt", f)
		if want := []Source{{URL: "https://example.com:8443/sitemap.xml"}}; !slices.Equal(got, want) {
			t.Errorf("FromRobots, no Sitemap line = %+v; want %+v", got, want)
		}
	}
	if got := FromRobots("/robots.txt", nil); got != nil {
		t.Errorf("FromRobots of a relative URL = %+v; want nil", got)
	}
}
