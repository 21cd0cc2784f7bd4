package polite

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polite-go/polite/pace"
)

// roundTripFunc is a base RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// hit is one request a fakeBase received.
type hit struct {
	at   time.Time
	url  string
	ua   string
	hdrs http.Header
}

// fakeBase is a base RoundTripper that answers with fn and records every
// request it gets. It works inside a synctest bubble, where httptest servers
// do not.
type fakeBase struct {
	fn func(*http.Request) (*http.Response, error)

	mu   sync.Mutex // guards hits
	hits []hit
}

func (f *fakeBase) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.hits = append(f.hits, hit{at: time.Now(), url: r.URL.String(), ua: r.Header.Get("User-Agent"), hdrs: r.Header.Clone()})
	f.mu.Unlock()
	if r.Body != nil {
		r.Body.Close()
	}
	return f.fn(r)
}

// requests returns the URLs requested so far, in order.
func (f *fakeBase) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var urls []string
	for _, h := range f.hits {
		urls = append(urls, h.url)
	}
	return urls
}

func (f *fakeBase) hitList() []hit {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]hit(nil), f.hits...)
}

// count returns how many requests had a URL ending in suffix.
func (f *fakeBase) count(suffix string) int {
	n := 0
	for _, u := range f.requests() {
		if strings.HasSuffix(u, suffix) {
			n++
		}
	}
	return n
}

// site returns a fakeBase that serves robots as /robots.txt (status 200)
// and "ok" for every other path.
func site(robots string) *fakeBase {
	return &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/robots.txt" {
			return respond(r, 200, robots), nil
		}
		return respond(r, 200, "ok"), nil
	}}
}

// respond builds a response to r; hdr holds header names and values in turn.
func respond(r *http.Request, status int, body string, hdr ...string) *http.Response {
	h := make(http.Header)
	for i := 0; i+1 < len(hdr); i += 2 {
		h.Add(hdr[i], hdr[i+1])
	}
	return &http.Response{
		StatusCode: status,
		Status:     http.StatusText(status),
		Header:     h,
		Body:       io.NopCloser(strings.NewReader(body)),
		Request:    r,
	}
}

// closeCounter is a request body that counts its Close calls.
type closeCounter struct {
	io.Reader
	closes atomic.Int32
}

func (c *closeCounter) Close() error {
	c.closes.Add(1)
	return nil
}

func newBody(s string) *closeCounter { return &closeCounter{Reader: strings.NewReader(s)} }

// defaultPacing is the policy of a transport built with no WithPacing.
var defaultPacing = pace.Policy{}.Effective()

// The Outcomes of each class.
var (
	outSuccess = pace.Outcome{Class: pace.Success}
	outNeutral = pace.Outcome{Class: pace.Neutral}
	outSignal  = pace.Outcome{Class: pace.Signal}
)

// quick is the options for tests where pacing does not matter.
var quick = []Option{WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None})}

// noneIfZero returns v, or pace.None for 0: a pace.Policy field of v, where 0
// means the value 0 and not the default.
func noneIfZero[T ~int | ~int64 | ~float64](v T) T {
	if v == 0 {
		return pace.None
	}
	return v
}

func opts(extra ...Option) []Option { return append(append([]Option(nil), quick...), extra...) }

// errText returns err's text, or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// statsOf returns tr.Stats, failing the test on an error.
func statsOf(tb testing.TB, tr *PoliteTransport) []HostStats {
	tb.Helper()
	s, err := tr.Stats(context.Background())
	if err != nil {
		tb.Fatalf("Stats: %v", err)
	}
	return s
}
