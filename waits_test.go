package polite

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"

	"github.com/polite-go/polite/pace"
)

// sentEvents returns a hook that records the EventSent events made plain,
// and a function that returns them.
func sentEvents() (func(Event), func() []Event) {
	var mu sync.Mutex
	var got []Event
	hook := func(ev Event) {
		if ev.Kind == EventSent {
			mu.Lock()
			got = append(got, plain(ev))
			mu.Unlock()
		}
	}
	return hook, func() []Event {
		mu.Lock()
		defer mu.Unlock()
		return append([]Event(nil), got...)
	}
}

// silentPacer is a Pacer that reports no cause: it hides the Trace from
// the Pacer it wraps.
type silentPacer struct{ pace.Pacer }

func (p silentPacer) Acquire(ctx context.Context, r pace.Request) (pace.Lease, error) {
	return p.Pacer.Acquire(pace.WithTrace(ctx, nil), r)
}

// TestEventWaits checks what EventSent says held a request up: the
// robots.txt fetch it waited for, the global limiter, and what the Pacer
// reports, each for as long as it held it.
func TestEventWaits(t *testing.T) {
	const s = time.Second
	noPace := pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, Jitter: pace.None}
	slowRobots := func(robots string, d time.Duration) *fakeBase {
		return &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/robots.txt" {
				time.Sleep(d)
				return respond(r, 200, robots), nil
			}
			return respond(r, 200, "ok"), nil
		}}
	}
	tests := []struct {
		name string
		base *fakeBase
		opts []Option
		urls []string // requested in turn; the last is checked
		want Event    // made plain, without Kind, Key and URL
	}{
		{"a robots.txt fetch, then the pace its latency sets", slowRobots("", 2*s), []Option{WithPacing(pace.Policy{Jitter: pace.None})}, []string{"http://h/a"},
			Event{Duration: 2 * s, Waits: []pace.Wait{{Cause: pace.CauseRobots, Duration: 2 * s}, {Cause: pace.CausePace, Duration: 2 * s}}}},
		{"a robots.txt fetch, then the Crawl-delay", site("User-agent: *\nCrawl-delay: 3\n"), []Option{WithPacing(noPace)}, []string{"http://h/a"},
			Event{Duration: 3 * s, Waits: []pace.Wait{{Cause: pace.CauseRobots}, {Cause: pace.CauseCrawlDelay, Duration: 3 * s}}}},
		{"the global limiter", site(""), []Option{WithPacing(noPace), WithRobotsMode(RobotsOff), WithGlobalLimiter(rate.NewLimiter(rate.Every(2*s), 1))}, []string{"http://h/a", "http://h/b"},
			Event{Duration: 2 * s, Waits: []pace.Wait{{Cause: pace.CauseGlobal, Duration: 2 * s}}}},
		{"a Retry-After", &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
			return respond(r, 429, "", "Retry-After", "30"), nil
		}}, []Option{WithPacing(noPace), WithRobotsMode(RobotsOff)}, []string{"http://h/a", "http://h/b"},
			Event{Duration: 30 * s, Waits: []pace.Wait{{Cause: pace.CauseRetryAfter, Duration: 30 * s}}}},
		{"nothing", site(""), []Option{WithPacing(noPace), WithRobotsMode(RobotsOff)}, []string{"http://h/a", "http://h/b"},
			Event{}},
		{"a Pacer that reports no cause", site(""), []Option{WithPacing(pace.Policy{Jitter: pace.None}), WithRobotsMode(RobotsOff), WithPacer(func(c pace.Config) pace.Pacer {
			p, _ := pace.NewMemory(c)
			return silentPacer{p}
		})}, []string{"http://h/a", "http://h/b"},
			Event{Duration: s}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				hook, sent := sentEvents()
				tr := New(tc.base, append(tc.opts, WithEvents(hook))...)
				for _, u := range tc.urls {
					resp, err := get(tr, u, "")
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				got := sent()
				if len(got) != len(tc.urls) {
					t.Fatalf("%d EventSent; want %d", len(got), len(tc.urls))
				}
				want := tc.want
				want.Kind, want.Key, want.URL = EventSent, "h", tc.urls[len(tc.urls)-1]
				if last := got[len(got)-1]; !reflect.DeepEqual(last, want) {
					t.Errorf("EventSent %+v; want %+v", last, want)
				}
			})
		})
	}
}

// TestEventWaitsJoiningAFetch checks that a request that waits for a
// robots.txt fetch another started says so, for the time it waited.
func TestEventWaitsJoiningAFetch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/robots.txt" {
				time.Sleep(2 * time.Second)
			}
			return respond(r, 200, ""), nil
		}}
		hook, sent := sentEvents()
		tr := New(base, WithPacing(pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, Jitter: pace.None, MaxInFlight: 2}), WithEvents(hook))
		var wg sync.WaitGroup
		for i, u := range []string{"http://h/a", "http://h/b"} {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * time.Second)
				if resp, err := get(tr, u, ""); err == nil {
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		waited := map[string][]pace.Wait{}
		for _, ev := range sent() {
			waited[ev.URL] = ev.Waits
		}
		want := map[string][]pace.Wait{
			"http://h/a": {{Cause: pace.CauseRobots, Duration: 2 * time.Second}},
			"http://h/b": {{Cause: pace.CauseRobots, Duration: time.Second}},
		}
		if !reflect.DeepEqual(waited, want) {
			t.Errorf("waits %v; want %v", waited, want)
		}
	})
}

// ctxKey marks the contexts of TestEventContext's requests.
type ctxKey struct{}

// TestEventContext checks that the events of a request carry its context,
// and those of a robots.txt fetch the context of the request that started
// it.
func TestEventContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		got := map[string]string{} // "kind url" → the marker of the event's context
		hook := func(ev Event) {
			mark := "no context"
			if ev.Context != nil {
				mark, _ = ev.Context.Value(ctxKey{}).(string)
			}
			mu.Lock()
			got[ev.Kind.String()+" "+ev.URL] = mark
			mu.Unlock()
		}
		base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
			switch {
			case r.URL.Host == "r" && r.URL.Path == "/robots.txt":
				return respond(r, 503, ""), nil
			case r.URL.Path == "/robots.txt":
				return respond(r, 200, "User-agent: *\nDisallow: /private\n"), nil
			case r.URL.Path == "/busy":
				return respond(r, 429, ""), nil
			}
			return respond(r, 200, "ok"), nil
		}}
		tr := New(base, WithPacing(pace.Policy{Jitter: pace.None}), WithEvents(hook))
		do := func(mark, rawURL string, mode RobotsMode, timeout time.Duration) {
			ctx := ContextWithRobotsMode(context.WithValue(t.Context(), ctxKey{}, mark), mode)
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", rawURL, nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}
		do("a", "http://h/busy", RobotsEnforce, 0)
		do("b", "http://h/private", RobotsEnforce, 0)
		do("c", "http://h/private", RobotsReport, 0)
		do("d", "http://h/late", RobotsEnforce, time.Second) // paused by the 429
		do("e", "http://r/page", RobotsEnforce, 0)
		want := map[string]string{
			"robots.txt fetched http://h/robots.txt":   "a",
			"sent http://h/busy":                       "a",
			"backing off http://h/busy":                "a",
			"refused by robots.txt http://h/private":   "b",
			"robots.txt would refuse http://h/private": "c",
			"sent http://h/private":                    "c",
			"refused by robots.txt http://h/late":      "d", // by its deadline: h is paused
			"robots.txt fetched http://r/robots.txt":   "e",
			"backing off http://r/robots.txt":          "e",
			"sent http://r/page":                       "e",
		}
		mu.Lock()
		defer mu.Unlock()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("the events' contexts\n%v\nwant\n%v", got, want)
		}
	})
}

// TestRefusedByDeadline checks that a request refused for its deadline is
// reported as an EventRefused with the *pace.DeadlineError that RoundTrip
// returns, naming what would have held it, and logged as such.
func TestRefusedByDeadline(t *testing.T) {
	tests := []struct {
		name  string
		opts  []Option
		setup []string // requested before, without a deadline
		url   string
		want  pace.Cause
	}{
		{"the pace", nil, []string{"http://h/a"}, "http://h/b", pace.CausePace},
		{"a backoff pause", nil, []string{"http://h/busy"}, "http://h/b", pace.CauseBackoff},
		{"a robots.txt fetch that a backoff holds", nil, []string{"http://h/busy"}, "https://h/b", pace.CauseRobots},
		{"the global limiter", []Option{WithRobotsMode(RobotsOff), WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None}),
			WithGlobalLimiter(rate.NewLimiter(rate.Every(10*time.Second), 1))}, []string{"http://h/a"}, "http://g/b", pace.CauseGlobal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var refused []Event
				var logged strings.Builder
				logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logged}, nil))
				hook := func(ev Event) {
					if ev.Kind == EventRefused {
						mu.Lock()
						refused = append(refused, ev)
						mu.Unlock()
					}
				}
				base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
					if r.URL.Path == "/busy" {
						return respond(r, 503, ""), nil
					}
					return respond(r, 200, ""), nil
				}}
				tr := New(base, append([]Option{WithPacing(pace.Policy{Jitter: pace.None}), WithEvents(hook), WithLogger(logger)}, tc.opts...)...)
				for _, u := range tc.setup {
					resp, err := get(tr, u, "")
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, "GET", tc.url, nil)
				_, err := tr.RoundTrip(req)
				var de *pace.DeadlineError
				if !errors.As(err, &de) || de.Cause != tc.want {
					t.Fatalf("RoundTrip = %v; want a *pace.DeadlineError whose Cause is %q", err, tc.want)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(refused) != 1 || refused[0].Err != err || refused[0].URL != tc.url || refused[0].Context != ctx {
					t.Errorf("EventRefused %+v; want one for %s with RoundTrip's error and context", refused, tc.url)
				}
				if line := `level=INFO msg="polite: refused by its deadline"`; !strings.Contains(logged.String(), line) {
					t.Errorf("log lacks %q; got:\n%s", line, logged.String())
				}
			})
		})
	}
}

// TestEventNewFieldsLogged checks the logger's attributes of the new
// fields: a robots.txt body's bytes, the group of a refusal, and the cause
// of a wait.
func TestEventNewFieldsLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var logged strings.Builder
		logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logged}, &slog.HandlerOptions{Level: slog.LevelDebug}))
		const robots = "User-agent: mybot\nDisallow: /private\nCrawl-delay: 2\n"
		tr := New(site(robots), WithUserAgent("MyBot/1.0"), WithPacing(pace.Policy{Jitter: pace.None}), WithLogger(logger))
		for _, u := range []string{"http://h/a", "http://h/private"} {
			if resp, err := get(tr, u, ""); err == nil {
				resp.Body.Close()
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for _, want := range []string{
			`msg="polite: robots.txt fetched" key=h url=http://h/robots.txt status=200 rules=1 skipped_lines=0 bytes=` + strconv.Itoa(len(robots)) + " ",
			`msg="polite: waited" key=h url=http://h/a wait=2s cause=crawl-delay`,
			`msg="polite: refused by robots.txt" key=h url=http://h/private rule="Disallow: /private" group=mybot`,
		} {
			if !strings.Contains(logged.String(), want) {
				t.Errorf("log lacks %q; got:\n%s", want, logged.String())
			}
		}
	})
}
