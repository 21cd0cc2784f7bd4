package politeotel_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
	"github.com/polite-go/polite/robotstxt"
)

// collect returns the data points r's reader collects, each under its
// metric's name and its attributes, as "polite.robots.disallowed
// polite.action=refused": a sum's or a gauge's value; a histogram's
// count, sum and non-empty buckets, as "count=3 sum=3 le1=3".
func (r *rig) collect(t *testing.T) map[string]string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	points := map[string]string{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					points[m.Name+attrs(p.Attributes.ToSlice())] = fmt.Sprint(p.Value)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					v := fmt.Sprintf("count=%d sum=%v", p.Count, p.Sum)
					for i, n := range p.BucketCounts {
						if n == 0 {
							continue
						}
						le := "+Inf"
						if i < len(p.Bounds) {
							le = fmt.Sprint(p.Bounds[i])
						}
						v += fmt.Sprintf(" le%s=%d", le, n)
					}
					points[m.Name+attrs(p.Attributes.ToSlice())] = v
				}
			default:
				t.Fatalf("%s: data of type %T", m.Name, m.Data)
			}
		}
	}
	return points
}

// want checks that the points named in want have the values it gives.
func wantPoints(t *testing.T, got, want map[string]string) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			t.Errorf("%s = %q; want %q", k, got[k], want[k])
		}
	}
}

// TestMetrics drives one host through a robots.txt fetch, two pages, a
// refusal, a request RobotsReport mode sends, and a URL that is neither
// http nor https; each page waits the base delay of 1s.
func TestMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		tr := polite.New(site("User-agent: *\nDisallow: /private\n"), polite.WithPacing(pace.Policy{Jitter: pace.None}), r.tel.Option())
		r.tel.Track(tr)
		ctx := context.Background()
		for _, u := range []string{"http://h/a", "http://h/b", "ftp://h/file"} {
			if err := r.get(ctx, tr, "page", u); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.get(ctx, tr, "private", "http://h/private"); !errors.Is(err, polite.ErrRobotsBlocked) {
			t.Fatalf("GET /private = %v; want ErrRobotsBlocked", err)
		}
		if err := r.get(polite.ContextWithRobotsMode(ctx, polite.RobotsReport), tr, "report", "http://h/private"); err != nil {
			t.Fatal(err)
		}
		got := r.collect(t)
		wantPoints(t, got, map[string]string{
			"polite.wait.duration":                                                              "count=3 sum=3 le1=3",
			"polite.robots.disallowed polite.action=refused":                                    "1",
			"polite.robots.disallowed polite.action=sent":                                       "1",
			"polite.robots.fetches polite.robots.result=fetched polite.robots.status_class=2xx": "1",
			"polite.hosts.tracked":                                                              "1",
			"polite.hosts.paused":                                                               "0",
			"polite.requests.waiting":                                                           "0",
			"polite.requests.in_flight":                                                         "0",
		})
		if n := len(got); n != 8 {
			t.Errorf("%d data points; want 8:\n%v", n, got)
		}
	})
}

// TestMetricsOfBackoffsEvictionsFields counts two rises of the backoff
// level, one with a Retry-After; a host dropped from a table of one; and
// a host's unreadable field, once however often it comes.
func TestMetricsOfBackoffsEvictionsFields(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			switch req.URL.Path {
			case "/a":
				return respond(req, http.StatusTooManyRequests, "", "Retry-After", "30"), nil
			case "/b":
				return respond(req, http.StatusServiceUnavailable, ""), nil
			}
			return respond(req, http.StatusOK, "", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "soon"), nil
		})
		tr := polite.New(base, polite.WithRobotsMode(polite.RobotsOff), polite.WithPacing(pace.Policy{Jitter: pace.None}),
			polite.WithLimits(polite.Limits{MaxKeys: 1, MaxOrigins: 1}), r.tel.Option())
		r.tel.Track(tr)
		ctx := context.Background()
		r.get(ctx, tr, "a", "http://h/a")
		wantPoints(t, r.collect(t), map[string]string{"polite.hosts.paused": "1"})
		r.get(ctx, tr, "b", "http://h/b")
		r.get(ctx, tr, "c", "http://h/c")
		r.get(ctx, tr, "c", "http://h/c")
		time.Sleep(time.Hour) // every pause is over
		r.get(ctx, tr, "d", "http://other/d")
		got := r.collect(t)
		if w := got["polite.wait.duration"]; !strings.HasPrefix(w, "count=5 ") {
			t.Errorf("polite.wait.duration = %q; want a count of 5", w)
		}
		wantPoints(t, got, map[string]string{
			"polite.backoffs polite.retry_after=true":                 "1",
			"polite.backoffs polite.retry_after=false":                "1",
			"polite.hosts.evicted":                                    "1",
			"polite.unreadable_fields polite.field=X-RateLimit-Reset": "2",
			"polite.hosts.tracked":                                    "1",
			"polite.hosts.paused":                                     "0",
		})
	})
}

// TestMetricsOfRobotsFetches checks the status class and result of each
// kind of robots.txt answer.
func TestMetricsOfRobotsFetches(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int   // of the answer to /robots.txt, when err is nil
		err    error // of the base transport
		want   string
	}{
		{"200", 200, nil, "polite.robots.result=fetched polite.robots.status_class=2xx"},
		{"404", 404, nil, "polite.robots.result=fetched polite.robots.status_class=4xx"},
		{"429", 429, nil, "polite.robots.result=unreachable polite.robots.status_class=4xx"},
		{"503", 503, nil, "polite.robots.result=unreachable polite.robots.status_class=5xx"},
		{"network error", 0, errors.New("no route to host"), "polite.robots.result=unreachable polite.robots.status_class=error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t)
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					switch {
					case req.URL.Path != "/robots.txt":
					case tc.err != nil:
						return nil, tc.err
					default:
						return respond(req, tc.status, "User-agent: *\nAllow: /\n"), nil
					}
					return respond(req, http.StatusOK, "ok"), nil
				})
				r.get(context.Background(), polite.New(base, r.tel.Option()), "page", "http://h/page")
				wantPoints(t, r.collect(t), map[string]string{"polite.robots.fetches " + tc.want: "1"})
			})
		})
	}
}

// TestMetricsOfUsage counts the requests that a usage preference
// disallows for a declared use, once per use, refused or sent; and no
// refusal for a request refused by its deadline.
func TestMetricsOfUsage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		base := site("User-agent: *\nContent-Signal: search=no, ai-train=no\nContent-Signal: /ok/ search=yes, ai-train=no\n")
		enforce := polite.New(base, polite.WithPacing(pace.Policy{BaseDelay: pace.None}),
			polite.WithUsage(polite.RobotsEnforce, robotstxt.TrainAI, robotstxt.Search), r.tel.Option())
		report := polite.New(base, polite.WithPacing(pace.Policy{BaseDelay: pace.None}),
			polite.WithUsage(polite.RobotsReport, robotstxt.TrainAI), r.tel.Option())
		ctx := context.Background()
		for _, path := range []string{"/a", "/b", "/ok/c"} {
			if err := r.get(ctx, enforce, "page", "http://h"+path); !errors.Is(err, polite.ErrRobotsBlocked) {
				t.Fatalf("GET %s = %v; want ErrRobotsBlocked", path, err)
			}
		}
		if err := r.get(ctx, report, "page", "http://h/a"); err != nil {
			t.Fatal(err)
		}
		paced := polite.New(site(""), r.tel.Option())
		r.get(ctx, paced, "page", "http://g/a")
		late, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		var de *pace.DeadlineError
		if err := r.get(late, paced, "page", "http://g/b"); !errors.As(err, &de) {
			t.Fatalf("GET /b = %v; want a *pace.DeadlineError", err)
		}
		got := r.collect(t)
		wantPoints(t, got, map[string]string{
			"polite.usage.disallowed polite.action=refused polite.use=search":   "2",
			"polite.usage.disallowed polite.action=refused polite.use=train-ai": "3",
			"polite.usage.disallowed polite.action=sent polite.use=train-ai":    "1",
		})
		for k := range got {
			if strings.HasPrefix(k, "polite.robots.disallowed") {
				t.Errorf("%s = %s; want no robots.txt refusal", k, got[k])
			}
		}
	})
}

// TestGauges holds requests at the base: with one request in flight per
// host, three requests to one host and one to another make two in flight
// and two waiting, across two tracked transports.
func TestGauges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		release := make(chan struct{})
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			<-release
			return respond(req, http.StatusOK, "ok"), nil
		})
		opts := []polite.Option{polite.WithRobotsMode(polite.RobotsOff), polite.WithPacing(pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None}), r.tel.Option()}
		first, second := polite.New(base, opts...), polite.New(base, opts...)
		r.tel.Track(first)
		r.tel.Track(second)
		var wg sync.WaitGroup
		for _, req := range []struct {
			tr  http.RoundTripper
			url string
		}{{first, "http://h/1"}, {first, "http://h/2"}, {first, "http://h/3"}, {second, "http://g/1"}} {
			wg.Go(func() { r.get(context.Background(), req.tr, "page", req.url) })
		}
		synctest.Wait()
		wantPoints(t, r.collect(t), map[string]string{
			"polite.hosts.tracked": "2", "polite.hosts.paused": "0", "polite.requests.in_flight": "2", "polite.requests.waiting": "2",
		})
		close(release)
		wg.Wait()
		wantPoints(t, r.collect(t), map[string]string{
			"polite.hosts.tracked": "2", "polite.requests.in_flight": "0", "polite.requests.waiting": "0", "polite.wait.duration": "count=4 sum=0 le0.001=4",
		})
	})
}

// failingStats is a Pacer whose Stats fail, as a shared store's may.
type failingStats struct{ pace.Pacer }

func (failingStats) Stats(context.Context) ([]pace.KeyState, error) {
	return nil, errors.New("store unreachable")
}

// TestGaugesWhenStatsFail checks that a transport whose Stats fail makes
// the collection observe no gauge, and say why, and leaves the counters.
func TestGaugesWhenStatsFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		tr := polite.New(site(""), polite.WithRobotsMode(polite.RobotsOff), polite.WithPacer(func(c pace.Config) pace.Pacer {
			p, _ := pace.NewMemory(c)
			return failingStats{p}
		}), r.tel.Option())
		r.tel.Track(tr)
		r.get(context.Background(), tr, "page", "http://h/a")
		var rm metricdata.ResourceMetrics
		err := r.reader.Collect(context.Background(), &rm)
		if err == nil || !strings.Contains(err.Error(), "store unreachable") {
			t.Errorf("Collect = %v; want the Stats error", err)
		}
		names := map[string]bool{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				names[m.Name] = true
			}
		}
		if names["polite.hosts.tracked"] || !names["polite.wait.duration"] {
			t.Errorf("metrics collected %v; want the histogram and no gauge", slices.Sorted(maps.Keys(names)))
		}
	})
}

// TestNoHostLabel crawls many hosts and checks that no data point names
// one: their number does not grow with the hosts, and their attributes
// are the package documentation's.
func TestNoHostLabel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		tr := polite.New(site("User-agent: *\nDisallow: /private\n"), r.tel.Option())
		r.tel.Track(tr)
		host := func(i int) string { return "http://h" + strings.Repeat("x", i) }
		crawl := func(from, to int) {
			for i := from; i < to; i++ {
				r.get(context.Background(), tr, "page", host(i)+"/page")
				r.get(context.Background(), tr, "page", host(i)+"/private")
			}
		}
		crawl(0, 2)
		before := len(r.collect(t))
		crawl(2, 20)
		got := r.collect(t)
		if len(got) != before {
			t.Errorf("data points after 20 hosts = %d; after 2 hosts, %d", len(got), before)
		}
		allowed := map[string]bool{"polite.action": true, "polite.use": true, "polite.retry_after": true,
			"polite.robots.status_class": true, "polite.robots.result": true, "polite.field": true}
		for k := range got {
			for _, kv := range strings.Fields(k)[1:] {
				if name, _, _ := strings.Cut(kv, "="); !allowed[name] {
					t.Errorf("%s has an attribute %q", k, name)
				}
			}
		}
	})
}

// TestInstruments checks every instrument's name, kind and unit against
// the package documentation's table.
func TestInstruments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		tr := polite.New(roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.URL.Path == "/robots.txt" {
				return respond(req, 200, "User-agent: *\nDisallow: /private\nContent-Usage: train-ai=n\n"), nil
			}
			return respond(req, 429, "", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "soon"), nil
		}), polite.WithLimits(polite.Limits{MaxKeys: 1, MaxOrigins: 1}), polite.WithUsage(polite.RobotsReport, robotstxt.TrainAI), r.tel.Option())
		r.tel.Track(tr)
		r.get(context.Background(), tr, "page", "http://h/private") // refused
		r.get(context.Background(), tr, "page", "http://h/page")    // sent, disallowed for training; a 429 with a field unread
		time.Sleep(time.Hour)
		r.get(context.Background(), tr, "page", "http://g/page") // drops h
		var rm metricdata.ResourceMetrics
		if err := r.reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, sm := range rm.ScopeMetrics {
			if sm.Scope.Name != "github.com/polite-go/polite/otel" {
				t.Errorf("scope %q", sm.Scope.Name)
			}
			for _, m := range sm.Metrics {
				kind := fmt.Sprintf("%T", m.Data)
				if s, ok := m.Data.(metricdata.Sum[int64]); ok {
					kind = map[bool]string{true: "counter", false: "observable up-down"}[s.IsMonotonic]
				}
				got = append(got, m.Name+" "+kind+" "+m.Unit)
			}
		}
		slices.Sort(got)
		want := []string{
			"polite.backoffs counter {backoff}",
			"polite.hosts.evicted counter {host}",
			"polite.hosts.paused observable up-down {host}",
			"polite.hosts.tracked observable up-down {host}",
			"polite.requests.in_flight observable up-down {request}",
			"polite.requests.waiting observable up-down {request}",
			"polite.robots.disallowed counter {request}",
			"polite.robots.fetches counter {fetch}",
			"polite.unreadable_fields counter {field}",
			"polite.usage.disallowed counter {request}",
			"polite.wait.duration metricdata.Histogram[float64] s",
		}
		if !slices.Equal(got, want) {
			t.Errorf("instruments\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
