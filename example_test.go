package polite_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

// newSite starts a small web site whose robots.txt keeps robots out of
// /private/.
func newSite() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		fmt.Fprint(w, "hello from "+r.URL.Path)
	}))
}

// A PoliteTransport slots into any http.Client. Disallowed URLs fail with
// an error that matches ErrRobotsBlocked and never reach the server.
func Example() {
	site := newSite()
	defer site.Close()

	client := &http.Client{Transport: polite.New(nil,
		polite.WithUserAgent("ExampleBot/1.0 (+https://example.com/bot)"),
		polite.WithPacing(pace.Policy{BaseDelay: 50 * time.Millisecond}), // short for the example; the default is 1s
	)}
	for _, path := range []string{"/", "/private/report", "/about"} {
		resp, err := client.Get(site.URL + path)
		if errors.Is(err, polite.ErrRobotsBlocked) {
			fmt.Println(path, "-> blocked by robots.txt")
			continue
		}
		if err != nil {
			fmt.Println(path, "->", err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(path, "->", resp.Status, string(body))
	}
	// Output:
	// / -> 200 OK hello from /
	// /private/report -> blocked by robots.txt
	// /about -> 200 OK hello from /about
}

// The typed error says which robots.txt and which rule refused a URL.
func ExampleRobotsBlockedError() {
	site := newSite()
	defer site.Close()

	client := &http.Client{Transport: polite.New(nil, polite.WithUserAgent("ExampleBot/1.0"))}
	_, err := client.Get(site.URL + "/private/report")
	var blocked *polite.RobotsBlockedError
	if errors.As(err, &blocked) {
		fmt.Println("agent:", blocked.Agent)
		fmt.Println("rule:", blocked.Rule)
	}
	// Output:
	// agent: examplebot
	// rule: Disallow: /private/
}

// Check decides a URL without fetching it, which lets a crawler drop
// disallowed URLs before it queues them.
func ExamplePoliteTransport_Check() {
	site := newSite()
	defer site.Close()

	tr := polite.New(nil, polite.WithUserAgent("ExampleBot/1.0"))
	for _, path := range []string{"/docs/", "/private/report"} {
		req, _ := http.NewRequest("GET", site.URL+path, nil)
		d, err := tr.Check(req)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s allowed=%v group=%q rule=%q\n", path, d.Allowed, d.Group, d.Rule)
	}
	// Output:
	// /docs/ allowed=true group="*" rule=""
	// /private/report allowed=false group="*" rule="Disallow: /private/"
}

// Stats shows what the transport knows about each host: requests, refusals,
// the robots.txt in force, the pace and any backoff.
func ExamplePoliteTransport_Stats() {
	site := newSite()
	defer site.Close()

	tr := polite.New(nil, polite.WithPacing(pace.Policy{BaseDelay: 10 * time.Millisecond}))
	client := &http.Client{Transport: tr}
	for _, path := range []string{"/a", "/private/b", "/c"} {
		if resp, err := client.Get(site.URL + path); err == nil {
			resp.Body.Close()
		}
	}
	stats, err := tr.Stats(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range stats {
		fmt.Printf("%s: %d requests, %d blocked, backoff level %d\n", h.Key, h.Requests, h.Refused, h.Level)
		for _, r := range h.Robots {
			fmt.Printf("  robots.txt status %d, %d rules\n", r.Status, r.Rules)
		}
	}
	// Output:
	// 127.0.0.1: 3 requests, 1 blocked, backoff level 0
	//   robots.txt status 200, 1 rules
}

// WithEvents delivers what the transport does; here, a robots.txt fetch
// and a refusal.
func ExampleWithEvents() {
	site := newSite()
	defer site.Close()

	var kinds []string
	tr := polite.New(nil, polite.WithPacing(pace.Policy{BaseDelay: pace.None}), polite.WithEvents(func(ev polite.Event) {
		kinds = append(kinds, ev.Kind.String()) // requests here come one at a time
	}))
	_, err := (&http.Client{Transport: tr}).Get(site.URL + "/private/report")
	fmt.Println(errors.Is(err, polite.ErrRobotsBlocked))
	fmt.Println(kinds)
	// Output:
	// true
	// [robots.txt fetched refused by robots.txt]
}

// Ready tells a crawler's frontier which hosts may be asked now, without
// sending anything.
func ExamplePoliteTransport_Ready() {
	site := newSite()
	defer site.Close()

	// robots.txt off, so that the first request need not wait the base
	// delay after the robots.txt fetch.
	tr := polite.New(nil, polite.WithPacing(pace.Policy{BaseDelay: 10 * time.Second, Jitter: pace.None}), polite.WithRobotsMode(polite.RobotsOff))
	resp, err := (&http.Client{Transport: tr}).Get(site.URL + "/a")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	req, _ := http.NewRequest("GET", site.URL+"/b", nil)
	r, _ := tr.Ready(req)
	fmt.Println("busy:", r.Busy, "; ready in about", time.Until(r.Next).Round(time.Second))
	// Output:
	// busy: false ; ready in about 10s
}

// Transports that share a RobotsStore fetch each origin's robots.txt once
// between them; so do the processes of a fleet that share a store in
// Redis (package politeredis).
func ExampleWithRobotsStore() {
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fetches.Add(1)
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()

	store := polite.NewMemoryRobotsStore(10_000)
	for range 2 { // two transports, as two crawlers in one program
		client := &http.Client{Transport: polite.New(nil, polite.WithRobotsStore(store))}
		_, err := client.Get(srv.URL + "/private/page")
		fmt.Println(errors.Is(err, polite.ErrRobotsBlocked))
	}
	fmt.Println("robots.txt fetched", fetches.Load(), "time")
	// Output:
	// true
	// true
	// robots.txt fetched 1 time
}

// A crawler's client obeys robots.txt; an API client's does not read it,
// and nothing paces it until the server signals.
func Example_clients() {
	site := newSite()
	defer site.Close()

	crawler := &http.Client{Transport: polite.New(nil, polite.WithUserAgent("MyBot/1.0 (+https://example.com/bot)"))}
	sdk := &http.Client{Transport: polite.New(nil, polite.APIDefaults())}

	_, err := crawler.Get(site.URL + "/private/report")
	fmt.Println("crawler:", errors.Is(err, polite.ErrRobotsBlocked))
	resp, err := sdk.Get(site.URL + "/private/report")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println("sdk:", resp.Status)
	// Output:
	// crawler: true
	// sdk: 200 OK
}
