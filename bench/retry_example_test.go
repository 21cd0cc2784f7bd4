package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/polite-go/polite"
)

// A retry library must not retry a robots.txt refusal: no request reached
// the server, and the next try would be refused in the same way. With
// go-retryablehttp, a CheckRetry that stops on polite.ErrRobotsBlocked, and
// otherwise defers to the default policy, does it. The transport goes under
// the retrying client, so each try is paced and backed off.
func Example_retryablehttp() {
	var pages atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		pages.Add(1)
	}))
	defer site.Close()

	client := retryablehttp.NewClient()
	client.Logger = nil
	client.HTTPClient.Transport = polite.New(nil, polite.WithPacing(polite.PacingPolicy{BaseDelay: polite.None}))
	tries := 0
	client.RequestLogHook = func(retryablehttp.Logger, *http.Request, int) { tries++ }
	client.CheckRetry = func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if errors.Is(err, polite.ErrRobotsBlocked) {
			return false, err // never retry a refusal
		}
		return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
	}

	_, err := client.Get(site.URL + "/private/report")
	fmt.Println("refused:", errors.Is(err, polite.ErrRobotsBlocked))
	fmt.Println("tries:", tries, "requests the server saw:", pages.Load())
	// Output:
	// refused: true
	// tries: 1 requests the server saw: 0
}
