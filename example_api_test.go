package polite_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

// newAPI starts a small API whose robots.txt, like many API hosts', keeps
// every crawler out, and which tells its clients their quota.
func newAPI() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /\n")
			return
		}
		w.Header().Set("RateLimit-Policy", `"default";q=100;w=60`)
		w.Header().Set("RateLimit", `"default";r=99;t=60`)
		fmt.Fprint(w, `{"ok":true}`)
	}))
}

// An SDK wraps its client in a PoliteTransport with APIDefaults: robots.txt,
// which speaks to crawlers, is off, and nothing paces the API until it
// signals, by a 429, a 503, a Retry-After or its rate-limit fields.
func Example_apiClient() {
	api := newAPI()
	defer api.Close()

	client := &http.Client{Transport: polite.New(nil, polite.APIDefaults())}
	resp, err := client.Get(api.URL + "/v1/items")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.Status)
	// Output:
	// 200 OK
}

// WithRobotsMode with a host turns robots.txt off for the API the program
// is entitled to call, and leaves it enforced everywhere else.
func ExampleWithRobotsMode() {
	api := newAPI()
	defer api.Close()
	apiHost, _, _ := strings.Cut(strings.TrimPrefix(api.URL, "http://"), ":")

	tr := polite.New(nil, polite.WithPacing(pace.Policy{BaseDelay: pace.None}), polite.WithRobotsMode(polite.RobotsOff, apiHost))
	req, _ := http.NewRequest("GET", api.URL+"/v1/items", nil)
	d, err := tr.Check(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Mode, d.Allowed, d.Reason)
	// Output:
	// RobotsOff true robots.txt is off for this request
}

// ContextWithRobotsMode overrides the transport for one request: here an
// operator audits what robots.txt would refuse without refusing it.
func ExampleContextWithRobotsMode() {
	api := newAPI()
	defer api.Close()

	tr := polite.New(nil, polite.WithPacing(pace.Policy{BaseDelay: pace.None}))
	ctx := polite.ContextWithRobotsMode(context.Background(), polite.RobotsReport)
	req, _ := http.NewRequestWithContext(ctx, "GET", api.URL+"/v1/items", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	stats, err := tr.Stats(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Status, "sent; would have been refused:", stats[0].WouldRefuse)
	// Output:
	// 200 OK sent; would have been refused: 1
}

// WithPacing shapes the pause after a 429 or 503, and changes nothing
// else of the APIDefaults before it. With a small BackoffBase, a server's
// Retry-After is the wait.
func ExampleWithPacing() {
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer busy.Close()

	tr := polite.New(nil, polite.APIDefaults(),
		polite.WithPacing(pace.Policy{BackoffBase: 100 * time.Millisecond, MaxBackoff: 30 * time.Second}))
	resp, err := (&http.Client{Transport: tr}).Get(busy.URL + "/v1/items")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	stats, err := tr.Stats(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	s := stats[0]
	fmt.Println(resp.Status, "; level", s.Level, "; paused for about", time.Until(s.PausedUntil).Round(time.Second))
	// Output:
	// 429 Too Many Requests ; level 1 ; paused for about 1s
}

// WithPacingKey paces each origin apart, so that two services on one host
// name do not share a pace; PacingKey says which key a URL gets, so that a
// fleet can partition its URLs by it.
func ExampleWithPacingKey() {
	tr := polite.New(nil, polite.WithPacingKey(polite.PacingKeyOrigin))
	for _, raw := range []string{"http://Example.com/a", "http://example.com:8080/b", "https://example.com./c"} {
		u, _ := url.Parse(raw)
		fmt.Println(tr.PacingKey(u))
	}
	// Output:
	// http://example.com:80
	// http://example.com:8080
	// https://example.com:443
}

// WithRobotsTransport sends robots.txt fetches through a transport without
// the credentials the base adds to every page request.
func ExampleWithRobotsTransport() {
	api := newAPI()
	defer api.Close()

	plain := http.DefaultTransport
	authed := roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer secret")
		return plain.RoundTrip(r)
	})
	tr := polite.New(authed, polite.WithPacing(pace.Policy{BaseDelay: pace.None}), polite.WithRobotsTransport(plain))
	_, err := (&http.Client{Transport: tr}).Get(api.URL + "/v1/items")
	fmt.Println(errors.Is(err, polite.ErrRobotsBlocked))
	// Output:
	// true
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Rate-limit fields slow a host before it answers 429: with no quota left,
// the transport waits for the reset before the next request.
func Example_rateLimit() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("RateLimit-Policy", `"hourly";q=100;w=3600`)
		w.Header().Set("RateLimit", `"hourly";r=0;t=30`) // none left for 30s
		fmt.Fprint(w, `{"ok":true}`)
	}))
	defer api.Close()

	tr := polite.New(nil, polite.APIDefaults())
	resp, err := (&http.Client{Transport: tr}).Get(api.URL + "/v1/items")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	req, _ := http.NewRequest("GET", api.URL+"/v1/items", nil)
	ready, _ := tr.Ready(req)
	fmt.Println("next request in about", time.Until(ready.Next).Round(time.Second))
	// Output:
	// next request in about 30s
}
