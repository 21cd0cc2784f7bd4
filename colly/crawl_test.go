package politecolly

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/pace"
)

// anyHost returns a base transport that reaches s for every host name.
func anyHost(s *testSite) *http.Transport {
	return &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, s.Listener.Addr().String())
	}}
}

// TestCrawl crawls two hosts whose pages link to each other through a
// frontier: every page allowed is visited once, and the one robots.txt
// disallows is reported to the frontier's hook and never requested.
func TestCrawl(t *testing.T) {
	links := map[string][]string{
		"/":  {"/1", "/private/x", "http://b.test/"},
		"/1": {"/", "/2"},
		"/2": {"http://a.test/1"},
	}
	var visited sync.Map // host+path → visits
	s := newTestSite(t, "User-agent: *\nDisallow: /private/\n", func(w http.ResponseWriter, r *http.Request) {
		n, _ := visited.LoadOrStore(r.Host+r.URL.Path, new(int))
		*n.(*int)++
		fmt.Fprint(w, "<html><body>")
		for _, l := range links[r.URL.Path] {
			fmt.Fprintf(w, "<a href=%q>x</a>", l)
		}
		fmt.Fprint(w, "</body></html>")
	})
	c, tr := NewCollector(recipeUA, Options{Base: anyHost(s), Timeout: time.Minute,
		Polite: []polite.Option{polite.WithPacing(pace.Policy{BaseDelay: 20 * time.Millisecond, Jitter: pace.None})}})
	var mu sync.Mutex
	var refused []string
	f := frontier.New(tr, frontier.Options{Seen: new(frontier.SeenSet).Seen, Refused: func(u string, _ polite.Decision) {
		mu.Lock()
		refused = append(refused, u)
		mu.Unlock()
	}})
	ctx := context.Background()
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		f.Add(ctx, e.Request.AbsoluteURL(e.Attr("href")))
	})
	f.Add(ctx, "http://a.test/")
	if err := Crawl(ctx, c, f, 3); err != nil {
		t.Fatalf("Crawl: %v", err)
	}

	var got []string
	visited.Range(func(k, v any) bool {
		got = append(got, fmt.Sprintf("%s×%d", k, *v.(*int)))
		return true
	})
	slices.Sort(got)
	want := []string{"a.test/1×1", "a.test/2×1", "a.test/×1", "b.test/1×1", "b.test/2×1", "b.test/×1"}
	if !slices.Equal(got, want) {
		t.Errorf("visits %q; want %q", got, want)
	}
	slices.Sort(refused)
	if want := []string{"http://a.test/private/x", "http://b.test/private/x"}; !slices.Equal(refused, want) {
		t.Errorf("refused %q; want %q", refused, want)
	}
	if n := s.count("/robots.txt"); n != 2 {
		t.Errorf("robots.txt fetched %d times; want 2, once per host", n)
	}
}

// TestCrawlRefuses checks that Crawl fails for an Async collector, and
// returns when its context ends, with URLs still queued.
func TestCrawlRefuses(t *testing.T) {
	s := newTestSite(t, "", nil)
	tests := []struct {
		name  string
		async bool
		ctx   func() context.Context
		want  string
	}{
		{"async", true, context.Background, "not Async"},
		{"context ended", false, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, context.Canceled.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, tr := NewCollector(recipeUA, Options{Base: anyHost(s)})
			c.Async = tt.async
			f := frontier.New(tr, frontier.Options{})
			f.Add(context.Background(), "http://a.test/")
			err := Crawl(tt.ctx(), c, f, 2)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Crawl = %v; want an error saying %q", err, tt.want)
			}
			if f.Len() != 1 || s.count("/") != 0 {
				t.Errorf("%d URLs queued and %d visits; want 1 and 0", f.Len(), s.count("/"))
			}
		})
	}
}
