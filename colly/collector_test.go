package politecolly

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

const recipeUA = "RecipeBot/1.0 (+https://example.com/bot)"

// testSite serves robots as /robots.txt and a page for every other path,
// and counts what it receives.
type testSite struct {
	*httptest.Server

	mu     sync.Mutex        // guards hits and agents
	hits   map[string]int    // requests by path
	agents map[string]string // the last User-Agent by path
}

// newTestSite starts a site; handle, when not nil, answers the paths other
// than /robots.txt.
func newTestSite(t *testing.T, robots string, handle http.HandlerFunc) *testSite {
	s := &testSite{hits: map[string]int{}, agents: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.agents[r.URL.Path] = r.UserAgent()
		s.mu.Unlock()
		switch {
		case r.URL.Path == "/robots.txt":
			fmt.Fprint(w, robots)
		case handle != nil:
			handle(w, r)
		default:
			fmt.Fprint(w, "<html><body>page</body></html>")
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *testSite) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func (s *testSite) agent(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agents[path]
}

// isTimeout reports whether err says that a deadline passed.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// TestRecipeUserAgentGroup serves a robots.txt whose group for the recipe's
// token disallows /private/ and whose "*" group allows everything. The
// recipe obeys its group, whatever colly's environment says;
// polite.WithUserAgent alone, under colly's User-Agent, does not.
func TestRecipeUserAgentGroup(t *testing.T) {
	t.Setenv("COLLY_USER_AGENT", "OtherBot/2.0") // the recipe's ua wins
	const robots = "User-agent: RecipeBot\nDisallow: /private/\n\nUser-agent: *\nDisallow:\n"
	for _, tc := range []struct {
		name        string
		collector   func() *colly.Collector
		wantPrivate int // requests for /private/1 the site receives
	}{
		{"recipe", func() *colly.Collector {
			c, _ := NewCollector(recipeUA, Options{Timeout: time.Minute, Polite: []polite.Option{polite.WithPacing(pace.Policy{BaseDelay: pace.None})}})
			return c
		}, 0},
		{"polite's User-Agent alone", func() *colly.Collector {
			c := colly.NewCollector()
			c.WithTransport(polite.New(nil, polite.WithUserAgent(recipeUA), polite.WithPacing(pace.Policy{BaseDelay: pace.None})))
			return c
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSite(t, robots, nil)
			c := tc.collector()
			if err := c.Visit(s.URL + "/public/1"); err != nil {
				t.Fatalf("Visit /public/1: %v", err)
			}
			err := c.Visit(s.URL + "/private/1")
			if got := s.count("/private/1"); got != tc.wantPrivate {
				t.Errorf("requests for /private/1 = %d; want %d (Visit: %v)", got, tc.wantPrivate, err)
			}
			if tc.wantPrivate == 0 && !errors.Is(err, polite.ErrRobotsBlocked) {
				t.Errorf("Visit /private/1 = %v; want ErrRobotsBlocked", err)
			}
			if tc.wantPrivate == 0 {
				for _, path := range []string{"/robots.txt", "/public/1"} {
					if got := s.agent(path); got != recipeUA {
						t.Errorf("User-Agent of %s = %q; want %q", path, got, recipeUA)
					}
				}
			}
		})
	}
}

// TestRecipeCrawlDelay serves Crawl-delay: 12, clamped to 600ms by
// WithMaxCrawlDelay, with no base delay, and a request timeout of 400ms,
// shorter than the pace: with colly's http.Client.Timeout, which counts the wait, every
// page times out; with the recipe's deadline, which does not, both pages
// come.
func TestRecipeCrawlDelay(t *testing.T) {
	const timeout = 400 * time.Millisecond
	opts := []polite.Option{polite.WithPacing(pace.Policy{MaxCrawlDelay: 600 * time.Millisecond, BaseDelay: pace.None, Jitter: pace.None})}
	for _, tc := range []struct {
		name      string
		collector func() *colly.Collector
		wantPages int
	}{
		{"colly's Timeout", func() *colly.Collector {
			c := colly.NewCollector(colly.UserAgent(recipeUA))
			c.SetRequestTimeout(timeout)
			c.WithTransport(polite.New(nil, append(opts, polite.WithUserAgent(recipeUA))...))
			return c
		}, 0},
		{"recipe", func() *colly.Collector {
			c, _ := NewCollector(recipeUA, Options{Timeout: timeout, Polite: opts})
			return c
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSite(t, "User-agent: *\nCrawl-delay: 12\n", nil)
			c := tc.collector()
			for _, path := range []string{"/1", "/2"} {
				err := c.Visit(s.URL + path)
				if tc.wantPages == 0 && !isTimeout(err) {
					t.Errorf("Visit %s = %v; want a timeout", path, err)
				}
				if tc.wantPages > 0 && err != nil {
					t.Errorf("Visit %s: %v", path, err)
				}
			}
			if got := s.count("/1") + s.count("/2"); got != tc.wantPages {
				t.Errorf("pages the site received = %d; want %d", got, tc.wantPages)
			}
		})
	}
}

// TestRecipeDeadline checks that the recipe's deadline bounds a server that
// is slow to send the headers, or the body. The first timeout backs the
// host off; WithBackoff(0, …) makes that pause nothing.
func TestRecipeDeadline(t *testing.T) {
	stop := make(chan struct{})
	s := newTestSite(t, "", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow-body" {
			w.Write([]byte("<html>"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-stop:
		case <-time.After(10 * time.Second): // no deadline: Visit succeeds, and the test fails
		}
	})
	defer close(stop) // before the site closes: it waits for its handlers
	c, _ := NewCollector(recipeUA, Options{Timeout: 200 * time.Millisecond, Polite: []polite.Option{polite.WithPacing(pace.Policy{BaseDelay: pace.None, BackoffBase: pace.None, MaxBackoff: time.Minute})}})
	for _, path := range []string{"/slow-headers", "/slow-body"} {
		if err := c.Visit(s.URL + path); !isTimeout(err) {
			t.Errorf("Visit %s = %v; want a timeout", path, err)
		}
	}
}

// TestRecipeOneRobotsFetch counts the robots.txt requests the site receives
// for three pages: one, polite's, with the recipe, even when colly's
// environment asks for its own check; two with colly's check turned back
// on.
func TestRecipeOneRobotsFetch(t *testing.T) {
	t.Setenv("COLLY_IGNORE_ROBOTSTXT", "no")
	for _, tc := range []struct {
		name        string
		collyRobots bool
		want        int
	}{
		{"recipe", false, 1},
		{"colly's check on", true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSite(t, "User-agent: *\nDisallow: /private/\n", nil)
			c, _ := NewCollector(recipeUA, Options{Timeout: time.Minute, Polite: []polite.Option{polite.WithPacing(pace.Policy{BaseDelay: pace.None})}})
			if tc.collyRobots {
				c.IgnoreRobotsTxt = false
			}
			for _, path := range []string{"/1", "/2", "/3"} {
				if err := c.Visit(s.URL + path); err != nil {
					t.Fatalf("Visit %s: %v", path, err)
				}
			}
			if got := s.count("/robots.txt"); got != tc.want {
				t.Errorf("robots.txt requests = %d; want %d", got, tc.want)
			}
		})
	}
}

// ctxRecorder is a base transport that keeps the context of each request.
type ctxRecorder struct {
	mu   sync.Mutex // guards ctxs
	ctxs []context.Context
}

func (r *ctxRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.ctxs = append(r.ctxs, req.Context())
	r.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

// TestRecipeDeadlineReleased checks that a request's deadline ends once
// colly has read and closed the body, rather than running on to its end.
func TestRecipeDeadlineReleased(t *testing.T) {
	s := newTestSite(t, "", nil)
	rec := &ctxRecorder{}
	c, _ := NewCollector(recipeUA, Options{Base: rec, Timeout: time.Hour, Polite: []polite.Option{polite.WithPacing(pace.Policy{BaseDelay: pace.None})}})
	if err := c.Visit(s.URL + "/1"); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.ctxs) != 2 {
		t.Fatalf("requests = %d; want 2, robots.txt and /1", len(rec.ctxs))
	}
	for i, ctx := range rec.ctxs {
		if err := ctx.Err(); err != context.Canceled {
			t.Errorf("request %d: context error %v once done; want %v", i, err, context.Canceled)
		}
	}
}
