package politeprom_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
	politeprom "github.com/polite-go/polite/prometheus"
	"github.com/polite-go/polite/robotstxt"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// roundTripFunc is a base RoundTripper made of a function. Tests that wait
// use it inside a synctest bubble, where httptest servers do not work.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// respond answers r with status and body, and header pairs.
func respond(r *http.Request, status int, body string, header ...string) *http.Response {
	h := make(http.Header)
	for i := 0; i+1 < len(header); i += 2 {
		h.Add(header[i], header[i+1])
	}
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: h,
		Body: io.NopCloser(strings.NewReader(body)), Request: r}
}

// site answers /robots.txt with robots and every other path with 200.
func site(robots string) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/robots.txt" {
			return respond(r, http.StatusOK, robots), nil
		}
		return respond(r, http.StatusOK, "ok"), nil
	}
}

// fetch sends a GET of url with ctx through rt and closes the body.
func fetch(ctx context.Context, rt http.RoundTripper, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// mustFetch is fetch that fails the test on an error.
func mustFetch(t *testing.T, rt http.RoundTripper, url string) {
	t.Helper()
	if err := fetch(t.Context(), rt, url); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// compare checks the named metrics of reg against want, in the text
// exposition format.
func compare(t *testing.T, reg *prometheus.Registry, want string, names ...string) {
	t.Helper()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
}

const helpRequests = `
# HELP polite_requests_total Requests passed to the base transport once their host's turn came; robots.txt fetches excluded.
# TYPE polite_requests_total counter
`

const helpDisallowed = `
# HELP polite_robots_disallowed_total Requests robots.txt disallowed, by what the transport did: "refused", or "sent" in RobotsReport mode.
# TYPE polite_robots_disallowed_total counter
`

const helpBackoffs = `
# HELP polite_backoffs_total Rises of a host's backoff level, by whether the signal carried a Retry-After.
# TYPE polite_backoffs_total counter
`

const helpRobots = `
# HELP polite_robots_fetches_total robots.txt fetches, by status class ("error" when no response came) and result ("fetched" or "unreachable").
# TYPE polite_robots_fetches_total counter
`

const helpGauges = `
# HELP polite_hosts Hosts the transports track: hosts with pacing state or a cached robots.txt.
# TYPE polite_hosts gauge
# HELP polite_hosts_paused Hosts paused now by a backoff or an exhausted rate limit.
# TYPE polite_hosts_paused gauge
# HELP polite_requests_in_flight Requests started whose response headers have not come.
# TYPE polite_requests_in_flight gauge
# HELP polite_requests_waiting Requests waiting for their host's turn.
# TYPE polite_requests_waiting gauge
`

var gaugeNames = []string{"polite_hosts", "polite_hosts_paused", "polite_requests_in_flight", "polite_requests_waiting"}

// TestRequestsAndRefusals drives one host through a robots.txt fetch, two
// pages, a refusal, a request RobotsReport mode sends, and a URL that is
// neither http nor https; each page waits the base delay of 1s.
func TestRequestsAndRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		m := politeprom.New(reg)
		tr := polite.New(site("User-agent: *\nDisallow: /private\n"), polite.WithPacing(pace.Policy{Jitter: pace.None}), m.Option())
		m.Track(tr)

		mustFetch(t, tr, "http://h/a")
		mustFetch(t, tr, "http://h/b")
		if err := fetch(t.Context(), tr, "http://h/private"); !errors.Is(err, polite.ErrRobotsBlocked) {
			t.Fatalf("GET /private = %v; want ErrRobotsBlocked", err)
		}
		mustFetch(t, tr, "ftp://h/file") // passes through untouched, uncounted
		report := polite.ContextWithRobotsMode(t.Context(), polite.RobotsReport)
		if err := fetch(report, tr, "http://h/private"); err != nil {
			t.Fatalf("GET /private in RobotsReport mode: %v", err)
		}

		compare(t, reg, helpRequests+"polite_requests_total 3\n"+helpDisallowed+`
polite_robots_disallowed_total{action="refused"} 1
polite_robots_disallowed_total{action="sent"} 1
`+helpRobots+`
polite_robots_fetches_total{result="fetched",status="2xx"} 1
`+helpBackoffs+`
polite_backoffs_total{retry_after="false"} 0
polite_backoffs_total{retry_after="true"} 0
# HELP polite_wait_seconds How long each request waited for its host's turn.
# TYPE polite_wait_seconds histogram
polite_wait_seconds_bucket{le="0.001"} 0
polite_wait_seconds_bucket{le="0.01"} 0
polite_wait_seconds_bucket{le="0.1"} 0
polite_wait_seconds_bucket{le="0.5"} 0
polite_wait_seconds_bucket{le="1"} 3
polite_wait_seconds_bucket{le="2"} 3
polite_wait_seconds_bucket{le="5"} 3
polite_wait_seconds_bucket{le="10"} 3
polite_wait_seconds_bucket{le="30"} 3
polite_wait_seconds_bucket{le="60"} 3
polite_wait_seconds_bucket{le="120"} 3
polite_wait_seconds_bucket{le="300"} 3
polite_wait_seconds_bucket{le="600"} 3
polite_wait_seconds_bucket{le="+Inf"} 3
polite_wait_seconds_sum 3
polite_wait_seconds_count 3
`+helpGauges+`
polite_hosts 1
polite_hosts_paused 0
polite_requests_in_flight 0
polite_requests_waiting 0
`, append([]string{"polite_requests_total", "polite_robots_disallowed_total", "polite_robots_fetches_total",
			"polite_backoffs_total", "polite_wait_seconds"}, gaugeNames...)...)
	})
}

// TestDeadlineRefusalUncounted checks that a request refused because its
// deadline falls before its turn counts neither as a request nor as a
// robots.txt refusal.
func TestDeadlineRefusalUncounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		m := politeprom.New(reg)
		tr := polite.New(site(""), polite.WithPacing(pace.Policy{Jitter: pace.None}), m.Option())
		mustFetch(t, tr, "http://h/a")
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		var de *pace.DeadlineError
		if err := fetch(ctx, tr, "http://h/b"); !errors.As(err, &de) {
			t.Fatalf("GET /b = %v; want a *pace.DeadlineError", err)
		}
		compare(t, reg, helpRequests+"polite_requests_total 1\n"+helpDisallowed+`
polite_robots_disallowed_total{action="refused"} 0
polite_robots_disallowed_total{action="sent"} 0
`, "polite_requests_total", "polite_robots_disallowed_total")
	})
}

// TestEveryRequestCounted checks that requests that do not wait count,
// and that their wait is observed as 0.
func TestEveryRequestCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		m := politeprom.New(reg)
		tr := polite.New(site(""), polite.APIDefaults(), m.Option())
		for range 3 {
			mustFetch(t, tr, "http://api/v1/items")
		}
		compare(t, reg, helpRequests+"polite_requests_total 3\n", "polite_requests_total")
		compare(t, reg, `
# HELP polite_wait_seconds How long each request waited for its host's turn.
# TYPE polite_wait_seconds histogram
polite_wait_seconds_bucket{le="0.001"} 3
polite_wait_seconds_bucket{le="0.01"} 3
polite_wait_seconds_bucket{le="0.1"} 3
polite_wait_seconds_bucket{le="0.5"} 3
polite_wait_seconds_bucket{le="1"} 3
polite_wait_seconds_bucket{le="2"} 3
polite_wait_seconds_bucket{le="5"} 3
polite_wait_seconds_bucket{le="10"} 3
polite_wait_seconds_bucket{le="30"} 3
polite_wait_seconds_bucket{le="60"} 3
polite_wait_seconds_bucket{le="120"} 3
polite_wait_seconds_bucket{le="300"} 3
polite_wait_seconds_bucket{le="600"} 3
polite_wait_seconds_bucket{le="+Inf"} 3
polite_wait_seconds_sum 0
polite_wait_seconds_count 3
`, "polite_wait_seconds")
	})
}

// TestBackoffs answers a page with 429 and Retry-After: 30, the next with
// 503 and none: two rises of the level, one with a Retry-After, and the
// host paused after each.
func TestBackoffs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		m := politeprom.New(reg)
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			switch r.URL.Path {
			case "/robots.txt":
				return respond(r, http.StatusNotFound, ""), nil
			case "/a":
				return respond(r, http.StatusTooManyRequests, "", "Retry-After", "30"), nil
			}
			return respond(r, http.StatusServiceUnavailable, ""), nil
		})
		tr := polite.New(base, polite.WithPacing(pace.Policy{Jitter: pace.None}), m.Option())
		m.Track(tr)

		mustFetch(t, tr, "http://h/a")
		compare(t, reg, helpBackoffs+`
polite_backoffs_total{retry_after="false"} 0
polite_backoffs_total{retry_after="true"} 1
`+helpGauges+`
polite_hosts 1
polite_hosts_paused 1
polite_requests_in_flight 0
polite_requests_waiting 0
`, append([]string{"polite_backoffs_total"}, gaugeNames...)...)

		mustFetch(t, tr, "http://h/b")
		compare(t, reg, helpBackoffs+`
polite_backoffs_total{retry_after="false"} 1
polite_backoffs_total{retry_after="true"} 1
`+helpRequests+`
polite_requests_total 2
`+helpRobots+`
polite_robots_fetches_total{result="fetched",status="4xx"} 1
`, "polite_backoffs_total", "polite_requests_total", "polite_robots_fetches_total")

		time.Sleep(time.Hour) // every pause is over
		compare(t, reg, `
# HELP polite_hosts_paused Hosts paused now by a backoff or an exhausted rate limit.
# TYPE polite_hosts_paused gauge
polite_hosts_paused 0
`, "polite_hosts_paused")
	})
}

// TestRobotsFetches checks the status class and result of each kind of
// robots.txt answer.
func TestRobotsFetches(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int   // of the answer to /robots.txt, when err is nil
		err    error // of the base transport
		want   string
	}{
		{"200", 200, nil, `{result="fetched",status="2xx"}`},
		{"redirect to nowhere", 301, nil, `{result="fetched",status="3xx"}`},
		{"404", 404, nil, `{result="fetched",status="4xx"}`},
		{"429", 429, nil, `{result="unreachable",status="4xx"}`},
		{"503", 503, nil, `{result="unreachable",status="5xx"}`},
		{"network error", 0, errors.New("no route to host"), `{result="unreachable",status="error"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reg := prometheus.NewRegistry()
				m := politeprom.New(reg)
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					switch {
					case r.URL.Path != "/robots.txt":
					case tc.err != nil:
						return nil, tc.err
					default:
						return respond(r, tc.status, "User-agent: *\nAllow: /\n"), nil
					}
					return respond(r, http.StatusOK, "ok"), nil
				})
				tr := polite.New(base, m.Option())
				mustFetch(t, tr, "http://h/page")
				compare(t, reg, helpRobots+"polite_robots_fetches_total"+tc.want+" 1\n", "polite_robots_fetches_total")
			})
		})
	}
}

// TestHostsEvicted keeps one host: the second host's first request drops
// the first host, whose pace is long over.
func TestHostsEvicted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		m := politeprom.New(reg)
		tr := polite.New(site(""), polite.WithRobotsMode(polite.RobotsOff), polite.WithLimits(polite.Limits{MaxKeys: 1, MaxOrigins: 1}), m.Option())
		m.Track(tr)
		mustFetch(t, tr, "http://one/")
		time.Sleep(time.Hour)
		mustFetch(t, tr, "http://two/")
		compare(t, reg, `
# HELP polite_hosts_evicted_total Hosts whose pacing state was dropped to keep within the transport's Limits.MaxKeys.
# TYPE polite_hosts_evicted_total counter
polite_hosts_evicted_total 1
# HELP polite_hosts Hosts the transports track: hosts with pacing state or a cached robots.txt.
# TYPE polite_hosts gauge
polite_hosts 1
`, "polite_hosts_evicted_total", "polite_hosts")
	})
}

// TestUnreadableFields sends a host's malformed rate-limit fields twice
// and another host's once: each host's field is counted once, by name.
func TestUnreadableFields(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		m := politeprom.New(reg)
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return respond(r, http.StatusOK, "ok", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "soon"), nil
		})
		tr := polite.New(base, polite.APIDefaults(), m.Option())
		mustFetch(t, tr, "http://one/")
		mustFetch(t, tr, "http://one/")
		mustFetch(t, tr, "http://two/")
		compare(t, reg, `
# HELP polite_unreadable_fields_total Rate-limit fields that could not be read, once per host and field, by the field's name.
# TYPE polite_unreadable_fields_total counter
polite_unreadable_fields_total{field="X-RateLimit-Reset"} 2
`, "polite_unreadable_fields_total")
	})
}

// TestGauges holds requests at the base: with one request in flight per
// host, three requests to one host and one to another make two in flight
// and two waiting, across two tracked transports.
func TestGauges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		m := politeprom.New(reg)
		release := make(chan struct{})
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-release
			return respond(r, http.StatusOK, "ok"), nil
		})
		opts := []polite.Option{polite.WithRobotsMode(polite.RobotsOff), polite.WithPacing(pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None}), m.Option()}
		first, second := polite.New(base, opts...), polite.New(base, opts...)
		m.Track(first)
		m.Track(second)

		var wg sync.WaitGroup
		for _, req := range []struct {
			tr  http.RoundTripper
			url string
		}{{first, "http://h/1"}, {first, "http://h/2"}, {first, "http://h/3"}, {second, "http://g/1"}} {
			wg.Go(func() {
				if err := fetch(context.Background(), req.tr, req.url); err != nil {
					t.Errorf("GET %s: %v", req.url, err)
				}
			})
		}
		synctest.Wait()
		compare(t, reg, helpGauges+`
polite_hosts 2
polite_hosts_paused 0
polite_requests_in_flight 2
polite_requests_waiting 2
`, gaugeNames...)

		close(release)
		wg.Wait()
		compare(t, reg, helpGauges+`
polite_hosts 2
polite_hosts_paused 0
polite_requests_in_flight 0
polite_requests_waiting 0
`, gaugeNames...)
		compare(t, reg, helpRequests+"polite_requests_total 4\n", "polite_requests_total")
	})
}

// TestNoHostLabel crawls many hosts and checks that no series names one:
// the number of series does not grow with the hosts.
func TestNoHostLabel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		m := politeprom.New(reg)
		tr := polite.New(site("User-agent: *\nDisallow: /private\n"), m.Option())
		m.Track(tr)
		series := func() int {
			n, err := testutil.GatherAndCount(reg)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		host := func(i int) string { return "http://h" + strings.Repeat("x", i) }
		for i := range 2 {
			mustFetch(t, tr, host(i)+"/page")
			fetch(t.Context(), tr, host(i)+"/private")
		}
		before := series()
		for i := 2; i < 20; i++ {
			mustFetch(t, tr, host(i)+"/page")
			fetch(t.Context(), tr, host(i)+"/private")
		}
		if after := series(); after != before {
			t.Errorf("series after 20 hosts = %d; after 2 hosts, %d", after, before)
		}
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		allowed := map[string]bool{"action": true, "retry_after": true, "status": true, "result": true, "field": true}
		for _, f := range families {
			for _, metric := range f.GetMetric() {
				for _, l := range metric.GetLabel() {
					if !allowed[l.GetName()] {
						t.Errorf("%s has a label %q", f.GetName(), l.GetName())
					}
				}
			}
		}
	})
}

// TestLint checks the metrics' names, help and units against
// client_golang's linter.
func TestLint(t *testing.T) {
	m := politeprom.New(nil)
	problems, err := testutil.CollectAndLint(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	// Two series of each labelled counter from the start, one of each
	// other counter and the histogram, four gauges.
	if n := testutil.CollectAndCount(m); n != 11 {
		t.Errorf("series = %d; want 11", n)
	}
}

// TestRegistration registers two Metrics apart with a constant label each,
// then a third, clashing, one.
func TestRegistration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		crawler := politeprom.New(prometheus.WrapRegistererWith(prometheus.Labels{"transport": "crawler"}, reg))
		api := politeprom.New(prometheus.WrapRegistererWith(prometheus.Labels{"transport": "api"}, reg))
		mustFetch(t, polite.New(site(""), crawler.Option()), "http://h/")
		tr := polite.New(site(""), polite.APIDefaults(), api.Option())
		mustFetch(t, tr, "http://h/")
		mustFetch(t, tr, "http://h/")
		compare(t, reg, helpRequests+`
polite_requests_total{transport="api"} 2
polite_requests_total{transport="crawler"} 1
`, "polite_requests_total")

		defer func() {
			if recover() == nil {
				t.Error("New with a registry that has the metrics already did not panic")
			}
		}()
		politeprom.New(prometheus.WrapRegistererWith(prometheus.Labels{"transport": "api"}, reg))
	})
}

// TestUsageDisallowed counts the requests that a usage preference of
// robots.txt disallows for a declared use, once per use, refused or sent.
func TestUsageDisallowed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		m := politeprom.New(reg)
		base := site("User-agent: *\nContent-Signal: search=no, ai-train=no\nContent-Signal: /ok/ search=yes, ai-train=no\n")
		enforce := polite.New(base, polite.WithPacing(pace.Policy{BaseDelay: pace.None}),
			polite.WithUsage(polite.RobotsEnforce, robotstxt.TrainAI, robotstxt.Search), m.Option())
		report := polite.New(base, polite.WithPacing(pace.Policy{BaseDelay: pace.None}),
			polite.WithUsage(polite.RobotsReport, robotstxt.TrainAI), m.Option())

		for _, path := range []string{"/a", "/b", "/ok/c"} {
			if err := fetch(t.Context(), enforce, "http://h"+path); !errors.Is(err, polite.ErrRobotsBlocked) {
				t.Fatalf("GET %s = %v; want ErrRobotsBlocked", path, err)
			}
		}
		mustFetch(t, report, "http://h/a")

		compare(t, reg, `
# HELP polite_usage_disallowed_total Requests whose robots.txt usage preference disallowed a use the transport declared, once per use, by the use and what the transport did: "refused", or "sent" in RobotsReport mode.
# TYPE polite_usage_disallowed_total counter
polite_usage_disallowed_total{action="refused",use="search"} 2
polite_usage_disallowed_total{action="refused",use="train-ai"} 3
polite_usage_disallowed_total{action="sent",use="train-ai"} 1
`, "polite_usage_disallowed_total")
	})
}
