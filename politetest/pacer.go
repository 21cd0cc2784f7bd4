package politetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite"
)

// RunPacer checks the Pacers that newPacer makes against every case, each a
// subtest named for the rule it checks. Each case gives newPacer an
// Effective policy, the defaults with no jitter but for what the case
// changes, as a transport does.
func RunPacer(t *testing.T, newPacer func(polite.PacingPolicy) polite.Pacer) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				policy := polite.PacingPolicy{Jitter: polite.None}
				if c.policy != nil {
					c.policy(&policy)
				}
				p := newPacer(policy.Effective())
				if c, ok := p.(io.Closer); ok {
					defer c.Close()
				}
				c.run(t, &session{t: t, p: p})
			})
		})
	}
}

// A session drives one Pacer on the bubble's clock.
type session struct {
	t  *testing.T
	p  polite.Pacer
	t0 time.Time // the first start
}

// request starts a request to key, waits latency, ends it with o, and
// returns when it started, as an offset from the session's first start.
func (s *session) request(key string, crawlDelay, latency time.Duration, o polite.Outcome) time.Duration {
	s.t.Helper()
	l, at := s.start(key, crawlDelay)
	time.Sleep(latency)
	l.Release(o)
	return at
}

// start starts a request to key and returns its lease and when it started.
func (s *session) start(key string, crawlDelay time.Duration) (polite.Lease, time.Duration) {
	s.t.Helper()
	l, err := s.p.Acquire(context.Background(), key, crawlDelay)
	if err != nil {
		s.t.Fatalf("Acquire(%q) = %v", key, err)
	}
	if s.t0.IsZero() {
		s.t0 = time.Now()
	}
	return l, time.Since(s.t0)
}

var (
	success = polite.Outcome{Class: polite.OutcomeSuccess}
	neutral = polite.Outcome{Class: polite.OutcomeNeutral}
	signal  = polite.Outcome{Class: polite.OutcomeSignal}
)

// want fails the test when got is not want.
func want[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v; want %v", what, got, want)
	}
}

var cases = []struct {
	name   string
	policy func(*polite.PacingPolicy)
	run    func(t *testing.T, s *session)
}{
	{"the base delay separates starts", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 100*time.Millisecond, success)
		want(t, "second start", s.request("a", 0, 0, success), time.Second)
	}},
	{"a Crawl-delay is a floor", nil, func(t *testing.T, s *session) {
		s.request("a", 3*time.Second, 0, success)
		want(t, "second start", s.request("a", 3*time.Second, 0, success), 3*time.Second)
	}},
	{"a Crawl-delay is clamped to MaxCrawlDelay", nil, func(t *testing.T, s *session) {
		s.request("a", time.Hour, 0, success)
		want(t, "second start", s.request("a", time.Hour, 0, success), time.Minute)
	}},
	{"the gap after a request is at least its Crawl-delay", nil, func(t *testing.T, s *session) {
		s.request("a", 4*time.Second, 0, success)
		want(t, "start of a request that knows none", s.request("a", 0, 0, success), 4*time.Second)
	}},
	{"the pace is twice the latency", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 3*time.Second, success)
		want(t, "second start", s.request("a", 0, 0, success), 6*time.Second)
	}},
	{"a fast error does not lower the latency", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 3*time.Second, success)
		s.request("a", 0, 50*time.Millisecond, neutral)
		want(t, "third start", s.request("a", 0, 0, success), 12*time.Second)
	}},
	{"a timeout is no latency sample", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 8*time.Second, polite.Outcome{Class: polite.OutcomeSignal, TimedOut: true})
		// The pause after the signal is 5s from the end at +8s; the pace
		// stays the base delay.
		want(t, "second start", s.request("a", 0, 0, success), 13*time.Second)
		want(t, "third start", s.request("a", 0, 0, success), 15*time.Second)
	}},
	{"latency pacing can be off", func(p *polite.PacingPolicy) { p.LatencyFactor, p.BaseDelay = polite.None, polite.None }, func(t *testing.T, s *session) {
		s.request("a", 0, 3*time.Second, success)
		want(t, "second start", s.request("a", 0, 0, success), 3*time.Second)
	}},
	{"a signal pauses the key and doubles the pace", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 100*time.Millisecond, signal)
		want(t, "start after the pause", s.request("a", 0, 100*time.Millisecond, success), 5100*time.Millisecond)
		want(t, "start after that", s.request("a", 0, 0, success), 7100*time.Millisecond)
	}},
	{"a Retry-After is a floor on the pause", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 0, polite.Outcome{Class: polite.OutcomeSignal, RetryAfter: 2 * time.Minute})
		want(t, "start after the pause", s.request("a", 0, 0, success), 2*time.Minute)
	}},
	{"a short Retry-After is the wait with a small backoff base", func(p *polite.PacingPolicy) { p.BackoffBase = polite.None }, func(t *testing.T, s *session) {
		s.request("a", 0, 0, polite.Outcome{Class: polite.OutcomeSignal, RetryAfter: time.Second})
		want(t, "start after the pause", s.request("a", 0, 0, success), 2*time.Second) // the pace, doubled
	}},
	{"signals in flight raise the level once", func(p *polite.PacingPolicy) { p.MaxInFlight = 3 }, func(t *testing.T, s *session) {
		var leases []polite.Lease
		for range 3 {
			l, _ := s.start("a", 0) // at +0s, +1s, +2s
			leases = append(leases, l)
		}
		time.Sleep(100 * time.Millisecond)
		for _, l := range leases {
			l.Release(signal)
		}
		// Level 1, not 3: the pace is the first request's latency, 2.1s,
		// twice, doubled once, from the last start at +2s.
		want(t, "start after the pause", s.request("a", 0, 0, success), 10400*time.Millisecond)
	}},
	{"five successes lower the level", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 0, signal)
		var last time.Duration
		for range 5 {
			last = s.request("a", 0, 0, success)
		}
		want(t, "start after recovery", s.request("a", 0, 0, success)-last, time.Second)
	}},
	{"30 quiet minutes forget the level", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 0, signal)
		s.request("a", 0, 0, signal)
		time.Sleep(30 * time.Minute)
		first := s.request("a", 0, 0, neutral)
		want(t, "gap after the quiet spell", s.request("a", 0, 0, success)-first, time.Second)
	}},
	{"no quota left pauses the key until the reset", func(p *polite.PacingPolicy) { p.BaseDelay = polite.None }, func(t *testing.T, s *session) {
		s.request("a", 0, 0, polite.Outcome{Class: polite.OutcomeSuccess, Quota: polite.Quota{Known: true, Remaining: 0, Reset: 30 * time.Second}})
		want(t, "second start", s.request("a", 0, 0, success), 30*time.Second)
	}},
	{"a low quota is spread until the reset", func(p *polite.PacingPolicy) { p.BaseDelay = polite.None }, func(t *testing.T, s *session) {
		s.request("a", 0, 0, polite.Outcome{Class: polite.OutcomeSuccess, Quota: polite.Quota{Known: true, Remaining: 2, Limit: 100, Reset: 10 * time.Second}})
		want(t, "second start", s.request("a", 0, 0, success), 5*time.Second)
	}},
	{"the jitter never carries a low quota's spread past its reset", func(p *polite.PacingPolicy) { p.BaseDelay, p.Jitter = polite.None, 1 }, func(t *testing.T, s *session) {
		s.request("a", 0, 0, polite.Outcome{Class: polite.OutcomeSuccess, Quota: polite.Quota{Known: true, Remaining: 1, Limit: 100, Reset: time.Hour}})
		want(t, "second start", s.request("a", 0, 0, success), time.Hour)
	}},
	{"MaxInFlight requests at most", func(p *polite.PacingPolicy) { p.LatencyFactor = polite.None }, func(t *testing.T, s *session) {
		l, _ := s.start("a", 0)
		done := make(chan time.Duration)
		go func() { _, at := s.start("a", 0); done <- at }()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		select {
		case at := <-done:
			t.Fatalf("second request started at +%v with the only slot taken", at)
		default:
		}
		l.Release(success)
		want(t, "second start", <-done, 10*time.Second)
	}},
	{"keys are paced apart", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 0, signal)
		want(t, "start on another key", s.request("b", 0, 0, success), 0)
	}},
	{"a cancelled wait holds nothing", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 0, success)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(100 * time.Millisecond); cancel() }()
		if _, err := s.p.Acquire(ctx, "a", 0); !errors.Is(err, context.Canceled) {
			t.Fatalf("Acquire = %v; want context.Canceled", err)
		}
		want(t, "next start", s.request("a", 0, 0, success), time.Second)
	}},
	{"a release says what it changed", nil, func(t *testing.T, s *session) {
		release := func(o polite.Outcome) polite.Change {
			l, _ := s.start("a", 0)
			return l.Release(o)
		}
		want(t, "change after a signal", release(polite.Outcome{Class: polite.OutcomeSignal, RetryAfter: 30 * time.Second}),
			polite.Change{Raised: true, Level: 1, Pause: 30 * time.Second})
		for i := range 4 {
			want(t, fmt.Sprintf("change after success %d", i+1), release(success), polite.Change{Level: 1})
		}
		want(t, "change after the fifth success", release(success), polite.Change{Cleared: true})
	}},
	{"Ready reads the key's state without reserving", nil, func(t *testing.T, s *session) {
		rp, ok := s.p.(polite.ReadyPacer)
		if !ok {
			t.Skip("not a ReadyPacer")
		}
		ready := func(key string, crawlDelay time.Duration) polite.KeyState {
			ks, err := rp.Ready(context.Background(), key, crawlDelay)
			if err != nil {
				t.Fatalf("Ready(%q) = %v", key, err)
			}
			return ks
		}
		want(t, "Next of a key never used", ready("never", 0).Next, time.Time{})
		s.request("a", 0, 0, polite.Outcome{Class: polite.OutcomeSignal, RetryAfter: 30 * time.Second})
		now := time.Now()
		ks := ready("a", 0)
		want(t, "Next after a 30s Retry-After", ks.Next.Sub(now), 30*time.Second)
		want(t, "PausedUntil", ks.PausedUntil.Sub(now), 30*time.Second)
		want(t, "Level", ks.Level, 1)
		want(t, "Pace, doubled once", ks.Pace, 2*time.Second)
		want(t, "Pace with a 5s Crawl-delay", ready("a", 5*time.Second).Pace, 5*time.Second)
		want(t, "Busy", ks.Busy, false)
		want(t, "Next after asking twice: nothing reserved", ready("a", 0).Next, ks.Next)
		want(t, "start after the pause", s.request("a", 0, 0, success), 30*time.Second)
	}},
	{"Stats lists the keys used", nil, func(t *testing.T, s *session) {
		sp, ok := s.p.(polite.StatsPacer)
		if !ok {
			t.Skip("not a StatsPacer")
		}
		s.request("a", 0, 0, success)
		s.request("a", 0, 0, success)
		s.request("b", 0, 0, signal)
		stats, err := sp.Stats(context.Background())
		if err != nil {
			t.Fatalf("Stats = %v", err)
		}
		byKey := map[string]polite.KeyState{}
		for _, ks := range stats {
			byKey[ks.Key] = ks
		}
		want(t, "requests to a", byKey["a"].Requests, uint64(2))
		want(t, "requests to b", byKey["b"].Requests, uint64(1))
		want(t, "level of b", byKey["b"].Level, 1)
		want(t, "backoffs of b", byKey["b"].Backoffs, uint64(1))
	}},
	{"a deadline before the next start fails at once", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 0, success)
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		asked := time.Now()
		_, err := s.p.Acquire(ctx, "a", 0)
		var de *polite.DeadlineError
		if !errors.As(err, &de) || time.Since(asked) != 0 {
			t.Fatalf("Acquire = %v after %v; want a *DeadlineError at once", err, time.Since(asked))
		}
		want(t, "next start", s.request("a", 0, 0, success), time.Second)
	}},
}
