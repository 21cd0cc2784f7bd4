package pace

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A heard is a cause a Trace heard, and when, as an offset from the
// start of the request under test's wait.
type heard struct {
	cause Cause
	at    time.Duration
}

// traceRecorder is a Trace that records what it hears, one entry per
// change of cause.
type traceRecorder struct {
	mu    sync.Mutex
	t0    time.Time
	heard []heard
}

func newTraceRecorder() *traceRecorder { return &traceRecorder{t0: time.Now()} }

func (r *traceRecorder) trace() *Trace {
	return &Trace{Wait: func(c Cause) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if n := len(r.heard); n == 0 || r.heard[n-1].cause != c {
			r.heard = append(r.heard, heard{c, time.Since(r.t0)})
		}
	}}
}

func (r *traceRecorder) got() []heard {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.heard)
}

// TestTraceCauses checks that the in-memory Pacer tells a request's Trace
// what holds it each time the cause changes, and nothing when the request
// starts at once.
func TestTraceCauses(t *testing.T) {
	const ms = time.Millisecond
	quota := func(remaining, limit int64, reset time.Duration) Outcome {
		return Outcome{Class: Success, Quota: Quota{Known: true, Remaining: remaining, Limit: limit, Reset: reset}}
	}
	tests := []struct {
		name  string
		edit  func(*Config)
		setup func(t *testing.T, p *Memory) // on the test's goroutine, before the request under test
		floor time.Duration                 // the request's Crawl-delay
		want  []heard
		start time.Duration // of the request under test, after its Acquire
	}{
		{name: "a key that is free starts at once", setup: func(t *testing.T, p *Memory) {
			request(t, p, pacerKey, 0, 2*time.Second, outSuccess) // the pace, 4s, has passed when the page asks
			time.Sleep(2 * time.Second)
		}},
		{name: "the base delay", setup: func(t *testing.T, p *Memory) {
			request(t, p, pacerKey, 0, 100*ms, outSuccess)
		}, want: []heard{{CausePace, 0}}, start: 900 * ms},
		{name: "the latency", setup: func(t *testing.T, p *Memory) {
			request(t, p, pacerKey, 0, 2*time.Second, outSuccess)
		}, want: []heard{{CausePace, 0}}, start: 2 * time.Second},
		{name: "a Crawl-delay", floor: 3 * time.Second, setup: func(t *testing.T, p *Memory) {
			request(t, p, pacerKey, 3*time.Second, 100*ms, outSuccess)
		}, want: []heard{{CauseCrawlDelay, 0}}, start: 2900 * ms},
		{name: "a Crawl-delay shorter than the base delay", floor: 500 * ms, setup: func(t *testing.T, p *Memory) {
			request(t, p, pacerKey, 500*ms, 100*ms, outSuccess)
		}, want: []heard{{CausePace, 0}}, start: 900 * ms},
		{name: "a backoff pause", setup: func(t *testing.T, p *Memory) {
			request(t, p, pacerKey, 0, 100*ms, outSignal)
		}, want: []heard{{CauseBackoff, 0}}, start: 5 * time.Second},
		{name: "the pace doubled by the backoff level", setup: func(t *testing.T, p *Memory) {
			request(t, p, pacerKey, 0, 100*ms, outSignal) // paused until +5.1s
			time.Sleep(6 * time.Second)
			request(t, p, pacerKey, 0, 0, outSuccess) // at +6.1s; the next 2s later
		}, want: []heard{{CauseBackoff, 0}}, start: 2 * time.Second},
		{name: "a Retry-After", setup: func(t *testing.T, p *Memory) {
			request(t, p, pacerKey, 0, 0, Outcome{Class: Signal, RetryAfter: time.Minute})
		}, want: []heard{{CauseRetryAfter, 0}}, start: time.Minute},
		{name: "a Retry-After shorter than the backoff pause", setup: func(t *testing.T, p *Memory) {
			request(t, p, pacerKey, 0, 0, Outcome{Class: Signal, RetryAfter: time.Second})
		}, want: []heard{{CauseBackoff, 0}}, start: 5 * time.Second},
		{name: "an exhausted quota", edit: withBaseDelay(0), setup: func(t *testing.T, p *Memory) {
			request(t, p, pacerKey, 0, 0, quota(0, 100, 30*time.Second))
		}, want: []heard{{CauseQuota, 0}}, start: 30 * time.Second},
		{name: "a low quota's spread", edit: withBaseDelay(0), setup: func(t *testing.T, p *Memory) {
			request(t, p, pacerKey, 0, 0, quota(2, 100, 9*time.Second))
		}, want: []heard{{CauseQuotaSpread, 0}}, start: 3 * time.Second},
		{name: "a rate limit learned from a 429", edit: func(c *Config) {
			c.Policy.BaseDelay, c.Policy.LatencyFactor, c.Policy.BackoffBase = None, None, None
		}, setup: func(t *testing.T, p *Memory) {
			request(t, p, pacerKey, 0, 100*ms, outSuccess)
			request(t, p, pacerKey, 0, 0, Outcome{Class: Signal, RateLimited: true}) // 100ms after the first: the limit is slower
		}, want: []heard{{CauseRateLimit, 0}}, start: 150 * ms},
		{name: "the in-flight cap", edit: func(c *Config) { c.Policy.BaseDelay, c.Policy.LatencyFactor = None, None }, setup: func(t *testing.T, p *Memory) {
			l := mustAcquire(t, p, pacerKey, 0)
			go func() { time.Sleep(10 * time.Second); p.Release(l, outSuccess) }()
		}, want: []heard{{CauseInFlight, 0}}, start: 10 * time.Second},
		{name: "a request queued ahead", setup: func(t *testing.T, p *Memory) {
			request(t, p, pacerKey, 0, 0, outSuccess)
			head := goAcquire(context.Background(), p, pacerKey, 0) // waits for the pace, holding the turn
			go func() { p.Release((<-head).t, outSuccess) }()
		}, want: []heard{{CauseQueue, 0}, {CausePace, time.Second}}, start: 2 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				edits := []func(*Config){}
				if tc.edit != nil {
					edits = append(edits, tc.edit)
				}
				p := newTestPacer(0, edits...)
				tc.setup(t, p)
				rec := newTraceRecorder()
				l, err := p.Acquire(WithTrace(context.Background(), rec.trace()), Request{Key: pacerKey, CrawlDelay: tc.floor})
				if err != nil {
					t.Fatal(err)
				}
				if got := time.Since(rec.t0); got != tc.start {
					t.Errorf("started after %v; want %v", got, tc.start)
				}
				p.Release(l, outSuccess)
				if got := rec.got(); !slices.Equal(got, tc.want) {
					t.Errorf("heard %v; want %v", got, tc.want)
				}
			})
		})
	}
}

// TestTraceAfterARelease checks that a waiting request hears the new cause
// when a response changes what holds it.
func TestTraceAfterARelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPacer(0, withInFlight(2))
		first := mustAcquire(t, p, pacerKey, 0)
		rec := newTraceRecorder()
		done := make(chan error, 1)
		go func() {
			l, err := p.Acquire(WithTrace(context.Background(), rec.trace()), Request{Key: pacerKey})
			if err == nil {
				p.Release(l, outSuccess)
			}
			done <- err
		}()
		time.Sleep(500 * time.Millisecond)
		p.Release(first, Outcome{Class: Signal, RetryAfter: time.Minute})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		want := []heard{{CausePace, 0}, {CauseRetryAfter, 500 * time.Millisecond}}
		if got := rec.got(); !slices.Equal(got, want) {
			t.Errorf("heard %v; want %v", got, want)
		}
	})
}

// TestDeadlineErrorCause checks that a request refused for its deadline
// is told what would have held it.
func TestDeadlineErrorCause(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, p *Memory)
		part  string
		want  Cause
	}{
		{"the pace", func(t *testing.T, p *Memory) { request(t, p, pacerKey, 0, 0, outSuccess) }, "", CausePace},
		{"a Retry-After", func(t *testing.T, p *Memory) {
			request(t, p, pacerKey, 0, 0, Outcome{Class: Signal, RetryAfter: time.Minute})
		}, "", CauseRetryAfter},
		{"a Retry-After, with a request ahead", func(t *testing.T, p *Memory) {
			request(t, p, pacerKey, 0, 0, Outcome{Class: Signal, RetryAfter: time.Minute})
			goAcquire(t.Context(), p, pacerKey, 0)
		}, "", CauseRetryAfter},
		{"requests ahead", func(t *testing.T, p *Memory) {
			request(t, p, pacerKey, 0, 0, outSuccess)
			time.Sleep(900 * time.Millisecond) // the pace ends before the deadline; the one ahead's does not
			goAcquire(t.Context(), p, pacerKey, 0)
		}, "", CauseQueue},
		{"an exhausted quota", func(t *testing.T, p *Memory) {
			l, _ := p.Acquire(t.Context(), Request{Key: pacerKey, Partition: "A"})
			p.Release(l, partitioned("", 0, 0, time.Minute))
			time.Sleep(time.Second)
		}, "A", CauseQuota},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newTestPacer(0)
				tc.setup(t, p)
				ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
				defer cancel()
				_, err := p.Acquire(ctx, Request{Key: pacerKey, Partition: tc.part})
				var de *DeadlineError
				if !errors.As(err, &de) || de.Cause != tc.want {
					t.Errorf("Acquire = %#v; want a *DeadlineError with the cause %q", err, tc.want)
				}
			})
		})
	}
}
