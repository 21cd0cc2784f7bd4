package polite_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/polite-go/polite"
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
		polite.WithBaseDelay(50*time.Millisecond), // short for the example; the default is 1s
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
