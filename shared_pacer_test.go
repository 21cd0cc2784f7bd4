package polite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
)

// sharedPacer stands for a pace.Pacer that a fleet shares: the in-memory
// one, seen only through the Pacer interface, so that the transport takes
// none of its own ways past the exported interfaces.
type sharedPacer struct{ p *pace.Memory }

func (s sharedPacer) Acquire(ctx context.Context, r pace.Request) (pace.Lease, error) {
	return s.p.Acquire(ctx, r)
}

func (s sharedPacer) Release(l pace.Lease, o pace.Outcome) pace.Change { return s.p.Release(l, o) }

func (s sharedPacer) RobotsRead(l pace.Lease, crawlDelay time.Duration) {
	s.p.RobotsRead(l, crawlDelay)
}

// readyShared is a sharedPacer with Ready and Stats.
type readyShared struct{ sharedPacer }

func (s readyShared) Ready(ctx context.Context, r pace.Request) (pace.KeyState, error) {
	return s.p.Ready(ctx, r)
}

func (s readyShared) Stats(ctx context.Context) ([]pace.KeyState, error) { return s.p.Stats(ctx) }

// newSharedPacer returns a pace.Pacer for WithPacer that two transports share.
func newSharedPacer(t *testing.T, optional bool) func(pace.Config) pace.Pacer {
	var once sync.Once
	var shared pace.Pacer
	return func(c pace.Config) pace.Pacer {
		once.Do(func() {
			mp, err := pace.NewMemory(c)
			if err != nil {
				t.Fatal(err)
			}
			sp := sharedPacer{p: mp}
			shared = sp
			if optional {
				shared = readyShared{sp}
			}
		})
		return shared
	}
}

// TestSharedPacerSeenByEveryTransport checks that what one transport's
// request did to a shared pace.Pacer shows in another transport that never saw
// it: Ready, Check's pace and Stats read the shared state when the pace.Pacer
// is a pace.ReadyPacer and a pace.StatsPacer; and that the transport that got the
// 429 reports the backoff, whatever its pace.Pacer.
func TestSharedPacerSeenByEveryTransport(t *testing.T) {
	for _, optional := range []bool{true, false} {
		t.Run(fmt.Sprintf("ReadyPacer and StatsPacer %v", optional), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
					if r.URL.Path == "/robots.txt" {
						return respond(r, 404, ""), nil
					}
					return respond(r, 429, "", "Retry-After", "30"), nil
				}}
				newPacer := newSharedPacer(t, optional)
				var events []Event
				policy := WithPacing(pace.Policy{Jitter: pace.None})
				a := New(base, policy, WithPacer(newPacer), WithEvents(func(ev Event) {
					if ev.Kind == EventBackoff {
						events = append(events, ev)
					}
				}))
				b := New(base, policy, WithPacer(newPacer))
				resp, err := get(a, "http://h/page", "")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				got := time.Now()

				if len(events) != 1 {
					t.Fatalf("a's backoff events: %+v; want one", events)
				}
				if ev := events[0]; ev.Key != "h" || ev.URL != "http://h/page" || ev.Status != 429 ||
					ev.Level != 1 || ev.Pause != 30*time.Second || ev.RetryAfter != 30*time.Second {
					t.Errorf("a's backoff event %+v; want h, its URL, 429, level 1, a 30s pause", ev)
				}

				req, _ := http.NewRequest("GET", "http://h/other", nil)
				ready, err := b.Ready(req)
				if err != nil {
					t.Fatal(err)
				}
				stats := statsOf(t, b)
				if !optional {
					if !ready.Next.IsZero() || len(stats) != 0 {
						t.Errorf("without a pace.ReadyPacer: Ready %+v, Stats %+v; want nothing known", ready, stats)
					}
					return
				}
				if want := got.Add(30 * time.Second); !ready.Next.Equal(want) {
					t.Errorf("b.Ready Next = +%v; want +30s, the pause a's request got", ready.Next.Sub(got))
				}
				if len(stats) != 1 || stats[0].Key != "h" || !stats[0].PausedUntil.Equal(got.Add(30*time.Second)) ||
					stats[0].Level != 1 || stats[0].Requests != 2 {
					t.Errorf("b.Stats = %+v; want h paused 30s at level 1 after 2 requests", stats)
				}
				d, err := b.Check(req)
				if err != nil {
					t.Fatal(err)
				}
				if d.Pace != 2*time.Second { // 1s doubled by the level
					t.Errorf("b.Check Pace = %v; want 2s", d.Pace)
				}
			})
		})
	}
}

// TestBackoffEventsSayWhy checks that a backoff event names the request
// and how it ended, so that a 429, a 503 and a timeout read apart in the
// log, and that its clearing names the request that cleared it.
func TestBackoffEventsSayWhy(t *testing.T) {
	timeout := timeoutError{}
	tests := []struct {
		name       string
		answer     func(*http.Request) (*http.Response, error)
		wantStatus int
		wantErr    error
		wantLog    string
	}{
		{"429", func(r *http.Request) (*http.Response, error) { return respond(r, 429, ""), nil }, 429, nil, "status=429"},
		{"503", func(r *http.Request) (*http.Response, error) { return respond(r, 503, ""), nil }, 503, nil, "status=503"},
		{"timeout", func(*http.Request) (*http.Response, error) { return nil, timeout }, 0, timeout, `error="i/o timeout"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fail := true
				base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
					if fail {
						return tt.answer(r)
					}
					return respond(r, 200, "ok"), nil
				}}
				var log bytes.Buffer
				var events []Event
				tr := New(base, opts(WithRobotsMode(RobotsOff),
					WithPacing(pace.Policy{BackoffBase: time.Second}),
					WithLogger(slog.New(slog.NewTextHandler(&log, nil))),
					WithEvents(func(ev Event) {
						if ev.Kind == EventBackoff {
							events = append(events, ev)
						}
					}))...)
				if resp, err := get(tr, "http://h/a", ""); err == nil {
					resp.Body.Close()
				}
				fail = false
				for range defaultPacing.RecoverAfter {
					resp, err := get(tr, "http://h/b", "")
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				if len(events) != 2 {
					t.Fatalf("events %+v; want a backoff and its clearing", events)
				}
				if ev := events[0]; ev.Kind != EventBackoff || ev.URL != "http://h/a" || ev.Status != tt.wantStatus || !errors.Is(ev.Err, tt.wantErr) {
					t.Errorf("backoff event %+v; want URL http://h/a, status %d, error %v", ev, tt.wantStatus, tt.wantErr)
				}
				if ev := events[1]; ev.Kind != EventBackoff || ev.URL != "http://h/b" || ev.Status != 200 || ev.Level != 0 {
					t.Errorf("clearing event %+v; want URL http://h/b, status 200, level 0", ev)
				}
				line := lineOf(log.String(), "backing off")
				if !strings.Contains(line, "url=http://h/a") || !strings.Contains(line, tt.wantLog) {
					t.Errorf("backoff log %q; want the URL and %s", line, tt.wantLog)
				}
			})
		})
	}
}

// timeoutError is a network timeout, as a base transport returns one.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// lineOf returns the first line of log that contains s.
func lineOf(log, s string) string {
	for line := range strings.SplitSeq(log, "\n") {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}

// TestDeadlineBehindQueueForNewOrigin checks that a request to a new
// origin of a host whose queue is long fails at once when its deadline
// cannot be met: its robots.txt fetch waits behind the queue, and so does
// the request.
func TestDeadlineBehindQueueForNewOrigin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := New(site(""), WithPacing(pace.Policy{Jitter: pace.None}))
		resp, err := get(tr, "http://h/first", "")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for i := range 5 {
			go func() {
				req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://h/q%d", i), nil)
				if resp, err := tr.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
			}()
		}
		synctest.Wait() // five queued, a second apart

		dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer dcancel()
		req, _ := http.NewRequestWithContext(dctx, "GET", "http://h:8080/page", nil)
		called := time.Now()
		_, err = tr.RoundTrip(req)
		var de *pace.DeadlineError
		if !errors.As(err, &de) || time.Since(called) != 0 {
			t.Errorf("RoundTrip = %v after %v; want a *pace.DeadlineError at once", err, time.Since(called))
		}
		cancel()
		time.Sleep(time.Minute) // the robots.txt fetch goes on, for the next request
		synctest.Wait()
	})
}
