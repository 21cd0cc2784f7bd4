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
// subtest named for the rule it checks. Each case gives newPacer
// [polite.Policies] as a transport does: an Effective Default, the
// defaults with no jitter but for what the case changes, and for the
// cases of keys with policies of their own, an Override.
func RunPacer(t *testing.T, newPacer func(polite.Policies) polite.Pacer) {
	run := func(name string, edit func(*polite.PacingPolicy), override func(string) (polite.PacingPolicy, bool), check func(*testing.T, *session)) {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				policy := polite.PacingPolicy{Jitter: polite.None}
				if edit != nil {
					edit(&policy)
				}
				p := newPacer(polite.Policies{Default: policy.Effective(), Override: override})
				if c, ok := p.(io.Closer); ok {
					defer c.Close()
				}
				check(t, &session{t: t, p: p})
			})
		})
	}
	for _, c := range cases {
		run(c.name, c.policy, nil, c.run)
	}
	for _, c := range ownCases {
		run(c.name, nil, own, c.run)
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

// requestIn is request for a request of a quota partition.
func (s *session) requestIn(key, partition string, o polite.Outcome) time.Duration {
	s.t.Helper()
	l, at := s.startIn(key, partition, 0)
	l.Release(o)
	return at
}

// start starts a request to key and returns its lease and when it started.
func (s *session) start(key string, crawlDelay time.Duration) (polite.Lease, time.Duration) {
	s.t.Helper()
	return s.startIn(key, "", crawlDelay)
}

// startIn starts a request of a quota partition to key and returns its
// lease and when it started.
func (s *session) startIn(key, partition string, crawlDelay time.Duration) (polite.Lease, time.Duration) {
	s.t.Helper()
	l, err := s.p.Acquire(context.Background(), key, partition, crawlDelay)
	if err != nil {
		s.t.Fatalf("Acquire(%q, %q) = %v", key, partition, err)
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

// quota is a success whose response reported a rate-limit quota of the
// server's partition.
func quota(remaining, limit int64, reset time.Duration, partition string) polite.Outcome {
	return polite.Outcome{Class: polite.OutcomeSuccess, Quota: polite.Quota{Known: true, Remaining: remaining, Limit: limit, Reset: reset, Partition: partition}}
}

// want fails the test when got is not want.
func want[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v; want %v", what, got, want)
	}
}

// own is the Override of the cases of keys with policies of their own:
// "slow" has a base delay of 10s, "wide" three requests in flight and no
// base delay or latency pacing, "api" a backoff base of 1s and no base
// delay or latency pacing, "mend" a RecoverAfter of 1; the other keys keep
// the Default.
func own(key string) (polite.PacingPolicy, bool) {
	switch key {
	case "mend":
		return polite.PacingPolicy{RecoverAfter: 1}, true
	case "slow":
		return polite.PacingPolicy{BaseDelay: 10 * time.Second}, true
	case "wide":
		return polite.PacingPolicy{MaxInFlight: 3, BaseDelay: polite.None, LatencyFactor: polite.None}, true
	case "api":
		return polite.PacingPolicy{BackoffBase: time.Second, BaseDelay: polite.None, LatencyFactor: polite.None}, true
	}
	return polite.PacingPolicy{}, false
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
	{"an exhausted quota holds only its partition", func(p *polite.PacingPolicy) { p.BaseDelay, p.MaxInFlight = polite.None, polite.None }, func(t *testing.T, s *session) {
		s.requestIn("a", "A", quota(0, 0, 30*time.Second, ""))
		want(t, "start in another partition", s.requestIn("a", "B", success), 0)
		want(t, "start in another partition, again", s.requestIn("a", "B", success), 0)
		want(t, "start in the partition", s.requestIn("a", "A", success), 30*time.Second)
	}},
	{"a low quota is spread within its partition", func(p *polite.PacingPolicy) { p.BaseDelay, p.MaxInFlight = polite.None, polite.None }, func(t *testing.T, s *session) {
		s.requestIn("a", "A", quota(2, 100, 10*time.Second, ""))
		want(t, "start in another partition", s.requestIn("a", "B", success), 0)
		want(t, "start in the partition", s.requestIn("a", "A", success), 5*time.Second)
	}},
	{"a server's partitions are kept apart", func(p *polite.PacingPolicy) { p.BaseDelay, p.MaxInFlight = polite.None, polite.None }, func(t *testing.T, s *session) {
		s.requestIn("a", "search", quota(0, 0, 9*time.Second, "search"))
		s.requestIn("a", "core", quota(4999, 5000, time.Hour, "core"))
		// The ample core quota changes nothing of search's.
		want(t, "start in the search partition", s.requestIn("a", "search", success), 9*time.Second)
	}},
	{"one success lowers the level with RecoverAfter 1", func(p *polite.PacingPolicy) { p.RecoverAfter = 1 }, func(t *testing.T, s *session) {
		l, _ := s.start("a", 0)
		want(t, "change after a signal", l.Release(signal), polite.Change{Raised: true, Level: 1, Pause: 5 * time.Second})
		l, _ = s.start("a", 0)
		want(t, "change after a success", l.Release(success), polite.Change{Cleared: true})
	}},
	{"the jitter never carries a low quota's spread past its reset", func(p *polite.PacingPolicy) { p.BaseDelay, p.Jitter = polite.None, 1 }, func(t *testing.T, s *session) {
		s.request("a", 0, 0, polite.Outcome{Class: polite.OutcomeSuccess, Quota: polite.Quota{Known: true, Remaining: 1, Limit: 100, Reset: time.Hour}})
		want(t, "second start", s.request("a", 0, 0, success), time.Hour)
	}},
	{"MaxInFlight requests at most", func(p *polite.PacingPolicy) { p.LatencyFactor = polite.None }, func(t *testing.T, s *session) {
		l, _ := s.start("a", 0)
		done := make(chan time.Duration)
		second := make(chan polite.Lease, 1)
		go func() { l, at := s.start("a", 0); second <- l; done <- at }()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		select {
		case at := <-done:
			t.Fatalf("second request started at +%v with the only slot taken", at)
		default:
		}
		l.Release(success)
		want(t, "second start", <-done, 10*time.Second)
		(<-second).Release(success) // every Lease is released once
	}},
	{"keys are paced apart", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 0, signal)
		want(t, "start on another key", s.request("b", 0, 0, success), 0)
	}},
	{"a cancelled wait holds nothing", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 0, success)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(100 * time.Millisecond); cancel() }()
		if _, err := s.p.Acquire(ctx, "a", "", 0); !errors.Is(err, context.Canceled) {
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
			ks, err := rp.Ready(context.Background(), key, "", crawlDelay)
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
	{"Ready reads a partition's quota", func(p *polite.PacingPolicy) { p.BaseDelay, p.MaxInFlight = polite.None, polite.None }, func(t *testing.T, s *session) {
		rp, ok := s.p.(polite.ReadyPacer)
		if !ok {
			t.Skip("not a ReadyPacer")
		}
		s.requestIn("a", "A", quota(0, 0, 30*time.Second, ""))
		now := time.Now()
		for _, c := range []struct {
			partition string
			next      time.Duration
		}{{"A", 30 * time.Second}, {"B", 0}} {
			ks, err := rp.Ready(context.Background(), "a", c.partition, 0)
			if err != nil {
				t.Fatalf("Ready = %v", err)
			}
			want(t, "Next of partition "+c.partition, max(ks.Next.Sub(now), 0), c.next)
		}
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
		_, err := s.p.Acquire(ctx, "a", "", 0)
		var de *polite.DeadlineError
		if !errors.As(err, &de) || time.Since(asked) != 0 {
			t.Fatalf("Acquire = %v after %v; want a *DeadlineError at once", err, time.Since(asked))
		}
		want(t, "next start", s.request("a", 0, 0, success), time.Second)
	}},
}

// ownCases check that a Pacer runs the policy of each key that
// Policies.Override gives one of its own (see own), and keeps the Default
// for the others.
var ownCases = []struct {
	name string
	run  func(t *testing.T, s *session)
}{
	{"a key's own base delay", func(t *testing.T, s *session) {
		s.request("slow", 0, 0, success)
		want(t, "start on a key with the default", s.request("fast", 0, 0, success), 0)
		want(t, "second start on it", s.request("fast", 0, 0, success), time.Second)
		want(t, "second start on the slow key", s.request("slow", 0, 0, success), 10*time.Second)
	}},
	{"a key's own MaxInFlight", func(t *testing.T, s *session) {
		var leases []polite.Lease
		for i := range 3 {
			l, at := s.start("wide", 0)
			want(t, fmt.Sprintf("start %d on the wide key", i+1), at, 0)
			leases = append(leases, l)
		}
		done := make(chan time.Duration)
		fourth := make(chan polite.Lease, 1)
		go func() { l, at := s.start("wide", 0); fourth <- l; done <- at }()
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case at := <-done:
			t.Fatalf("a fourth request started at +%v with three in flight", at)
		default:
		}
		leases[0].Release(success)
		want(t, "fourth start", <-done, time.Second)
		for _, l := range append(leases[1:], <-fourth) {
			l.Release(success)
		}
	}},
	{"a key's own backoff", func(t *testing.T, s *session) {
		s.request("api", 0, 0, signal)
		want(t, "start on the api key after its pause", s.request("api", 0, 0, success), time.Second)
		s.request("other", 0, 0, signal)
		want(t, "start on a key with the default backoff", s.request("other", 0, 0, success), time.Second+5*time.Second)
	}},
	{"a key's own RecoverAfter", func(t *testing.T, s *session) {
		for _, c := range []struct {
			key   string
			after polite.Change // of a success after the signal's pause
		}{{"mend", polite.Change{Cleared: true}}, {"other", polite.Change{Level: 1}}} {
			l, _ := s.start(c.key, 0)
			want(t, "change of a signal on "+c.key, l.Release(signal), polite.Change{Raised: true, Level: 1, Pause: 5 * time.Second})
			l, _ = s.start(c.key, 0)
			want(t, "change of a success on "+c.key, l.Release(success), c.after)
		}
	}},
	{"a key's own policy with quota partitions", func(t *testing.T, s *session) {
		s.requestIn("slow", "A", quota(0, 0, 30*time.Second, ""))
		want(t, "start in another partition, after the key's own base delay", s.requestIn("slow", "B", success), 10*time.Second)
		want(t, "start in the partition, after its quota's reset", s.requestIn("slow", "A", success), 30*time.Second)
	}},
	{"Crawl-delay and Retry-After stay floors under a key's own policy", func(t *testing.T, s *session) {
		s.request("wide", 3*time.Second, 0, success)
		want(t, "start after a Crawl-delay of 3s", s.request("wide", 3*time.Second, 0, success), 3*time.Second)
		s.request("api", 0, 0, polite.Outcome{Class: polite.OutcomeSignal, RetryAfter: time.Minute})
		want(t, "start after a Retry-After of a minute", s.request("api", 0, 0, success), 3*time.Second+time.Minute)
	}},
	{"Ready and Stats show a key's policy", func(t *testing.T, s *session) {
		def := polite.PacingPolicy{Jitter: polite.None}.Effective()
		slow := def
		slow.BaseDelay = 10 * time.Second
		if rp, ok := s.p.(polite.ReadyPacer); ok {
			for key, p := range map[string]polite.PacingPolicy{"slow": slow, "never": def} {
				ks, err := rp.Ready(context.Background(), key, "", 0)
				if err != nil {
					t.Fatalf("Ready(%q) = %v", key, err)
				}
				want(t, "policy of "+key+" in Ready", ks.Policy, p)
				want(t, "pace of "+key+" in Ready", ks.Pace, p.BaseDelay)
			}
		}
		sp, ok := s.p.(polite.StatsPacer)
		if !ok {
			return
		}
		s.request("slow", 0, 0, success)
		s.request("fast", 0, 0, success)
		stats, err := sp.Stats(context.Background())
		if err != nil {
			t.Fatalf("Stats = %v", err)
		}
		for _, ks := range stats {
			switch ks.Key {
			case "slow":
				want(t, "policy of slow in Stats", ks.Policy, slow)
			case "fast":
				want(t, "policy of fast in Stats", ks.Policy, def)
			}
		}
	}},
}
