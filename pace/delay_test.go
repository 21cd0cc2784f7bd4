package pace

// The delay policy's specification (delay.go), as tables: each row sends
// requests through a pacer (pacer_test.go has the harness) and checks the
// starts, pauses and levels the policy gives. These rows use the in-memory
// pacer's own harness; a Pacer of another store is held to the same rules
// through its public interface by package politetest (RunPacer).

import (
	"math"
	"testing"
	"testing/synctest"
	"time"
)

func TestPolicyPace(t *testing.T) {
	const ms = time.Millisecond
	type step struct {
		ttfb time.Duration
		o    Outcome
	}
	tests := []struct {
		name     string
		u        float64
		edit     func(*Config)
		floor    time.Duration
		steps    []step
		wantGap  time.Duration // from the last step's start to the next start
		wantEst  time.Duration
		wantPace time.Duration
	}{
		{name: "base delay, u=0", steps: []step{{100 * ms, outSuccess}},
			wantGap: time.Second, wantEst: 100 * ms, wantPace: time.Second},
		{name: "base delay, u=0.999", u: 0.999, steps: []step{{100 * ms, outSuccess}},
			wantGap: 1499500 * time.Microsecond, wantEst: 100 * ms, wantPace: time.Second},
		{name: "Crawl-delay is jittered upward", u: 0.5, floor: 10 * time.Second, steps: []step{{100 * ms, outSuccess}},
			wantGap: 12500 * ms, wantEst: 100 * ms, wantPace: 10 * time.Second},
		{name: "Crawl-delay clamped to maxCrawlDelay", floor: time.Hour, steps: []step{{100 * ms, outSuccess}},
			wantGap: time.Minute, wantEst: 100 * ms, wantPace: time.Minute},
		{name: "Crawl-delay may exceed maxDelay", floor: 30 * time.Second, steps: []step{{100 * ms, outSuccess}},
			edit:    func(c *Config) { c.Policy.MaxDelay = 5 * time.Second },
			wantGap: 30 * time.Second, wantEst: 100 * ms, wantPace: 30 * time.Second},
		{name: "Crawl-delay cannot undercut baseDelay", floor: 100 * ms, steps: []step{{100 * ms, outSuccess}},
			wantGap: time.Second, wantEst: 100 * ms, wantPace: time.Second},
		{name: "slow first response", steps: []step{{3 * time.Second, outSuccess}},
			wantGap: 6 * time.Second, wantEst: 3 * time.Second, wantPace: 6 * time.Second},
		{name: "one fast response", steps: []step{{3 * time.Second, outSuccess}, {100 * ms, outSuccess}},
			wantGap: 3100 * ms, wantEst: 1550 * ms, wantPace: 3100 * ms},
		{name: "two fast responses", steps: []step{{3 * time.Second, outSuccess}, {100 * ms, outSuccess}, {100 * ms, outSuccess}},
			wantGap: 1650 * ms, wantEst: 825 * ms, wantPace: 1650 * ms},
		{name: "three fast responses", steps: []step{{3 * time.Second, outSuccess}, {100 * ms, outSuccess}, {100 * ms, outSuccess}, {100 * ms, outSuccess}},
			wantGap: time.Second, wantEst: 462500 * time.Microsecond, wantPace: time.Second},
		{name: "fast 404 cannot lower the estimate", steps: []step{{3 * time.Second, outSuccess}, {50 * ms, outNeutral}},
			wantGap: 6 * time.Second, wantEst: 3 * time.Second, wantPace: 6 * time.Second},
		{name: "slow 404 raises the estimate", steps: []step{{100 * ms, outSuccess}, {2 * time.Second, outNeutral}},
			wantGap: 4 * time.Second, wantEst: 2 * time.Second, wantPace: 4 * time.Second},
		{name: "ignored Outcome leaves the estimate", steps: []step{{100 * ms, outSuccess}, {3 * time.Second, outIgnore}},
			wantGap: 3 * time.Second, wantEst: 100 * ms, wantPace: time.Second},
		{name: "latency part capped at maxDelay", steps: []step{{40 * time.Second, outSuccess}},
			wantGap: time.Minute, wantEst: 40 * time.Second, wantPace: time.Minute},
		{name: "baseDelay 0", edit: withBaseDelay(0), steps: []step{{0, outSuccess}},
			wantGap: 0, wantEst: 0, wantPace: 0},
		{name: "baseDelay 0 paced by latency", u: 0.5, edit: withBaseDelay(0), steps: []step{{100 * ms, outSuccess}},
			wantGap: 250 * ms, wantEst: 100 * ms, wantPace: 200 * ms},
		{name: "a low quota is spread to an even share before its reset", edit: withBaseDelay(0),
			steps:   []step{{0, Outcome{Class: Success, Quota: Quota{Known: true, Remaining: 1, Limit: 100, Reset: time.Hour}}}},
			wantGap: 30 * time.Minute, wantEst: 0, wantPace: 30 * time.Minute},
		{name: "a low quota's spread is not jittered past its reset", u: 0.999, edit: withJitter(2, withBaseDelay(0)),
			steps:   []step{{0, Outcome{Class: Success, Quota: Quota{Known: true, Remaining: 1, Limit: 100, Reset: time.Hour}}}},
			wantGap: time.Hour, wantEst: 0, wantPace: 0},
		{name: "a low quota's reset is capped at an hour", u: 0.999, edit: withJitter(2, withBaseDelay(0)),
			steps:   []step{{0, Outcome{Class: Success, Quota: Quota{Known: true, Remaining: 1, Limit: 100, Reset: 5 * time.Hour}}}},
			wantGap: time.Hour, wantEst: 0, wantPace: 0},
		{name: "a spread shorter than the window is jittered", u: 0.5, edit: withBaseDelay(0),
			steps:   []step{{0, Outcome{Class: Success, Quota: Quota{Known: true, Remaining: 4, Limit: 100, Reset: 40 * time.Second}}}},
			wantGap: 10 * time.Second, wantEst: 0, wantPace: 8 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var edits []func(*Config)
				if tc.edit != nil {
					edits = append(edits, tc.edit)
				}
				p := newTestPacer(tc.u, edits...)
				var last time.Time
				for _, s := range tc.steps {
					last = request(t, p, pacerKey, tc.floor, s.ttfb, s.o)
				}
				tk := mustAcquire(t, p, pacerKey, tc.floor)
				if got := p.clock.timeOf(instant(tk.Seq)).Sub(last); got != tc.wantGap {
					t.Errorf("gap between starts = %v; want %v", got, tc.wantGap)
				}
				s := stateOf(t, p, pacerKey)
				if s.Latency != tc.wantEst || s.Pace != tc.wantPace {
					t.Errorf("latency, pace = %v, %v; want %v, %v", s.Latency, s.Pace, tc.wantEst, tc.wantPace)
				}
			})
		})
	}
}

func TestPolicyBackoff(t *testing.T) {
	t.Run("429 without Retry-After", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0)
			t0 := time.Now()
			request(t, p, pacerKey, 0, 100*time.Millisecond, outSignal)
			s := stateOf(t, p, pacerKey)
			if s.Level != 1 || s.PausedUntil.Sub(t0) != 5100*time.Millisecond || s.Backoffs != 1 || s.RetryAfters != 0 {
				t.Errorf("level %d, blocked until +%v, backoffs %d, retryAfters %d; want 1, +5.1s, 1, 0",
					s.Level, s.PausedUntil.Sub(t0), s.Backoffs, s.RetryAfters)
			}
			start := request(t, p, pacerKey, 0, 100*time.Millisecond, outSuccess)
			if got := start.Sub(t0); got != 5100*time.Millisecond {
				t.Errorf("resumed at +%v; want +5.1s", got)
			}
			if s := stateOf(t, p, pacerKey); s.Pace != 2*time.Second {
				t.Errorf("pace after resume = %v; want 2s", s.Pace)
			}
			if got := p.clock.timeOf(instant(mustAcquire(t, p, pacerKey, 0).Seq)).Sub(t0); got != 7100*time.Millisecond {
				t.Errorf("next start at +%v; want +7.1s", got)
			}
		})
	})

	// The rule that Retry-After is a floor on the pause, never a ceiling.
	tests := []struct {
		name        string
		retryAfter  time.Duration
		wantBlocked time.Duration // after the response
		wantCounted uint64
	}{
		{"Retry-After 120", 120 * time.Second, 120 * time.Second, 1},
		{"Retry-After shorter than the pause", 2 * time.Second, 5 * time.Second, 1},
		{"Retry-After above the cap", 2 * time.Hour, time.Hour, 1},
		{"no Retry-After", 0, 5 * time.Second, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newTestPacer(0)
				request(t, p, pacerKey, 0, 100*time.Millisecond, Outcome{Class: Signal, RetryAfter: tc.retryAfter})
				received := time.Now()
				s := stateOf(t, p, pacerKey)
				if got := s.PausedUntil.Sub(received); got != tc.wantBlocked || s.Level != 1 || s.RetryAfters != tc.wantCounted {
					t.Errorf("blocked for %v, level %d, retryAfters %d; want %v, 1, %d",
						got, s.Level, s.RetryAfters, tc.wantBlocked, tc.wantCounted)
				}
				if got := p.clock.timeOf(instant(mustAcquire(t, p, pacerKey, 0).Seq)).Sub(received); got != tc.wantBlocked {
					t.Errorf("next start %v after the response; want %v", got, tc.wantBlocked)
				}
			})
		})
	}

	t.Run("backoff pause is jittered upward", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0.5)
			request(t, p, pacerKey, 0, 100*time.Millisecond, outSignal)
			if got := time.Until(stateOf(t, p, pacerKey).PausedUntil); got != 6250*time.Millisecond {
				t.Errorf("pause = %v; want 5s·(1+0.5·0.5) = 6.25s", got)
			}
		})
	})
}

func TestPolicyEscalatesOncePerIncident(t *testing.T) {
	t.Run("three 503s in flight", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0, withInFlight(3))
			t0 := time.Now()
			var tks []Lease
			for range 3 {
				tks = append(tks, mustAcquire(t, p, pacerKey, 0)) // at +0s, +1s, +2s
			}
			time.Sleep(100 * time.Millisecond)
			for _, tk := range tks {
				p.Release(tk, outSignal)
			}
			s := stateOf(t, p, pacerKey)
			if s.Level != 1 || s.Backoffs != 1 || s.PausedUntil.Sub(t0) != 7100*time.Millisecond || s.InFlight != 0 {
				t.Errorf("level %d, backoffs %d, blocked until +%v, in flight %d; want 1, 1, +7.1s, 0",
					s.Level, s.Backoffs, s.PausedUntil.Sub(t0), s.InFlight)
			}
		})
	})

	t.Run("Retry-After counts within an incident", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0, withInFlight(2))
			a := mustAcquire(t, p, pacerKey, 0)
			b := mustAcquire(t, p, pacerKey, 0)
			time.Sleep(100 * time.Millisecond)
			p.Release(a, outSignal)
			p.Release(b, Outcome{Class: Signal, RetryAfter: time.Minute})
			s := stateOf(t, p, pacerKey)
			if got := time.Until(s.PausedUntil); s.Level != 1 || got != time.Minute || s.RetryAfters != 1 {
				t.Errorf("level %d, blocked for %v, retryAfters %d; want 1, 1m, 1", s.Level, got, s.RetryAfters)
			}
		})
	})
}

func TestPolicyBackoffLevels(t *testing.T) {
	// Each incident comes from a request started after the last escalation.
	synctest.Test(t, func(t *testing.T) {
		p := newTestPacer(0)
		want := []struct {
			level       int
			pause, pace time.Duration
		}{
			{1, 5 * time.Second, 2 * time.Second},
			{2, 10 * time.Second, 4 * time.Second},
			{3, 20 * time.Second, 8 * time.Second},
			{4, 40 * time.Second, 16 * time.Second},
			{5, 80 * time.Second, 32 * time.Second},
			{6, 160 * time.Second, time.Minute},
			{7, 320 * time.Second, time.Minute},
			{8, 600 * time.Second, time.Minute},
			{8, 600 * time.Second, time.Minute},
		}
		for i, w := range want {
			request(t, p, pacerKey, 0, 100*time.Millisecond, outSignal)
			s := stateOf(t, p, pacerKey)
			if pause := time.Until(s.PausedUntil); s.Level != w.level || pause != w.pause || s.Pace != w.pace {
				t.Errorf("incident %d: (level, pause, pace) = (%d, %v, %v); want (%d, %v, %v)",
					i+1, s.Level, pause, s.Pace, w.level, w.pause, w.pace)
			}
			if s.Backoffs != uint64(i+1) {
				t.Errorf("incident %d: backoffs = %d", i+1, s.Backoffs)
			}
		}
	})
}

func TestPolicyRecovery(t *testing.T) {
	t.Run("five fresh successes per level", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0)
			request(t, p, pacerKey, 0, 100*time.Millisecond, outSignal)
			request(t, p, pacerKey, 0, 100*time.Millisecond, outSignal)
			want := map[int]struct {
				level int
				pace  time.Duration
			}{
				4:  {2, 4 * time.Second},
				5:  {1, 2 * time.Second},
				9:  {1, 2 * time.Second},
				10: {0, time.Second},
			}
			for n := 1; n <= 10; n++ {
				request(t, p, pacerKey, 0, 100*time.Millisecond, outSuccess)
				w, ok := want[n]
				if !ok {
					continue
				}
				if s := stateOf(t, p, pacerKey); s.Level != w.level || s.Pace != w.pace {
					t.Errorf("after %d successes: level %d, pace %v; want %d, %v", n, s.Level, s.Pace, w.level, w.pace)
				}
			}
		})
	})

	t.Run("successes started before the escalation do not count", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0, withInFlight(10))
			var old []Lease
			for range 5 {
				old = append(old, mustAcquire(t, p, pacerKey, 0))
			}
			request(t, p, pacerKey, 0, 100*time.Millisecond, outSignal)
			for _, tk := range old {
				p.Release(tk, outSuccess)
			}
			if s := stateOf(t, p, pacerKey); s.Level != 1 {
				t.Fatalf("after 5 stale successes: level %d; want 1", s.Level)
			}
			for range 5 {
				request(t, p, pacerKey, 0, 100*time.Millisecond, outSuccess)
			}
			if s := stateOf(t, p, pacerKey); s.Level != 0 {
				t.Errorf("after 5 fresh successes: level %d; want 0", s.Level)
			}
		})
	})

	t.Run("neutral outcomes do not count", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0)
			request(t, p, pacerKey, 0, 100*time.Millisecond, outSignal)
			for range 5 {
				request(t, p, pacerKey, 0, 100*time.Millisecond, outNeutral)
			}
			if s := stateOf(t, p, pacerKey); s.Level != 1 {
				t.Errorf("after 5 neutral outcomes: level %d; want 1", s.Level)
			}
		})
	})
}

func TestPolicyForget(t *testing.T) {
	// level3 raises key to level 3 and returns when the last signal arrived.
	level3 := func(t *testing.T, p *Memory) time.Time {
		for range 3 {
			request(t, p, pacerKey, 0, 100*time.Millisecond, outSignal)
		}
		if s := stateOf(t, p, pacerKey); s.Level != 3 {
			t.Fatalf("level %d; want 3", s.Level)
		}
		return time.Now()
	}

	t.Run("level forgotten after 30 quiet minutes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0)
			level3(t, p)
			time.Sleep(29 * time.Minute)
			if s := stateOf(t, p, pacerKey); s.Level != 3 || s.Pace != 8*time.Second {
				t.Errorf("at +29m: level %d, pace %v; want 3, 8s", s.Level, s.Pace)
			}
			time.Sleep(time.Minute)
			if s := stateOf(t, p, pacerKey); s.Level != 0 || s.Pace != time.Second {
				t.Errorf("at +30m: level %d, pace %v; want 0, 1s", s.Level, s.Pace)
			}
			request(t, p, pacerKey, 0, 100*time.Millisecond, outNeutral)
			if p.shard(pacerKey).hosts[pacerKey].pace.level != 0 || p.shard(pacerKey).hosts[pacerKey].pace.streak != 0 {
				t.Errorf("stored level %d, streak %d after a response; want 0, 0", p.shard(pacerKey).hosts[pacerKey].pace.level, p.shard(pacerKey).hosts[pacerKey].pace.streak)
			}
		})
	})

	t.Run("a waiter wakes when the level is forgotten", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0)
			signalled := level3(t, p)
			time.Sleep(30*time.Minute - 5*time.Second)
			request(t, p, pacerKey, 0, 100*time.Millisecond, outSuccess) // pace 8s would allow +30m3s
			if got := p.clock.timeOf(instant(mustAcquire(t, p, pacerKey, 0).Seq)).Sub(signalled); got != 30*time.Minute {
				t.Errorf("next start %v after the signal; want 30m, when the pace drops to 1s", got)
			}
		})
	})

	t.Run("a new signal restarts the clock", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0)
			level3(t, p)
			time.Sleep(20 * time.Minute)
			request(t, p, pacerKey, 0, 100*time.Millisecond, outSignal) // level 4
			time.Sleep(20 * time.Minute)
			if s := stateOf(t, p, pacerKey); s.Level != 4 {
				t.Errorf("20m after the last signal: level %d; want 4", s.Level)
			}
		})
	})
}

func TestPolicyOutOfRangeValues(t *testing.T) {
	tests := []struct {
		name    string
		u       float64 // every jitter draw
		cfg     func(*Config)
		wantGap time.Duration
	}{
		{"maxDelay below baseDelay", 0, func(c *Config) { c.Policy.BaseDelay, c.Policy.MaxDelay = 2*time.Second, time.Second }, 2 * time.Second},
		{"rand above 1", 5, func(*Config) {}, 1500 * time.Millisecond},
		{"rand below 0", -3, func(*Config) {}, time.Second},
		{"rand NaN", math.NaN(), func(*Config) {}, time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newTestPacer(tc.u, tc.cfg)
				first := request(t, p, pacerKey, 0, 0, outSuccess)
				if got := p.clock.timeOf(instant(mustAcquire(t, p, pacerKey, 0).Seq)).Sub(first); got != tc.wantGap {
					t.Errorf("gap = %v; want %v", got, tc.wantGap)
				}
			})
		})
	}
}
