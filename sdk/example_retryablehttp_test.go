package politesdk_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
	politesdk "github.com/polite-go/polite/sdk"
)

// politeRetryPolicy is go-retryablehttp's default policy that stops on
// polite's refusals: a request robots.txt refused never reached the
// server, and one whose context ends before its host allows a start would
// wait in vain on every try.
func politeRetryPolicy(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if politesdk.Refused(err) {
		return false, err
	}
	return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
}

// go-retryablehttp retries over a PoliteTransport: the transport goes under
// the retrying client, so that each try is paced and backed off, and the
// client's CheckRetry stops on polite's refusals. Without it, a request
// whose host is paused past its deadline is tried until the deadline and
// ends with a bare "context deadline exceeded".
func Example_retryablehttp() {
	var calls atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("X-RateLimit-Remaining", "0") // polite holds the host for 5s
			w.Header().Set("X-RateLimit-Reset", "5")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer api.Close()

	client := retryablehttp.NewClient()
	client.Logger = nil
	client.RetryWaitMin, client.RetryWaitMax = 10*time.Millisecond, 10*time.Millisecond
	client.HTTPClient.Transport = polite.New(nil, polite.APIDefaults())
	client.CheckRetry = politeRetryPolicy
	tries := 0
	client.RequestLogHook = func(retryablehttp.Logger, *http.Request, int) { tries++ }

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	req, _ := retryablehttp.NewRequestWithContext(ctx, "GET", api.URL+"/v1/items", nil)
	_, err := client.Do(req)
	var late *pace.DeadlineError
	fmt.Println("stopped on polite's deadline:", errors.As(err, &late))
	fmt.Println("tries:", tries, "requests the server saw:", calls.Load())
	// Output:
	// stopped on polite's deadline: true
	// tries: 2 requests the server saw: 1
}

// A robots.txt refusal is final too: the policy stops at once, and the
// server sees nothing.
func Example_retryablehttpRobots() {
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
	client.HTTPClient.Transport = polite.New(nil, polite.WithPacing(pace.Policy{BaseDelay: pace.None}))
	client.CheckRetry = politeRetryPolicy
	tries := 0
	client.RequestLogHook = func(retryablehttp.Logger, *http.Request, int) { tries++ }

	_, err := client.Get(site.URL + "/private/report")
	fmt.Println("refused:", errors.Is(err, polite.ErrRobotsBlocked))
	fmt.Println("tries:", tries, "requests the server saw:", pages.Load())
	// Output:
	// refused: true
	// tries: 1 requests the server saw: 0
}
