package politeotel_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"golang.org/x/time/rate"

	"github.com/polite-go/polite"
	politeotel "github.com/polite-go/polite/otel"
	"github.com/polite-go/polite/pace"
	"github.com/polite-go/polite/robotstxt"
)

// roundTripFunc is a base RoundTripper made of a function: the tests run
// in synctest bubbles, where httptest servers do not work.
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

// site answers /robots.txt with robots, /busy with a 503, /limited with a
// 429 and a Retry-After of 30s, /slow after 10s, and every other path
// with 200.
func site(robots string) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		switch r.URL.Path {
		case "/robots.txt":
			return respond(r, http.StatusOK, robots), nil
		case "/busy":
			return respond(r, http.StatusServiceUnavailable, ""), nil
		case "/limited":
			return respond(r, http.StatusTooManyRequests, "", "Retry-After", "30"), nil
		case "/slow":
			time.Sleep(10 * time.Second)
		}
		return respond(r, http.StatusOK, "ok"), nil
	}
}

// A rig records the spans of a tracer provider and the metrics of a meter
// provider, and reports a transport's doings to them through Telemetry.
type rig struct {
	sr     *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	tel    *politeotel.Telemetry
}

func newRig(t *testing.T, traceOpts ...sdktrace.TracerProviderOption) *rig {
	t.Helper()
	r := &rig{sr: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(append(traceOpts, sdktrace.WithSpanProcessor(r.sr))...)
	tel, err := politeotel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader)))
	if err != nil {
		t.Fatal(err)
	}
	r.tel = tel
	return r
}

// get sends a GET of url through rt within a span named name, ended when
// RoundTrip returns, and returns RoundTrip's error.
func (r *rig) get(ctx context.Context, rt http.RoundTripper, name, url string) error {
	ctx, span := r.tp.Tracer("test").Start(ctx, name)
	defer span.End()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := rt.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// span returns the ended span named name.
func (r *rig) span(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range r.sr.Ended() {
		if s.Name() == name {
			return s
		}
	}
	t.Fatalf("no span named %q ended", name)
	return nil
}

// events returns the events of the ended span named name, each as its
// name, its time from the span's start, and its attributes in order.
func (r *rig) events(t *testing.T, name string) []string {
	t.Helper()
	s := r.span(t, name)
	var out []string
	for _, ev := range s.Events() {
		out = append(out, fmt.Sprintf("%s +%v%s", ev.Name, ev.Time.Sub(s.StartTime()), attrs(ev.Attributes)))
	}
	return out
}

// attrs formats kvs as " key=value" each, sorted by key.
func attrs(kvs []attribute.KeyValue) string {
	var parts []string
	for _, kv := range kvs {
		parts = append(parts, " "+string(kv.Key)+"="+kv.Value.String())
	}
	slices.Sort(parts)
	return strings.Join(parts, "")
}

// TestWaitCauses checks that each cause of a wait shows on the span of the
// request it held, with its start and length, on the fake clock.
func TestWaitCauses(t *testing.T) {
	const s = time.Second
	noPace := polite.WithPacing(pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, Jitter: pace.None})
	robotsOff := polite.WithRobotsMode(polite.RobotsOff)
	tests := []struct {
		name    string
		base    http.RoundTripper
		opts    []polite.Option
		prelude func(r *rig, tr http.RoundTripper) // requests before the one under test, in spans of their own
		url     string
		want    []string
	}{
		{"the pace", site(""), []polite.Option{robotsOff}, func(r *rig, tr http.RoundTripper) {
			r.get(context.Background(), tr, "before", "http://h/a")
		}, "http://h/b", []string{"polite.wait +0s polite.wait.cause=pace polite.wait.duration=1"}},
		{"a robots.txt fetch, then its Crawl-delay", site("User-agent: *\nCrawl-delay: 3\n"), []polite.Option{noPace}, nil, "http://h/a", []string{
			"polite.wait +0s polite.wait.cause=robots.txt polite.wait.duration=0",
			"polite.wait +0s polite.wait.cause=crawl-delay polite.wait.duration=3",
		}},
		{"a slow robots.txt fetch", roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/robots.txt" {
				time.Sleep(2 * s)
			}
			return respond(r, 200, ""), nil
		}), []polite.Option{noPace}, nil, "http://h/a", []string{"polite.wait +0s polite.wait.cause=robots.txt polite.wait.duration=2"}},
		{"a backoff pause", site(""), []polite.Option{robotsOff}, func(r *rig, tr http.RoundTripper) {
			r.get(context.Background(), tr, "before", "http://h/busy")
		}, "http://h/b", []string{"polite.wait +0s polite.wait.cause=backoff polite.wait.duration=5"}},
		{"a Retry-After", site(""), []polite.Option{robotsOff}, func(r *rig, tr http.RoundTripper) {
			r.get(context.Background(), tr, "before", "http://h/limited")
		}, "http://h/b", []string{"polite.wait +0s polite.wait.cause=retry-after polite.wait.duration=30"}},
		{"an exhausted quota", roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return respond(r, 200, "", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "30"), nil
		}), []polite.Option{polite.APIDefaults()}, func(r *rig, tr http.RoundTripper) {
			r.get(context.Background(), tr, "before", "http://h/a")
		}, "http://h/b", []string{"polite.wait +0s polite.wait.cause=quota polite.wait.duration=30"}},
		{"a low quota's spread", roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return respond(r, 200, "", "RateLimit", `"default";r=2;t=9`, "RateLimit-Policy", `"default";q=100;w=60`), nil
		}), []polite.Option{polite.APIDefaults()}, func(r *rig, tr http.RoundTripper) {
			r.get(context.Background(), tr, "before", "http://h/a")
		}, "http://h/b", []string{"polite.wait +0s polite.wait.cause=quota-spread polite.wait.duration=3"}},
		{"a rate limit learned from a 429", roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/refused" {
				return respond(r, 429, ""), nil
			}
			return respond(r, 200, ""), nil
		}), []polite.Option{robotsOff, polite.WithPacing(pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, BackoffBase: pace.None, Jitter: pace.None})},
			func(r *rig, tr http.RoundTripper) {
				r.get(context.Background(), tr, "before", "http://h/a")
				time.Sleep(100 * time.Millisecond)
				r.get(context.Background(), tr, "before", "http://h/refused") // 100ms after the first: too soon
			}, "http://h/b", []string{"polite.wait +0s polite.wait.cause=rate-limit polite.wait.duration=0.15"}},
		{"the in-flight cap", site(""), []polite.Option{robotsOff, noPace}, func(r *rig, tr http.RoundTripper) {
			go r.get(context.Background(), tr, "before", "http://h/slow")
			time.Sleep(s)
		}, "http://h/b", []string{"polite.wait +0s polite.wait.cause=in-flight polite.wait.duration=9"}},
		{"a request queued ahead", site(""), []polite.Option{robotsOff, polite.WithPacing(pace.Policy{Jitter: pace.None})}, func(r *rig, tr http.RoundTripper) {
			r.get(context.Background(), tr, "before", "http://h/a")
			go r.get(context.Background(), tr, "ahead", "http://h/b") // waits for the pace, holding the turn
			synctest.Wait()
		}, "http://h/c", []string{
			"polite.wait +0s polite.wait.cause=queue polite.wait.duration=1",
			"polite.wait +1s polite.wait.cause=pace polite.wait.duration=1",
		}},
		{"the global limiter", site(""), []polite.Option{robotsOff, noPace, polite.WithGlobalLimiter(rate.NewLimiter(rate.Every(2*s), 1))}, func(r *rig, tr http.RoundTripper) {
			r.get(context.Background(), tr, "before", "http://other/a")
		}, "http://h/b", []string{"polite.wait +0s polite.wait.cause=global-limit polite.wait.duration=2"}},
		{"nothing", site(""), []polite.Option{robotsOff, noPace}, func(r *rig, tr http.RoundTripper) {
			r.get(context.Background(), tr, "before", "http://h/a")
		}, "http://h/b", nil},
		{"a Pacer that says no cause", site(""), []polite.Option{robotsOff, polite.WithPacer(func(c pace.Config) pace.Pacer {
			p, _ := pace.NewMemory(c)
			return silentPacer{p}
		})}, func(r *rig, tr http.RoundTripper) {
			r.get(context.Background(), tr, "before", "http://h/a")
		}, "http://h/b", []string{"polite.wait +0s polite.wait.duration=1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t)
				tr := polite.New(tc.base, append([]polite.Option{polite.WithPacing(pace.Policy{Jitter: pace.None})}, append(tc.opts, r.tel.Option())...)...)
				if tc.prelude != nil {
					tc.prelude(r, tr)
				}
				if err := r.get(context.Background(), tr, "request", tc.url); err != nil {
					t.Fatal(err)
				}
				if got := r.events(t, "request"); !slices.Equal(got, tc.want) {
					t.Errorf("events of the request's span\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
				}
			})
		})
	}
}

// silentPacer is a Pacer that reports no cause.
type silentPacer struct{ pace.Pacer }

func (p silentPacer) Acquire(ctx context.Context, r pace.Request) (pace.Lease, error) {
	return p.Pacer.Acquire(pace.WithTrace(ctx, nil), r)
}

// TestRefusals checks that each refusal shows on the span of the request
// refused, with its reason, and a request that robots.txt would refuse on
// the span of the request sent.
func TestRefusals(t *testing.T) {
	tests := []struct {
		name    string
		robots  string
		opts    []polite.Option
		prelude []string // requested before, without a span
		url     string
		timeout time.Duration // of the request under test; 0 for none
		want    []string
	}{
		{"a robots.txt rule", "User-agent: mybot\nDisallow: /private\n", nil, []string{"http://h/a"}, "http://h/private", 0, []string{
			"polite.refused +0s polite.refusal.reason=robots.txt polite.robots.group=mybot polite.robots.rule=Disallow: /private",
		}},
		{"a robots.txt rule, after the fetch the request waited for", "User-agent: *\nDisallow: /private\n", nil, nil, "http://h/private", 0, []string{
			"polite.wait +0s polite.wait.cause=robots.txt polite.wait.duration=0",
			"polite.refused +0s polite.refusal.reason=robots.txt polite.robots.group=* polite.robots.rule=Disallow: /private",
		}},
		{"a usage preference", "User-agent: *\nContent-Usage: train-ai=n\n", []polite.Option{polite.WithUsage(polite.RobotsEnforce, robotstxt.TrainAI)}, []string{"http://h/other"}, "http://h/a", 0, []string{
			"polite.refused +0s polite.refusal.reason=usage polite.robots.group=* polite.robots.rule=Content-Usage: train-ai=n polite.usage.disallowed=train-ai=n",
		}},
		{"an unreachable robots.txt under FailClosed, whose fetch backs the host off", "", []polite.Option{polite.WithRobotsFailure(polite.FailClosed, polite.FailClosed)}, nil, "http://broken/a", 0, []string{
			"polite.backoff +0s http.response.status_code=503 polite.backoff.level=1 polite.backoff.pause=5 polite.backoff.retry_after=0",
			"polite.wait +0s polite.wait.cause=robots.txt polite.wait.duration=0",
			"polite.refused +0s polite.refusal.detail=robots.txt unreachable (http://broken/robots.txt answered Service Unavailable), and the policy is FailClosed polite.refusal.reason=robots.txt",
		}},
		{"a deadline before the turn", "", nil, []string{"http://h/a"}, "http://h/b", 500 * time.Millisecond, []string{
			"polite.refused +0s polite.deadline.remaining=0.5 polite.refusal.detail=pace: next start to h in 1s, context deadline in 500ms polite.refusal.reason=deadline polite.wait.cause=pace polite.wait.duration=1",
		}},
		{"a request robots.txt would refuse, sent in RobotsReport mode", "User-agent: *\nDisallow: /private\n", []polite.Option{polite.WithRobotsMode(polite.RobotsReport)}, []string{"http://h/a"}, "http://h/private", 0, []string{
			"polite.would_refuse +0s polite.refusal.reason=robots.txt polite.robots.group=* polite.robots.rule=Disallow: /private",
			"polite.wait +0s polite.wait.cause=pace polite.wait.duration=1",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t)
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					if req.URL.Host == "broken" {
						return respond(req, 503, ""), nil
					}
					return site(tc.robots)(req)
				})
				tr := polite.New(base, append([]polite.Option{polite.WithUserAgent("MyBot/1.0"), polite.WithPacing(pace.Policy{Jitter: pace.None}), r.tel.Option()}, tc.opts...)...)
				for _, u := range tc.prelude {
					req, _ := http.NewRequest(http.MethodGet, u, nil)
					if resp, err := tr.RoundTrip(req); err == nil {
						resp.Body.Close()
					}
				}
				ctx := context.Background()
				if tc.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.timeout)
					defer cancel()
				}
				r.get(ctx, tr, "request", tc.url)
				if got := r.events(t, "request"); !slices.Equal(got, tc.want) {
					t.Errorf("events of the request's span\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
				}
			})
		})
	}
}

// TestBackoffEvent checks that a response that backs its host off says so
// on its request's span.
func TestBackoffEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		tr := polite.New(site(""), polite.WithRobotsMode(polite.RobotsOff), polite.WithPacing(pace.Policy{Jitter: pace.None}), r.tel.Option())
		r.get(context.Background(), tr, "request", "http://h/limited")
		want := []string{"polite.backoff +0s http.response.status_code=429 polite.backoff.level=1 polite.backoff.pause=30 polite.backoff.retry_after=30"}
		if got := r.events(t, "request"); !slices.Equal(got, want) {
			t.Errorf("events of the request's span\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestRobotsFetchSpan checks the span of a robots.txt fetch: a child of
// the span of the request that started it, from the fetch's start to its
// end, with what it found; a revalidation that kept the copy in force;
// and a fetch that found the file unreachable.
func TestRobotsFetchSpan(t *testing.T) {
	const robots = "User-agent: *\nDisallow: /private\n"
	tests := []struct {
		name   string
		status []int // of the fetches of robots.txt, in turn; each after 2s
		want   []string
		error  bool
	}{
		{"fetched", []int{200}, []string{"http.response.body.size=" + fmt.Sprint(len(robots)), "http.response.status_code=200", "polite.robots.cached=false", "polite.robots.rules=1", "url.full=http://h/robots.txt"}, false},
		{"revalidated", []int{200, 304}, []string{"http.response.body.size=0", "http.response.status_code=304", "polite.robots.cached=true", "polite.robots.rules=1", "url.full=http://h/robots.txt"}, false},
		{"unreachable", []int{503}, []string{"http.response.body.size=0", "http.response.status_code=503", "polite.robots.cached=false", "polite.robots.rules=0", "url.full=http://h/robots.txt"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t)
				var mu sync.Mutex
				fetches := 0
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					if req.URL.Path != "/robots.txt" {
						return respond(req, 200, "ok"), nil
					}
					time.Sleep(2 * time.Second)
					mu.Lock()
					status := tc.status[fetches]
					fetches++
					mu.Unlock()
					return respond(req, status, map[bool]string{true: robots}[status == 200], "ETag", `"v1"`), nil
				})
				tr := polite.New(base, polite.WithRobotsTTL(time.Minute), polite.WithPacing(pace.Policy{Jitter: pace.None}), r.tel.Option())
				for i := range tc.status {
					if i > 0 {
						time.Sleep(2 * time.Minute) // past the TTL
					}
					r.get(context.Background(), tr, fmt.Sprint("request ", i), "http://h/a")
				}
				last := fmt.Sprint("request ", len(tc.status)-1)
				var fetch sdktrace.ReadOnlySpan
				for _, s := range r.sr.Ended() {
					if s.Name() == "polite.robots_fetch" {
						fetch = s
					}
				}
				if fetch == nil {
					t.Fatal("no polite.robots_fetch span")
				}
				req := r.span(t, last)
				if fetch.Parent().SpanID() != req.SpanContext().SpanID() || fetch.SpanContext().TraceID() != req.SpanContext().TraceID() {
					t.Errorf("the fetch's span is not a child of the span of the request that started it")
				}
				if start, d := fetch.StartTime().Sub(req.StartTime()), fetch.EndTime().Sub(fetch.StartTime()); start != 0 || d != 2*time.Second {
					t.Errorf("the fetch's span starts +%v after the request's and lasts %v; want +0s and 2s", start, d)
				}
				if got, want := attrs(fetch.Attributes()), " "+strings.Join(tc.want, " "); got != want {
					t.Errorf("attributes\n%s\nwant\n%s", got, want)
				}
				if got := fetch.Status().Code.String(); (got == "Error") != tc.error {
					t.Errorf("status %s; want an error %v", got, tc.error)
				}
				if fetch.SpanKind().String() != "internal" || fetch.InstrumentationScope().Name != "github.com/polite-go/polite/otel" {
					t.Errorf("kind %v, scope %q", fetch.SpanKind(), fetch.InstrumentationScope().Name)
				}
			})
		})
	}
}

// TestNothingWithoutARecordingSpan checks that a request whose context
// has no span, or one that does not record, gets no event and makes no
// span.
func TestNothingWithoutARecordingSpan(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []sdktrace.TracerProviderOption
		span bool
	}{
		{"no span", nil, false},
		{"a span not sampled", []sdktrace.TracerProviderOption{sdktrace.WithSampler(sdktrace.NeverSample())}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, tc.opts...)
				tr := polite.New(site("User-agent: *\nDisallow: /private\n"), polite.WithPacing(pace.Policy{Jitter: pace.None}), r.tel.Option())
				for _, u := range []string{"http://h/a", "http://h/b", "http://h/private", "http://h/limited"} {
					if tc.span {
						r.get(context.Background(), tr, "request", u)
						continue
					}
					req, _ := http.NewRequest(http.MethodGet, u, nil)
					if resp, err := tr.RoundTrip(req); err == nil {
						resp.Body.Close()
					}
				}
				if ended := r.sr.Ended(); len(ended) != 0 {
					t.Errorf("%d spans recorded; want none", len(ended))
				}
			})
		})
	}
}
