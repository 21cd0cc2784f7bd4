package frontier_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/pace"
)

// A crawler of one worker: each page lists its links, one a word. The
// URL that robots.txt disallows is reported and dropped before it takes a
// turn, and the links found again are not queued twice.
func Example() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
		case "/":
			fmt.Fprint(w, "/a /private/b /c")
		case "/a":
			fmt.Fprint(w, "/ /c")
		}
	}))
	defer site.Close()

	tr := polite.New(nil, polite.WithUserAgent("ExampleBot/1.0 (+https://example.com/bot)"),
		polite.WithPacing(pace.Policy{BaseDelay: 10 * time.Millisecond}))
	f := frontier.New(tr, frontier.Options{
		Seen: new(frontier.SeenSet).Seen,
		Refused: func(u string, d polite.Decision) {
			fmt.Println("refused:", strings.TrimPrefix(u, site.URL), "by", d.Rule)
		},
	})
	ctx := context.Background()
	f.Add(ctx, site.URL+"/")
	client := &http.Client{Transport: tr}
	for {
		t, err := f.Next(ctx)
		if err != nil {
			break // frontier.ErrEmpty: the crawl is over
		}
		if resp, err := client.Get(t.URL); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Println("fetched:", strings.TrimPrefix(t.URL, site.URL))
			for _, link := range strings.Fields(string(body)) {
				f.Add(ctx, site.URL+link)
			}
		}
		t.Done()
	}
	// Output:
	// fetched: /
	// fetched: /a
	// refused: /private/b by Disallow: /private/
	// fetched: /c
}

// A pool of workers over three hosts: each worker takes a URL whose host
// is ready, so that no worker waits in the transport while another host
// could take a request.
func Example_workers() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "a page")
	}))
	defer site.Close()
	// The three hosts are one server on loopback.
	base := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, site.Listener.Addr().String())
	}}

	tr := polite.New(base, polite.WithUserAgent("ExampleBot/1.0 (+https://example.com/bot)"),
		polite.WithPacing(pace.Policy{BaseDelay: 10 * time.Millisecond}))
	f := frontier.New(tr, frontier.Options{})
	ctx := context.Background()
	for _, host := range []string{"a.test", "b.test", "c.test"} {
		for i := range 3 {
			f.Add(ctx, fmt.Sprintf("http://%s/page/%d", host, i))
		}
	}
	client := &http.Client{Transport: tr}
	var mu sync.Mutex
	fetched := 0
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				t, err := f.Next(ctx)
				if err != nil {
					return
				}
				if resp, err := client.Get(t.URL); err == nil {
					resp.Body.Close()
					mu.Lock()
					fetched++
					mu.Unlock()
				}
				t.Done()
			}
		})
	}
	wg.Wait()
	fmt.Println("pages fetched:", fetched)
	// Output:
	// pages fetched: 9
}

// A SeenSet remembers every URL it was asked about.
func ExampleSeenSet() {
	var s frontier.SeenSet
	for _, u := range []string{"https://example.com/a", "https://example.com/b", "https://example.com/a"} {
		seen, _ := s.Seen(context.Background(), u)
		fmt.Println(u, seen)
	}
	fmt.Println(s.Len(), "URLs")
	// Output:
	// https://example.com/a false
	// https://example.com/b false
	// https://example.com/a true
	// 2 URLs
}

// Add refuses a URL past a bound; the crawler may add it again later.
func ExampleFrontier_Add() {
	tr := polite.New(nil)
	f := frontier.New(tr, frontier.Options{MaxHostURLs: 2})
	ctx := context.Background()
	for _, u := range []string{"https://a.example/1", "https://a.example/2", "https://a.example/3", "https://b.example/1"} {
		queued, err := f.Add(ctx, u)
		fmt.Println(u, queued, err)
	}
	fmt.Println(f.Len(), "queued;", f.HostLen("a.example"), "for a.example")
	// Output:
	// https://a.example/1 true <nil>
	// https://a.example/2 true <nil>
	// https://a.example/3 false frontier: the host's queue is full
	// https://b.example/1 true <nil>
	// 3 queued; 2 for a.example
}

// The loop of a crawler: each turn is a URL whose host can start now,
// and the turn ends when the worker is done with it. (Compiled, not run:
// it crawls example.com.)
func ExampleFrontier_Next() {
	tr := polite.New(nil, polite.WithUserAgent("ExampleBot/1.0 (+https://example.com/bot)"))
	client := &http.Client{Transport: tr}
	ctx := context.Background()

	f := frontier.New(tr, frontier.Options{Dedup: true})
	f.Add(ctx, "https://example.com/")
	for {
		t, err := f.Next(ctx)
		if err != nil {
			break // ErrEmpty: nothing queued and nothing out; or ctx ended
		}
		if resp, err := client.Get(t.URL); err == nil { // starts at once: the host is ready
			// ... f.Add the links of the page ...
			resp.Body.Close()
		}
		t.Done()
	}
}
