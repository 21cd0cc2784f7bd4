package frontier_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/pace"
)

// A start is a request as the fake web saw it start.
type start struct {
	url    string
	at     time.Time
	status int
}

// fakeWeb is a base RoundTripper for tests inside a synctest bubble, where
// httptest servers do not work. Every page answers 200 with the links that
// links gives it, unless its host is paused: then its first page request
// answers 429 with Retry-After: pause. A robots.txt is robots[host], or
// 404. A request for a path in slow takes that long to answer.
type fakeWeb struct {
	robots map[string]string        // by host
	links  map[string][]string      // by URL
	pause  map[string]int           // seconds of Retry-After, by host
	slow   map[string]time.Duration // by path

	mu     sync.Mutex // guards the fields below
	starts []start    // in order
	paused map[string]bool
}

func (w *fakeWeb) RoundTrip(req *http.Request) (*http.Response, error) {
	host, path := req.URL.Host, req.URL.Path
	status, body, header := http.StatusOK, "", http.Header{"Content-Type": {"text/html"}}
	w.mu.Lock()
	switch {
	case path == "/robots.txt":
		r, ok := w.robots[host]
		if !ok {
			status = http.StatusNotFound
		}
		body = r
	case w.pause[host] > 0 && !w.paused[host]:
		if w.paused == nil {
			w.paused = make(map[string]bool)
		}
		w.paused[host] = true
		status = http.StatusTooManyRequests
		header.Set("Retry-After", strconv.Itoa(w.pause[host]))
	default:
		for _, l := range w.links[req.URL.String()] {
			body += fmt.Sprintf("%s\n", l)
		}
	}
	w.starts = append(w.starts, start{url: req.URL.String(), at: time.Now(), status: status})
	w.mu.Unlock()
	if d := w.slow[path]; d > 0 {
		time.Sleep(d)
	}
	return &http.Response{StatusCode: status, Header: header, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

// log returns the requests started so far.
func (w *fakeWeb) log() []start {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]start(nil), w.starts...)
}

// pages returns the requests started so far, robots.txt fetches left out.
func (w *fakeWeb) pages() []start {
	var out []start
	for _, s := range w.log() {
		if !strings.HasSuffix(s.url, "/robots.txt") {
			out = append(out, s)
		}
	}
	return out
}

// pacing is the tests' policy: 1 s between requests to a host, no jitter.
var pacing = polite.WithPacing(pace.Policy{BaseDelay: time.Second, Jitter: pace.None})

// A handout is a URL that Next handed out, and when.
type handout struct {
	url string
	at  time.Time
}

// crawler runs workers over a Frontier and a client, recording what they
// are handed. Each worker adds the links of the page, one a line, then
// ends its turn: Requeue for a 429 tried fewer than retries times, Done
// otherwise.
type crawler struct {
	f       *frontier.Frontier
	client  *http.Client
	retries int

	mu       sync.Mutex // guards the fields below
	handouts []handout
	tries    map[string]int
	errs     []error // Next's, other than ErrEmpty
}

func newCrawler(f *frontier.Frontier, rt http.RoundTripper) *crawler {
	return &crawler{f: f, client: &http.Client{Transport: rt}, retries: 1, tries: make(map[string]int)}
}

// run runs workers until Next fails for all of them.
func (c *crawler) run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				t, err := c.f.Next(ctx)
				if err != nil {
					if !errors.Is(err, frontier.ErrEmpty) {
						c.mu.Lock()
						c.errs = append(c.errs, err)
						c.mu.Unlock()
					}
					return
				}
				c.visit(ctx, t)
			}
		})
	}
	wg.Wait()
}

func (c *crawler) visit(ctx context.Context, t frontier.Turn) {
	c.mu.Lock()
	c.handouts = append(c.handouts, handout{t.URL, time.Now()})
	c.tries[t.URL]++
	tries := c.tries[t.URL]
	c.mu.Unlock()
	resp, err := c.client.Get(t.URL)
	if err != nil {
		t.Done()
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, l := range strings.Fields(string(body)) {
		c.f.Add(ctx, l)
	}
	if resp.StatusCode == http.StatusTooManyRequests && tries <= c.retries {
		t.Requeue()
		return
	}
	t.Done()
}

// handed returns the hand-outs so far.
func (c *crawler) handed() []handout {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]handout(nil), c.handouts...)
}

// waitedInTransport returns the pages that started later than they were
// handed out: those that waited in the transport. The i-th hand-out of a
// URL is matched with its i-th start.
func waitedInTransport(handouts []handout, starts []start) []string {
	at := make(map[string][]time.Time)
	for _, h := range handouts {
		at[h.url] = append(at[h.url], h.at)
	}
	var waited []string
	n := make(map[string]int)
	for _, s := range starts {
		i := n[s.url]
		n[s.url]++
		if i < len(at[s.url]) && s.at.After(at[s.url][i]) {
			waited = append(waited, fmt.Sprintf("%s waited %v", s.url, s.at.Sub(at[s.url][i])))
		}
	}
	return waited
}

// mustAdd adds every URL to f, failing the test on an error.
func mustAdd(t *testing.T, f *frontier.Frontier, urls ...string) {
	t.Helper()
	for _, u := range urls {
		if _, err := f.Add(context.Background(), u); err != nil {
			t.Fatalf("Add(%q): %v", u, err)
		}
	}
}

// chain returns links that make host a chain of n pages: / links to /1,
// /1 to /2, and so on.
func chain(links map[string][]string, host string, n int) {
	prev := "http://" + host + "/"
	for i := 1; i <= n; i++ {
		u := "http://" + host + "/" + strconv.Itoa(i)
		links[prev] = append(links[prev], u)
		prev = u
	}
}

// hostOf returns the host of rawURL.
func hostOf(rawURL string) string {
	u, _ := url.Parse(rawURL)
	return u.Host
}
