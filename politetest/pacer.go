package politetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
)

// RunPacer checks the Pacers that newPacer makes against every case, each a
// subtest named for the rule it checks. Each case gives newPacer a
// [pace.Config] as a transport does: an Effective Policy, the defaults
// with no jitter but for what the case changes; for the cases of keys with
// policies of their own, an Override; and for the cases of the memory
// bound, a MaxKeys of 1 and an Evicted hook. A Pacer that tells a
// [pace.Trace] why a request waits is held to telling the right causes; one
// that tells nothing skips that case, since a Trace is optional.
func RunPacer(t *testing.T, newPacer func(pace.Config) pace.Pacer) {
	run := func(name string, edit func(*pace.Config), check func(*testing.T, *session)) {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &session{t: t}
				c := pace.Config{Policy: pace.Policy{Jitter: pace.None}}
				if edit != nil {
					edit(&c)
				}
				c.Policy = c.Policy.Effective()
				if c.Evicted != nil {
					hook := c.Evicted
					c.Evicted = func(key string) { s.evicted(key); hook(key) }
				}
				s.p = newPacer(c)
				if c, ok := s.p.(io.Closer); ok {
					defer c.Close()
				}
				check(t, s)
			})
		})
	}
	for _, c := range cases {
		edit := func(cfg *pace.Config) {
			if c.policy != nil {
				c.policy(&cfg.Policy)
			}
		}
		run(c.name, edit, c.run)
	}
	for _, c := range ownCases {
		run(c.name, func(cfg *pace.Config) { cfg.Override = own }, c.run)
	}
	for _, c := range memoryBoundCases {
		run(c.name, func(cfg *pace.Config) { cfg.MaxKeys, cfg.Evicted = 1, func(string) {} }, c.run)
	}
}

// A session drives one Pacer on the bubble's clock.
type session struct {
	t  *testing.T
	p  pace.Pacer
	t0 time.Time // the first start

	mu     sync.Mutex // guards evicts
	evicts []string   // the keys Config.Evicted was given
}

// evicted is the session's Config.Evicted: it records key, and asks the
// Pacer about it, as a hook may, which must not deadlock: the hook is
// called outside the Pacer's locks.
func (s *session) evicted(key string) {
	if rp, ok := s.p.(pace.ReadyPacer); ok {
		if _, err := rp.Ready(context.Background(), pace.Request{Key: key}); err != nil {
			s.t.Errorf("Ready(%q) from Evicted = %v", key, err)
		}
	}
	s.mu.Lock()
	s.evicts = append(s.evicts, key)
	s.mu.Unlock()
}

// request starts a request to key, waits latency, ends it with o, and
// returns when it started, as an offset from the session's first start.
func (s *session) request(key string, crawlDelay, latency time.Duration, o pace.Outcome) time.Duration {
	s.t.Helper()
	l, at := s.start(key, crawlDelay)
	time.Sleep(latency)
	s.p.Release(l, o)
	return at
}

// requestIn is request for a request of a quota partition.
func (s *session) requestIn(key, partition string, o pace.Outcome) time.Duration {
	s.t.Helper()
	l, at := s.startIn(key, partition, 0)
	s.p.Release(l, o)
	return at
}

// start starts a request to key and returns its lease and when it started.
func (s *session) start(key string, crawlDelay time.Duration) (pace.Lease, time.Duration) {
	s.t.Helper()
	return s.startIn(key, "", crawlDelay)
}

// startIn starts a request of a quota partition to key and returns its
// lease and when it started.
func (s *session) startIn(key, partition string, crawlDelay time.Duration) (pace.Lease, time.Duration) {
	s.t.Helper()
	l, err := s.p.Acquire(context.Background(), pace.Request{Key: key, Partition: partition, CrawlDelay: crawlDelay})
	if err != nil {
		s.t.Fatalf("Acquire(%q, %q) = %v", key, partition, err)
	}
	if s.t0.IsZero() {
		s.t0 = time.Now()
	}
	return l, time.Since(s.t0)
}

var (
	success = pace.Outcome{Class: pace.Success}
	neutral = pace.Outcome{Class: pace.Neutral}
	signal  = pace.Outcome{Class: pace.Signal}
)

// quota is a success whose response reported a rate-limit quota of the
// server's partition.
func quota(remaining, limit int64, reset time.Duration, partition string) pace.Outcome {
	return pace.Outcome{Class: pace.Success, Quota: pace.Quota{Known: true, Remaining: remaining, Limit: limit, Reset: reset, Partition: partition}}
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
func own(key string) (pace.Policy, bool) {
	switch key {
	case "mend":
		return pace.Policy{RecoverAfter: 1}, true
	case "slow":
		return pace.Policy{BaseDelay: 10 * time.Second}, true
	case "wide":
		return pace.Policy{MaxInFlight: 3, BaseDelay: pace.None, LatencyFactor: pace.None}, true
	case "api":
		return pace.Policy{BackoffBase: time.Second, BaseDelay: pace.None, LatencyFactor: pace.None}, true
	}
	return pace.Policy{}, false
}

// memoryBoundCases run with a MaxKeys of 1: a Pacer that keeps its keys in
// memory must forget only what has nothing left to enforce.
var memoryBoundCases = []struct {
	name string
	run  func(t *testing.T, s *session)
}{
	{"a robots.txt fetch keeps its key for the Crawl-delay its file asks", func(t *testing.T, s *session) {
		l, err := s.p.Acquire(context.Background(), pace.Request{Key: "a", Robots: true})
		if err != nil {
			t.Fatal(err)
		}
		s.t0 = time.Now()
		time.Sleep(100 * time.Millisecond)
		s.p.Release(l, success)
		s.p.RobotsRead(l, 10*time.Second)
		time.Sleep(2 * time.Second) // past the base delay: "a" would be idle but for its Crawl-delay
		s.request("b", 0, 0, success)
		time.Sleep(2 * time.Second)
		s.request("c", 0, 0, success) // over the bound twice
		want(t, "the first page's start, after the robots.txt fetch's", s.request("a", 10*time.Second, 0, success), 10*time.Second)
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, k := range s.evicts {
			if k == "a" {
				t.Errorf("evicted %q before its Crawl-delay passed", k)
			}
		}
	}},
	{"a fetch not read yet keeps its key for the longest Crawl-delay", func(t *testing.T, s *session) {
		l, err := s.p.Acquire(context.Background(), pace.Request{Key: "a", Robots: true})
		if err != nil {
			t.Fatal(err)
		}
		s.t0 = time.Now()
		s.p.Release(l, success)
		time.Sleep(2 * time.Second)
		s.request("b", 0, 0, success)
		time.Sleep(2 * time.Second)
		s.request("c", 0, 0, success)
		s.p.RobotsRead(l, 30*time.Second) // read after the others came
		want(t, "the first page's start", s.request("a", 30*time.Second, 0, success), 30*time.Second)
	}},
	{"an idle key is forgotten, and said to be", func(t *testing.T, s *session) {
		s.request("a", 0, 0, success)
		time.Sleep(2 * time.Second) // past the pace: "a" has nothing to enforce
		s.request("b", 0, 0, success)
		time.Sleep(2 * time.Second)
		s.request("c", 0, 0, success)
		want(t, "a's next start, from the first", s.request("a", 0, 0, success), 4*time.Second)
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, k := range s.evicts {
			if k != "a" && k != "b" {
				t.Errorf("evicted %q; want only keys that were idle", k)
			}
		}
	}},
}

var cases = []struct {
	name   string
	policy func(*pace.Policy)
	run    func(t *testing.T, s *session)
}{
	{"a stated quota is spent by requests started together", func(p *pace.Policy) { p.BaseDelay, p.MaxInFlight = pace.None, pace.None }, func(t *testing.T, s *session) {
		s.request("a", 0, 0, quota(2, 5, 10*time.Second, ""))
		b, atB := s.start("a", 0)
		c, atC := s.start("a", 0)
		want(t, "the two starts left", atB+atC, 0)
		// b's answer says one is left, but c, in flight, may spend it: held.
		s.p.Release(b, quota(1, 5, 10*time.Second, ""))
		want(t, "a start once none is left", s.request("a", 0, 0, success), 10*time.Second)
		s.p.Release(c, success)
	}},
	{"a rate limit the server does not state is learned from its 429s", func(p *pace.Policy) { p.LatencyFactor = pace.None }, func(t *testing.T, s *session) {
		limited := pace.Outcome{Class: pace.Signal, RateLimited: true}
		s.request("a", 0, 0, success)
		at := s.request("a", 0, 0, limited) // 1s after the one before: too fast
		for range 5 {                       // RecoverAfter successes: the level is back to 0
			at = s.request("a", 0, 0, success)
		}
		next := s.request("a", 0, 0, success)
		want(t, "gap once the level is back to 0", next-at, 1500*time.Millisecond) // half again the gap that drew the 429
		for range 9 {
			next = s.request("a", 0, 0, success)
		}
		// ten successes at 1.5s make it good: the next trial is halfway to 1s
		want(t, "gap after ten successes", s.request("a", 0, 0, success)-next, 1250*time.Millisecond)
	}},
	{"a probe of a faster pace that draws a 429 puts the next one off twice as long", func(p *pace.Policy) { p.LatencyFactor = pace.None }, func(t *testing.T, s *session) {
		limited := pace.Outcome{Class: pace.Signal, RateLimited: true}
		s.request("a", 0, 0, success)
		prev := s.request("a", 0, 0, limited) // 1s after the one before: too fast
		// untilProbe answers successes until a start comes sooner than
		// 1.125s after the one before: the pace found, between 1s and an
		// eighth above it. It answers that probe with a 429, and returns
		// the successes at 1.125s before it.
		untilProbe := func() int {
			found := 0
			for range 2000 {
				l, at := s.start("a", 0)
				gap := at - prev
				prev = at
				if gap < 1125*time.Millisecond && found > 0 {
					s.p.Release(l, limited)
					return found
				}
				if gap == 1125*time.Millisecond {
					found++
				}
				s.p.Release(l, success)
			}
			t.Fatal("no probe of a faster pace in 2000 requests")
			return 0
		}
		want(t, "successes at the pace found before the first probe, the ten that found it included", untilProbe(), 110)
		want(t, "before the second, after the first drew a 429", untilProbe(), 200)
		want(t, "before the third", untilProbe(), 400)
		want(t, "before the fourth", untilProbe(), 800)
		want(t, "before the fifth, no further off", untilProbe(), 800)
	}},
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
		s.request("a", 0, 8*time.Second, pace.Outcome{Class: pace.Signal, TimedOut: true})
		// The pause after the signal is 5s from the end at +8s; the pace
		// stays the base delay.
		want(t, "second start", s.request("a", 0, 0, success), 13*time.Second)
		want(t, "third start", s.request("a", 0, 0, success), 15*time.Second)
	}},
	{"latency pacing can be off", func(p *pace.Policy) { p.LatencyFactor, p.BaseDelay = pace.None, pace.None }, func(t *testing.T, s *session) {
		s.request("a", 0, 3*time.Second, success)
		want(t, "second start", s.request("a", 0, 0, success), 3*time.Second)
	}},
	{"a signal pauses the key and doubles the pace", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 100*time.Millisecond, signal)
		want(t, "start after the pause", s.request("a", 0, 100*time.Millisecond, success), 5100*time.Millisecond)
		want(t, "start after that", s.request("a", 0, 0, success), 7100*time.Millisecond)
	}},
	{"a Retry-After is a floor on the pause", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 0, pace.Outcome{Class: pace.Signal, RetryAfter: 2 * time.Minute})
		want(t, "start after the pause", s.request("a", 0, 0, success), 2*time.Minute)
	}},
	{"a short Retry-After is the wait with a small backoff base", func(p *pace.Policy) { p.BackoffBase = pace.None }, func(t *testing.T, s *session) {
		s.request("a", 0, 0, pace.Outcome{Class: pace.Signal, RetryAfter: time.Second})
		want(t, "start after the pause", s.request("a", 0, 0, success), 2*time.Second) // the pace, doubled
	}},
	{"signals in flight raise the level once", func(p *pace.Policy) { p.MaxInFlight = 3 }, func(t *testing.T, s *session) {
		var leases []pace.Lease
		for range 3 {
			l, _ := s.start("a", 0) // at +0s, +1s, +2s
			leases = append(leases, l)
		}
		time.Sleep(100 * time.Millisecond)
		for _, l := range leases {
			s.p.Release(l, signal)
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
	{"no quota left pauses the key until the reset", func(p *pace.Policy) { p.BaseDelay = pace.None }, func(t *testing.T, s *session) {
		s.request("a", 0, 0, pace.Outcome{Class: pace.Success, Quota: pace.Quota{Known: true, Remaining: 0, Reset: 30 * time.Second}})
		want(t, "second start", s.request("a", 0, 0, success), 30*time.Second)
	}},
	{"a low quota is spread until the reset", func(p *pace.Policy) { p.BaseDelay = pace.None }, func(t *testing.T, s *session) {
		s.request("a", 0, 0, pace.Outcome{Class: pace.Success, Quota: pace.Quota{Known: true, Remaining: 2, Limit: 100, Reset: 9 * time.Second}})
		want(t, "second start", s.request("a", 0, 0, success), 3*time.Second) // the last of the two 3s before the reset
	}},
	{"an exhausted quota holds only its partition", func(p *pace.Policy) { p.BaseDelay, p.MaxInFlight = pace.None, pace.None }, func(t *testing.T, s *session) {
		s.requestIn("a", "A", quota(0, 0, 30*time.Second, ""))
		want(t, "start in another partition", s.requestIn("a", "B", success), 0)
		want(t, "start in another partition, again", s.requestIn("a", "B", success), 0)
		want(t, "start in the partition", s.requestIn("a", "A", success), 30*time.Second)
	}},
	{"a low quota is spread within its partition", func(p *pace.Policy) { p.BaseDelay, p.MaxInFlight = pace.None, pace.None }, func(t *testing.T, s *session) {
		s.requestIn("a", "A", quota(2, 100, 9*time.Second, ""))
		want(t, "start in another partition", s.requestIn("a", "B", success), 0)
		want(t, "start in the partition", s.requestIn("a", "A", success), 3*time.Second)
	}},
	{"a server's partitions are kept apart", func(p *pace.Policy) { p.BaseDelay, p.MaxInFlight = pace.None, pace.None }, func(t *testing.T, s *session) {
		s.requestIn("a", "search", quota(0, 0, 9*time.Second, "search"))
		s.requestIn("a", "core", quota(4999, 5000, time.Hour, "core"))
		// The ample core quota changes nothing of search's.
		want(t, "start in the search partition", s.requestIn("a", "search", success), 9*time.Second)
	}},
	{"one success lowers the level with RecoverAfter 1", func(p *pace.Policy) { p.RecoverAfter = 1 }, func(t *testing.T, s *session) {
		l, _ := s.start("a", 0)
		want(t, "change after a signal", s.p.Release(l, signal), pace.Change{Raised: true, Level: 1, Pause: 5 * time.Second})
		l, _ = s.start("a", 0)
		want(t, "change after a success", s.p.Release(l, success), pace.Change{Cleared: true})
	}},
	{"the jitter never carries a low quota's spread past its reset", func(p *pace.Policy) { p.BaseDelay, p.Jitter = pace.None, 20 }, func(t *testing.T, s *session) {
		// The spread is 30m; a jitter of 20 would carry it past the reset
		// for any draw above 0.05.
		s.request("a", 0, 0, pace.Outcome{Class: pace.Success, Quota: pace.Quota{Known: true, Remaining: 1, Limit: 100, Reset: time.Hour}})
		if at := s.request("a", 0, 0, success); at < 30*time.Minute || at > time.Hour {
			t.Errorf("second start at +%v; want within [30m, 1h], the spread jittered and held to the reset", at)
		}
	}},
	{"MaxInFlight requests at most", func(p *pace.Policy) { p.LatencyFactor = pace.None }, func(t *testing.T, s *session) {
		l, _ := s.start("a", 0)
		done := make(chan time.Duration)
		second := make(chan pace.Lease, 1)
		go func() { l, at := s.start("a", 0); second <- l; done <- at }()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		select {
		case at := <-done:
			t.Fatalf("second request started at +%v with the only slot taken", at)
		default:
		}
		s.p.Release(l, success)
		want(t, "second start", <-done, 10*time.Second)
		s.p.Release(<-second, success) // every Lease is released once
	}},
	{"keys are paced apart", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 0, signal)
		want(t, "start on another key", s.request("b", 0, 0, success), 0)
	}},
	{"a cancelled wait holds nothing", nil, func(t *testing.T, s *session) {
		s.request("a", 0, 0, success)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(100 * time.Millisecond); cancel() }()
		if _, err := s.p.Acquire(ctx, pace.Request{Key: "a", Partition: "", CrawlDelay: 0}); !errors.Is(err, context.Canceled) {
			t.Fatalf("Acquire = %v; want context.Canceled", err)
		}
		want(t, "next start", s.request("a", 0, 0, success), time.Second)
	}},
	{"a release says what it changed", nil, func(t *testing.T, s *session) {
		release := func(o pace.Outcome) pace.Change {
			l, _ := s.start("a", 0)
			return s.p.Release(l, o)
		}
		want(t, "change after a signal", release(pace.Outcome{Class: pace.Signal, RetryAfter: 30 * time.Second}),
			pace.Change{Raised: true, Level: 1, Pause: 30 * time.Second})
		for i := range 4 {
			want(t, fmt.Sprintf("change after success %d", i+1), release(success), pace.Change{Level: 1})
		}
		want(t, "change after the fifth success", release(success), pace.Change{Cleared: true})
	}},
	{"Ready reads the key's state without reserving", nil, func(t *testing.T, s *session) {
		rp, ok := s.p.(pace.ReadyPacer)
		if !ok {
			t.Skip("not a ReadyPacer")
		}
		ready := func(key string, crawlDelay time.Duration) pace.KeyState {
			ks, err := rp.Ready(context.Background(), pace.Request{Key: key, Partition: "", CrawlDelay: crawlDelay})
			if err != nil {
				t.Fatalf("Ready(%q) = %v", key, err)
			}
			return ks
		}
		want(t, "Next of a key never used", ready("never", 0).Next, time.Time{})
		s.request("a", 0, 0, pace.Outcome{Class: pace.Signal, RetryAfter: 30 * time.Second})
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
	{"Ready reads a partition's quota", func(p *pace.Policy) { p.BaseDelay, p.MaxInFlight = pace.None, pace.None }, func(t *testing.T, s *session) {
		rp, ok := s.p.(pace.ReadyPacer)
		if !ok {
			t.Skip("not a ReadyPacer")
		}
		s.requestIn("a", "A", quota(0, 0, 30*time.Second, ""))
		now := time.Now()
		for _, c := range []struct {
			partition string
			next      time.Duration
		}{{"A", 30 * time.Second}, {"B", 0}} {
			ks, err := rp.Ready(context.Background(), pace.Request{Key: "a", Partition: c.partition, CrawlDelay: 0})
			if err != nil {
				t.Fatalf("Ready = %v", err)
			}
			want(t, "Next of partition "+c.partition, max(ks.Next.Sub(now), 0), c.next)
		}
	}},
	{"Stats lists the keys used", nil, func(t *testing.T, s *session) {
		sp, ok := s.p.(pace.StatsPacer)
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
		byKey := map[string]pace.KeyState{}
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
		_, err := s.p.Acquire(ctx, pace.Request{Key: "a", Partition: "", CrawlDelay: 0})
		var de *pace.DeadlineError
		if !errors.As(err, &de) || time.Since(asked) != 0 {
			t.Fatalf("Acquire = %v after %v; want a *DeadlineError at once", err, time.Since(asked))
		}
		if de.Cause != "" { // said, so said right
			want(t, "DeadlineError.Cause", de.Cause, pace.CausePace)
		}
		want(t, "next start", s.request("a", 0, 0, success), time.Second)
	}},
	{"a Pacer that reports why a request waits reports the right cause", nil, func(t *testing.T, s *session) {
		for i, c := range traceCases {
			key := fmt.Sprint("key", i)
			c.setup(s, key)
			var heard []pace.Cause
			tr := &pace.Trace{Wait: func(c pace.Cause) {
				if len(heard) == 0 || heard[len(heard)-1] != c {
					heard = append(heard, c)
				}
			}}
			l, err := s.p.Acquire(pace.WithTrace(context.Background(), tr), pace.Request{Key: key, CrawlDelay: c.crawlDelay})
			if err != nil {
				t.Fatalf("%s: Acquire = %v", c.name, err)
			}
			s.p.Release(l, success)
			if i == 0 && len(heard) == 0 {
				t.Skip("the Pacer reports no cause (a Trace is optional)")
			}
			if !slices.Equal(heard, c.want) {
				t.Errorf("%s: the Trace heard %q; want %q", c.name, heard, c.want)
			}
		}
	}},
}

// traceCases are the waits whose causes a Pacer that reports them must
// report right, each on a key of its own, under the default policy
// without jitter; the Trace hears of the request that setup leaves
// waiting, each cause once however many times it is said in a row.
var traceCases = []struct {
	name       string
	setup      func(s *session, key string)
	crawlDelay time.Duration
	want       []pace.Cause
}{
	{"the base delay", func(s *session, key string) { s.request(key, 0, 0, success) }, 0, []pace.Cause{pace.CausePace}},
	{"a Crawl-delay", func(s *session, key string) { s.request(key, 3*time.Second, 0, success) }, 3 * time.Second, []pace.Cause{pace.CauseCrawlDelay}},
	{"a backoff pause", func(s *session, key string) { s.request(key, 0, 0, signal) }, 0, []pace.Cause{pace.CauseBackoff}},
	{"a Retry-After", func(s *session, key string) {
		s.request(key, 0, 0, pace.Outcome{Class: pace.Signal, RetryAfter: time.Minute})
	}, 0, []pace.Cause{pace.CauseRetryAfter}},
	{"an exhausted quota", func(s *session, key string) { s.request(key, 0, 0, quota(0, 0, 30*time.Second, "")) }, 0, []pace.Cause{pace.CauseQuota}},
	{"a low quota's spread", func(s *session, key string) { s.request(key, 0, 0, quota(2, 100, 9*time.Second, "")) }, 0, []pace.Cause{pace.CauseQuotaSpread}},
	{"the pace, the in-flight cap, then the pace of a 10s latency", func(s *session, key string) {
		l, _ := s.start(key, 0)
		go func() { time.Sleep(10 * time.Second); s.p.Release(l, success) }()
	}, 0, []pace.Cause{pace.CausePace, pace.CauseInFlight, pace.CausePace}},
}

// ownCases check that a Pacer runs the policy of each key that
// Config.Override gives one of its own (see own), and keeps the Policy
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
		var leases []pace.Lease
		for i := range 3 {
			l, at := s.start("wide", 0)
			want(t, fmt.Sprintf("start %d on the wide key", i+1), at, 0)
			leases = append(leases, l)
		}
		done := make(chan time.Duration)
		fourth := make(chan pace.Lease, 1)
		go func() { l, at := s.start("wide", 0); fourth <- l; done <- at }()
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case at := <-done:
			t.Fatalf("a fourth request started at +%v with three in flight", at)
		default:
		}
		s.p.Release(leases[0], success)
		want(t, "fourth start", <-done, time.Second)
		for _, l := range append(leases[1:], <-fourth) {
			s.p.Release(l, success)
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
			after pace.Change // of a success after the signal's pause
		}{{"mend", pace.Change{Cleared: true}}, {"other", pace.Change{Level: 1}}} {
			l, _ := s.start(c.key, 0)
			want(t, "change of a signal on "+c.key, s.p.Release(l, signal), pace.Change{Raised: true, Level: 1, Pause: 5 * time.Second})
			l, _ = s.start(c.key, 0)
			want(t, "change of a success on "+c.key, s.p.Release(l, success), c.after)
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
		s.request("api", 0, 0, pace.Outcome{Class: pace.Signal, RetryAfter: time.Minute})
		want(t, "start after a Retry-After of a minute", s.request("api", 0, 0, success), 3*time.Second+time.Minute)
	}},
	{"Ready and Stats show a key's policy", func(t *testing.T, s *session) {
		def := pace.Policy{Jitter: pace.None}.Effective()
		slow := def
		slow.BaseDelay = 10 * time.Second
		if rp, ok := s.p.(pace.ReadyPacer); ok {
			for key, p := range map[string]pace.Policy{"slow": slow, "never": def} {
				ks, err := rp.Ready(context.Background(), pace.Request{Key: key, Partition: "", CrawlDelay: 0})
				if err != nil {
					t.Fatalf("Ready(%q) = %v", key, err)
				}
				want(t, "policy of "+key+" in Ready", ks.Policy, p)
				want(t, "pace of "+key+" in Ready", ks.Pace, p.BaseDelay)
			}
		}
		sp, ok := s.p.(pace.StatsPacer)
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
