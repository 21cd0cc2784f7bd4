package pace

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Times in the pacer and policy tests are offsets on synctest's fake clock.

const pacerKey = "example.com"

var (
	outSuccess = Outcome{Class: Success}
	outNeutral = Outcome{Class: Neutral}
	outSignal  = Outcome{Class: Signal}
	outIgnore  = Outcome{Class: Ignore}
)

// newTestPacer returns a pacer with the default policy, every jitter
// draw fixed at u, changed by edits.
func newTestPacer(u float64, edits ...func(*Config)) *Memory {
	cfg := Config{MaxKeys: 1000}
	for _, edit := range edits {
		edit(&cfg)
	}
	return newMemory(cfg, func() float64 { return u })
}

// newMemory returns NewMemory(cfg) with jitter drawn from rnd, and
// panics if cfg is invalid.
func newMemory(cfg Config, rnd func() float64) *Memory {
	p, err := NewMemory(cfg)
	if err != nil {
		panic(err)
	}
	p.rand = rnd
	return p
}

// orNone returns v, or None for 0: a value as the policy runs it, as a
// Policy's field gives it.
func orNone[T number](v T) T {
	if v == 0 {
		return None
	}
	return v
}

func withInFlight(n int) func(*Config) { return func(c *Config) { c.Policy.MaxInFlight = n } }

func withBaseDelay(d time.Duration) func(*Config) {
	return func(c *Config) { c.Policy.BaseDelay = orNone(d) }
}

func withMaxHosts(n int) func(*Config) { return func(c *Config) { c.MaxKeys = n } }

// withJitter sets the jitter factor to j, after edit.
func withJitter(j float64, edit func(*Config)) func(*Config) {
	return func(c *Config) { edit(c); c.Policy.Jitter = j }
}

// mustAcquire acquires key without a deadline. Call it from the test's goroutine.
func mustAcquire(t testing.TB, p *Memory, key string, floor time.Duration) Lease {
	t.Helper()
	tk, err := p.Acquire(context.Background(), Request{Key: key, CrawlDelay: floor})
	if err != nil {
		t.Fatalf("acquire(%q) = %v", key, err)
	}
	return tk
}

// request sends one request to key that is answered after ttfb with o, and
// returns when it started.
func request(t testing.TB, p *Memory, key string, floor, ttfb time.Duration, o Outcome) time.Time {
	t.Helper()
	tk := mustAcquire(t, p, key, floor)
	time.Sleep(ttfb)
	p.Release(tk, o)
	return p.clock.timeOf(instant(tk.Seq))
}

// stateOf returns key's entry in p's snapshot.
func stateOf(t testing.TB, p *Memory, key string) KeyState {
	t.Helper()
	for _, s := range p.snapshot() {
		if s.Key == key {
			return s
		}
	}
	t.Fatalf("snapshot has no host %q", key)
	return KeyState{}
}

func keysOf(p *Memory) []string {
	var keys []string
	for _, s := range p.snapshot() {
		keys = append(keys, s.Key)
	}
	return keys
}

// admission is what an acquire running in its own goroutine returned, and when.
type admission struct {
	t   Lease
	err error
	at  time.Time
}

// goAcquire acquires key in a new goroutine, and waits until that goroutine
// is admitted or blocked.
func goAcquire(ctx context.Context, p *Memory, key string, floor time.Duration) <-chan admission {
	ch := make(chan admission, 1)
	go func() {
		tk, err := p.Acquire(ctx, Request{Key: key, CrawlDelay: floor})
		ch <- admission{tk, err, time.Now()}
	}()
	synctest.Wait()
	return ch
}

// pending fails the test if ch already has a result.
func pending(t *testing.T, ch <-chan admission, when string) {
	t.Helper()
	select {
	case a := <-ch:
		t.Fatalf("%s: acquire returned (%v) at %v; want it still waiting", when, a.err, a.at)
	default:
	}
}

func TestPacerInFlightCap(t *testing.T) {
	t.Run("slow response holds the only slot", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0)
			t0 := time.Now()
			a := mustAcquire(t, p, pacerKey, 0)
			b := goAcquire(context.Background(), p, pacerKey, 0)
			time.Sleep(time.Second)
			synctest.Wait()
			pending(t, b, "at +1s")
			time.Sleep(8900 * time.Millisecond)
			synctest.Wait()
			pending(t, b, "at +9.9s")
			if s := stateOf(t, p, pacerKey); s.Waiting != 1 || s.InFlight != 1 {
				t.Errorf("waiting %d, in flight %d; want 1, 1", s.Waiting, s.InFlight)
			}
			time.Sleep(100 * time.Millisecond)
			p.Release(a, outSuccess)
			if got := (<-b).at.Sub(t0); got != 20*time.Second {
				t.Errorf("second request started at +%v; want +20s", got)
			}
		})
	})

	t.Run("maxInFlight 3", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0, withInFlight(3), withBaseDelay(0))
			t0 := time.Now()
			var tks []Lease
			for range 3 {
				tks = append(tks, mustAcquire(t, p, pacerKey, 0))
			}
			if time.Since(t0) != 0 {
				t.Fatalf("three requests took %v to start; want 0", time.Since(t0))
			}
			d := goAcquire(context.Background(), p, pacerKey, 0)
			time.Sleep(time.Second)
			synctest.Wait()
			pending(t, d, "with 3 in flight")
			p.Release(tks[1], outIgnore)
			if got := (<-d).at.Sub(t0); got != time.Second {
				t.Errorf("fourth request started at +%v; want +1s, when a slot freed", got)
			}
		})
	})
}

func TestPacerFIFO(t *testing.T) {
	tests := []struct {
		name     string
		base     time.Duration
		wantStep time.Duration
	}{
		{"waiting on the pace", time.Second, time.Second},
		{"waiting for a slot", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newTestPacer(0, withBaseDelay(tc.base))
				first := mustAcquire(t, p, pacerKey, 0)
				var (
					mu     sync.Mutex
					order  []int
					starts []time.Time
					wg     sync.WaitGroup
				)
				const n = 8
				for i := range n {
					wg.Go(func() {
						tk, err := p.Acquire(context.Background(), Request{Key: pacerKey, CrawlDelay: 0})
						if err != nil {
							t.Errorf("acquire %d: %v", i, err)
							return
						}
						mu.Lock()
						order = append(order, i)
						starts = append(starts, p.clock.timeOf(instant(tk.Seq)))
						mu.Unlock()
						p.Release(tk, outSuccess)
					})
					synctest.Wait() // i is queued before i+1 arrives
				}
				p.Release(first, outSuccess)
				wg.Wait()
				if want := []int{0, 1, 2, 3, 4, 5, 6, 7}; !slices.Equal(order, want) {
					t.Errorf("admitted in order %v; want %v", order, want)
				}
				for i := 1; i < len(starts); i++ {
					if got := starts[i].Sub(starts[i-1]); got != tc.wantStep {
						t.Errorf("start %d came %v after start %d; want %v", i, got, i-1, tc.wantStep)
					}
				}
			})
		})
	}
}

// TestPacerNewcomerQueuesBehindWaiter checks that a request arriving when
// the host is free, but while another still waits to be woken, does not
// take the fast path past it.
func TestPacerNewcomerQueuesBehindWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPacer(0, withBaseDelay(0)) // one slot, no pace
		first := mustAcquire(t, p, pacerKey, 0)
		var (
			mu    sync.Mutex
			order []string
		)
		admitted := func(who string, tk Lease) {
			mu.Lock()
			order = append(order, who)
			mu.Unlock()
			p.Release(tk, outSuccess)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			tk, err := p.Acquire(context.Background(), Request{Key: pacerKey, CrawlDelay: 0})
			if err != nil {
				t.Errorf("waiter: %v", err)
				return
			}
			admitted("waiter", tk)
		}()
		synctest.Wait()              // the waiter is queued for the slot
		p.Release(first, outSuccess) // frees the slot and wakes the waiter
		admitted("newcomer", mustAcquire(t, p, pacerKey, 0))
		<-done
		if want := []string{"waiter", "newcomer"}; !slices.Equal(order, want) {
			t.Errorf("admitted in order %v; want %v", order, want)
		}
	})
}

func TestPacerSignalDelaysWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPacer(0, withInFlight(3))
		t0 := time.Now()
		a := mustAcquire(t, p, pacerKey, 0)
		var got [2]time.Duration
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() {
				tk, err := p.Acquire(context.Background(), Request{Key: pacerKey, CrawlDelay: 0})
				if err != nil {
					t.Errorf("acquire: %v", err)
					return
				}
				got[i] = p.clock.timeOf(instant(tk.Seq)).Sub(t0)
				p.Release(tk, outSuccess)
			})
			synctest.Wait()
		}
		time.Sleep(500 * time.Millisecond)
		p.Release(a, outSignal) // blocked until +5.5s; then the pace is 2s
		wg.Wait()
		if want := [2]time.Duration{5500 * time.Millisecond, 7500 * time.Millisecond}; got != want {
			t.Errorf("waiters started at %v; want %v", got, want)
		}
	})
}

func TestPacerCancel(t *testing.T) {
	t.Run("already cancelled", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := p.Acquire(ctx, Request{Key: "new.example", CrawlDelay: 0}); err != context.Canceled {
				t.Errorf("acquire on a new host = %v; want context.Canceled", err)
			}
			if keys := keysOf(p); len(keys) != 0 {
				t.Errorf("hosts after a cancelled acquire: %v; want none", keys)
			}
			request(t, p, pacerKey, 0, 0, outSuccess)
			time.Sleep(time.Minute)
			before := stateOf(t, p, pacerKey)
			if _, err := p.Acquire(ctx, Request{Key: pacerKey, CrawlDelay: 0}); err != context.Canceled {
				t.Errorf("acquire on an idle host = %v; want context.Canceled", err)
			}
			if after := stateOf(t, p, pacerKey); after != before {
				t.Errorf("state changed:\n%+v\nwant\n%+v", after, before)
			}
		})
	})

	// The cancelled waiter returns at once, uses no slot, changes
	// nothing, and the others start when they would have.
	tests := []struct {
		name     string
		inFlight bool  // the first request is still in flight
		cancel   int   // index of the waiter to cancel
		want     []int // start of each waiter in seconds; -1 for the cancelled one
	}{
		{"head of the queue", false, 0, []int{-1, 1, 2}},
		{"middle of the queue", false, 1, []int{1, -1, 2}},
		{"waiting for a slot", true, 0, []int{-1, 5, 6}},
	}
	for _, tc := range tests {
		t.Run(""+tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newTestPacer(0)
				t0 := time.Now()
				first := mustAcquire(t, p, pacerKey, 0)
				if !tc.inFlight {
					p.Release(first, outNeutral)
				}
				ctx, cancel := context.WithCancel(context.Background())
				var waiters []<-chan admission
				for i := range tc.want {
					wctx := context.Background()
					if i == tc.cancel {
						wctx = ctx
					}
					waiters = append(waiters, goAcquire(wctx, p, pacerKey, 0))
				}
				before := stateOf(t, p, pacerKey)
				time.Sleep(500 * time.Millisecond)
				cancel()
				a := <-waiters[tc.cancel]
				if a.err != context.Canceled || a.at.Sub(t0) != 500*time.Millisecond {
					t.Errorf("cancelled waiter returned %v at +%v; want context.Canceled at +500ms", a.err, a.at.Sub(t0))
				}
				synctest.Wait()
				after := stateOf(t, p, pacerKey)
				if after.Waiting != before.Waiting-1 {
					t.Errorf("waiting = %d; want %d", after.Waiting, before.Waiting-1)
				}
				after.Waiting = before.Waiting
				if after != before {
					t.Errorf("state changed:\n%+v\nwant\n%+v", after, before)
				}
				if tc.inFlight {
					time.Sleep(4500 * time.Millisecond)
					p.Release(first, outIgnore) // at +5s, latency not learned
				}
				for i, w := range waiters {
					if i == tc.cancel {
						continue
					}
					a := <-w
					if a.err != nil || a.at.Sub(t0) != time.Duration(tc.want[i])*time.Second {
						t.Errorf("waiter %d: %v at +%v; want nil at +%ds", i, a.err, a.at.Sub(t0), tc.want[i])
					}
					p.Release(a.t, outSuccess)
				}
			})
		})
	}
}

// TestPacerQueueEmptiesOnEveryExit checks that each way out of the slow
// path takes the goroutine out of the host's queue: a count left behind
// would send every later request of the host down the slow path.
func TestPacerQueueEmptiesOnEveryExit(t *testing.T) {
	queued := func(p *Memory) int {
		s := p.shard(pacerKey)
		s.mu.Lock()
		h := s.hosts[pacerKey]
		s.mu.Unlock()
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.queued
	}
	tests := []struct {
		name string
		// run sends requests to pacerKey, paced at 1s, one of which is in
		// flight, and returns when each has returned or started.
		run func(t *testing.T, p *Memory)
	}{
		{"started after waiting", func(t *testing.T, p *Memory) {
			a := <-goAcquire(context.Background(), p, pacerKey, 0)
			p.Release(a.t, outSuccess)
		}},
		{"cancelled at the head", func(t *testing.T, p *Memory) {
			ctx, cancel := context.WithCancel(context.Background())
			w := goAcquire(ctx, p, pacerKey, 0)
			cancel()
			<-w
		}},
		{"cancelled behind the head", func(t *testing.T, p *Memory) {
			ctx, cancel := context.WithCancel(context.Background())
			head := goAcquire(context.Background(), p, pacerKey, 0)
			w := goAcquire(ctx, p, pacerKey, 0)
			cancel()
			<-w
			a := <-head
			p.Release(a.t, outSuccess)
		}},
		{"deadline before the start, behind the head", func(t *testing.T, p *Memory) {
			head := goAcquire(context.Background(), p, pacerKey, 0)
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			<-goAcquire(ctx, p, pacerKey, 0)
			a := <-head
			p.Release(a.t, outSuccess)
		}},
		{"deadline before the start, at the head", func(t *testing.T, p *Memory) {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			<-goAcquire(ctx, p, pacerKey, 0)
		}},
		{"deadline while waiting for a slot", func(t *testing.T, p *Memory) {
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			defer cancel()
			<-goAcquire(ctx, p, pacerKey, 0)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newTestPacer(0)
				first := mustAcquire(t, p, pacerKey, 0) // in flight until observed
				done := make(chan struct{})
				go func() {
					defer close(done)
					tc.run(t, p)
				}()
				time.Sleep(2 * time.Second)
				p.Release(first, outSuccess)
				<-done
				synctest.Wait()
				if n := queued(p); n != 0 {
					t.Errorf("queued = %d after every request returned; want 0", n)
				}
			})
		})
	}
}

// TestPacerMadeOutsideABubble checks that a pacer made before a
// testing/synctest bubble, whose clock reads 2000, serves a new host at once
// inside it and still backs off, as a transport in a package variable
// would in a user's test.
func TestPacerMadeOutsideABubble(t *testing.T) {
	p := newTestPacer(0)
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		tk, err := p.Acquire(ctx, Request{Key: pacerKey, CrawlDelay: 0})
		if err != nil {
			t.Fatalf("first request to a new host: %v; want it admitted at once", err)
		}
		p.Release(tk, outSignal)
		if s := stateOf(t, p, pacerKey); s.Level != 1 || !s.PausedUntil.After(time.Now()) {
			t.Errorf("after a 429: level %d, blocked until %v (now %v); want level 1 and a pause", s.Level, s.PausedUntil, time.Now())
		}
	})
}

func TestPacerDeadline(t *testing.T) {
	// checkFastFail checks that err is a *DeadlineError returned at once.
	checkFastFail := func(t *testing.T, err error, called time.Time, earliest, deadline time.Time) {
		t.Helper()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("errors.Is(%v, context.DeadlineExceeded) = false", err)
		}
		var de *DeadlineError
		if !errors.As(err, &de) {
			t.Fatalf("acquire = %v; want a *DeadlineError", err)
		}
		if de.Key != pacerKey || !de.Earliest.Equal(earliest) || !de.Deadline.Equal(deadline) {
			t.Errorf("DeadlineError{%q, %v, %v}; want {%q, %v, %v}",
				de.Key, de.Earliest, de.Deadline, pacerKey, earliest, deadline)
		}
		if waited := time.Since(called); waited != 0 {
			t.Errorf("acquire waited %v before failing; want 0", waited)
		}
	}

	tests := []struct {
		name string
		o    Outcome       // how the first request ends, after 100ms
		gap  time.Duration // from the earliest start to the deadline
	}{
		{"backoff outlasts the deadline", Outcome{Class: Signal, RetryAfter: 2 * time.Minute}, -time.Minute},
		{"pace outlasts the deadline", outSuccess, -500 * time.Millisecond},
		{"deadline at the earliest start", outSuccess, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newTestPacer(0)
				request(t, p, pacerKey, 0, 100*time.Millisecond, tc.o)
				before := stateOf(t, p, pacerKey)
				earliest := before.PausedUntil
				if tc.o.Class == Success {
					earliest = before.LastStart.Add(time.Second)
				}
				deadline := earliest.Add(tc.gap)
				ctx, cancel := context.WithDeadline(context.Background(), deadline)
				defer cancel()
				called := time.Now()
				_, err := p.Acquire(ctx, Request{Key: pacerKey, CrawlDelay: 0})
				checkFastFail(t, err, called, earliest, deadline)
				if after := stateOf(t, p, pacerKey); after != before {
					t.Errorf("state changed:\n%+v\nwant\n%+v", after, before)
				}
			})
		})
	}

	t.Run("queued behind another waiter", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0)
			start := request(t, p, pacerKey, 0, 100*time.Millisecond, outSuccess)
			head := goAcquire(context.Background(), p, pacerKey, 0)
			deadline := start.Add(500 * time.Millisecond)
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			defer cancel()
			called := time.Now()
			_, err := p.Acquire(ctx, Request{Key: pacerKey, CrawlDelay: 0})
			checkFastFail(t, err, called, start.Add(2*time.Second), deadline) // the head's start, then a base delay
			if a := <-head; a.err != nil || a.at.Sub(start) != time.Second {
				t.Errorf("head waiter: %v at +%v; want nil at +1s", a.err, a.at.Sub(start))
			}
		})
	})

	t.Run("sixth in the queue", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0)
			start := request(t, p, pacerKey, 0, 100*time.Millisecond, outSuccess)
			var queued []<-chan admission
			for range 5 {
				queued = append(queued, goAcquire(context.Background(), p, pacerKey, 0))
			}
			// The five ahead start at +1s, +2s, … +5s at the earliest.
			deadline := start.Add(5500 * time.Millisecond)
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			defer cancel()
			called := time.Now()
			_, err := p.Acquire(ctx, Request{Key: pacerKey, CrawlDelay: 0})
			checkFastFail(t, err, called, start.Add(6*time.Second), deadline)
			for i, q := range queued {
				a := <-q
				p.Release(a.t, outSuccess)
				if want := time.Duration(i+1) * time.Second; a.err != nil || a.at.Sub(start) != want {
					t.Errorf("waiter %d: %v at +%v; want nil at +%v", i+1, a.err, a.at.Sub(start), want)
				}
			}
		})
	})

	t.Run("deadline after the earliest start", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0)
			start := request(t, p, pacerKey, 0, 100*time.Millisecond, outSuccess)
			ctx, cancel := context.WithDeadline(context.Background(), start.Add(time.Second+time.Millisecond))
			defer cancel()
			tk, err := p.Acquire(ctx, Request{Key: pacerKey, CrawlDelay: 0})
			if err != nil || p.clock.timeOf(instant(tk.Seq)).Sub(start) != time.Second {
				t.Errorf("acquire = %v at +%v; want nil at +1s", err, p.clock.timeOf(instant(tk.Seq)).Sub(start))
			}
		})
	})

	t.Run("deadline passes while waiting for a slot", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newTestPacer(0)
			first := mustAcquire(t, p, pacerKey, 0)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			t0 := time.Now()
			_, err := p.Acquire(ctx, Request{Key: pacerKey, CrawlDelay: 0})
			if err != context.DeadlineExceeded || time.Since(t0) != 3*time.Second {
				t.Errorf("acquire = %v after %v; want context.DeadlineExceeded after 3s (no start time is known)", err, time.Since(t0))
			}
			p.Release(first, outSuccess)
		})
	})
}

func TestPacerOutcomeClasses(t *testing.T) {
	// Through classify: every class releases the slot.
	tests := []struct {
		name      string
		o         Outcome
		wantLevel int
		wantEst   time.Duration
	}{
		{"timeout", Outcome{Class: Signal, TimedOut: true}, 1, 0}, // a timeout is no latency sample
		{"neutral", outNeutral, 0, time.Second},
		{"ignored", outIgnore, 0, 0},
		{"signal", outSignal, 1, time.Second},
		{"success", outSuccess, 0, time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newTestPacer(0)
				tk := mustAcquire(t, p, pacerKey, 0)
				time.Sleep(time.Second)
				p.Release(tk, tc.o)
				s := stateOf(t, p, pacerKey)
				if s.InFlight != 0 || s.Level != tc.wantLevel || s.Latency != tc.wantEst {
					t.Errorf("in flight %d, level %d, latency %v; want 0, %d, %v", s.InFlight, s.Level, s.Latency, tc.wantLevel, tc.wantEst)
				}
			})
		})
	}
}

func TestPacerHostsIndependent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPacer(0)
		ctx, cancel := context.WithCancel(context.Background())

		// slow.example is backed off for an hour, with two requests queued.
		request(t, p, "slow.example", 0, time.Second, Outcome{Class: Signal, RetryAfter: time.Hour})
		slow1 := goAcquire(ctx, p, "slow.example", 0)
		slow2 := goAcquire(ctx, p, "slow.example", 0)
		// busy.example has a request in flight and one waiting for its slot.
		busy := mustAcquire(t, p, "busy.example", 0)
		busyWaiter := goAcquire(ctx, p, "busy.example", 0)

		t0 := time.Now()
		for _, key := range []string{"fast-1.example", "fast-2.example", "fast-3.example"} {
			request(t, p, key, 0, 0, outSuccess)
		}
		if len(p.snapshot()) != 5 {
			t.Errorf("snapshot has %d hosts; want 5", len(p.snapshot()))
		}
		if waited := time.Since(t0); waited != 0 {
			t.Errorf("requests to idle hosts waited %v; want 0", waited)
		}

		cancel()
		for _, ch := range []<-chan admission{slow1, slow2, busyWaiter} {
			if a := <-ch; a.err != context.Canceled {
				t.Errorf("waiter: %v; want context.Canceled", a.err)
			}
		}
		p.Release(busy, outSuccess)
	})
}

func TestPacerEviction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPacer(0, withMaxHosts(4))
		request(t, p, "backed-off", 0, 100*time.Millisecond, outSignal)
		request(t, p, "idle-1", 0, 100*time.Millisecond, outSuccess)
		request(t, p, "idle-2", 0, 100*time.Millisecond, outSuccess)
		busy := mustAcquire(t, p, "busy", 0)
		time.Sleep(10 * time.Minute) // backed-off's pause is over; its level is not forgotten

		request(t, p, "new-1", 0, 0, outSuccess)
		if got, want := keysOf(p), []string{"backed-off", "busy", "new-1"}; !slices.Equal(got, want) {
			t.Fatalf("hosts after the sweep: %v; want %v", got, want)
		}
		if got := p.sweepAt.Load(); got != 4 {
			t.Errorf("sweepAt = %d; want max(maxHosts, 2×2) = 4", got)
		}
		request(t, p, "idle-1", 0, 0, outSuccess) // forgotten: starts at once
		if s := stateOf(t, p, "idle-1"); s.Requests != 1 {
			t.Errorf("idle-1 re-seen with %d requests; want 1 (fresh state)", s.Requests)
		}

		time.Sleep(20 * time.Minute) // 30m after backed-off's signal
		p.Release(busy, outSuccess)
		request(t, p, "new-2", 0, 0, outSuccess)
		if got, want := keysOf(p), []string{"new-2"}; !slices.Equal(got, want) {
			t.Errorf("hosts after the second sweep: %v; want %v", got, want)
		}
	})
}

func TestPacerSweepAmortised(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPacer(0, withMaxHosts(2))
		var tks []Lease
		var sweepAts []int
		for i := range 33 {
			tks = append(tks, mustAcquire(t, p, fmt.Sprint("busy-", i), 0))
			if n := len(sweepAts); n == 0 || sweepAts[n-1] != int(p.sweepAt.Load()) {
				sweepAts = append(sweepAts, int(p.sweepAt.Load()))
			}
		}
		// Nothing can be evicted, so each sweep doubles the next one's size.
		if want := []int{2, 4, 8, 16, 32, 64}; !slices.Equal(sweepAts, want) {
			t.Errorf("sweep sizes %v; want %v", sweepAts, want)
		}
		for _, tk := range tks {
			p.Release(tk, outSuccess)
		}
		time.Sleep(time.Minute)
		// The burst has passed: the next insert sweeps the table back
		// under its bound, although 64 hosts are far off.
		request(t, p, "one-more", 0, 0, outSuccess)
		if got := keysOf(p); !slices.Equal(got, []string{"one-more"}) {
			t.Errorf("hosts %v; want [one-more]", got)
		}
	})
}

// TestPacerChangesAndEvictions checks what the pacer's releases say of
// the backoff (raised, cleared, the level and the pause), and that the
// keys it evicts are reported with no lock held.
func TestPacerChangesAndEvictions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p *Memory
		var got []string
		p = newTestPacer(0, withMaxHosts(1), func(c *Config) {
			c.Evicted = func(key string) {
				for i := range p.shards {
					if s := &p.shards[i]; !s.mu.TryLock() {
						t.Errorf("%s reported with a shard locked", key)
					} else {
						for _, h := range s.hosts {
							if !h.mu.TryLock() {
								t.Errorf("%s reported with a key locked", key)
							} else {
								h.mu.Unlock()
							}
						}
						s.mu.Unlock()
					}
				}
				got = append(got, key)
			}
		})
		var changes []Change
		release := func(o Outcome) {
			tk := mustAcquire(t, p, pacerKey, 0)
			changes = append(changes, p.Release(tk, o))
		}
		release(Outcome{Class: Signal, RetryAfter: 2 * time.Minute})
		release(outSuccess)
		release(outSignal)
		time.Sleep(forgetAfter)
		release(outSuccess)
		wantChanges := []Change{
			{Raised: true, Level: 1, Pause: 2 * time.Minute},
			{Level: 1}, // started after the pause: not paused
			{Raised: true, Level: 2, Pause: 10 * time.Second},
			{Cleared: true},
		}
		if !slices.Equal(changes, wantChanges) {
			t.Errorf("changes\n%+v\nwant\n%+v", changes, wantChanges)
		}
		time.Sleep(time.Minute)
		request(t, p, "other.example", 0, 0, outSuccess)
		if want := []string{pacerKey}; !slices.Equal(got, want) {
			t.Errorf("evicted %q; want %q", got, want)
		}
	})
}

func TestPacerNoAllocs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPacer(0.5, withBaseDelay(0))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		request(t, p, pacerKey, 0, 0, outSuccess)
		allocs := testing.AllocsPerRun(100, func() {
			tk, err := p.Acquire(ctx, Request{Key: pacerKey, CrawlDelay: 0})
			if err != nil {
				t.Fatal(err)
			}
			p.Release(tk, outSuccess)
		})
		if allocs != 0 {
			t.Errorf("acquire+observe on a known idle host: %v allocations; want 0", allocs)
		}
	})
}

func TestPacerObserveZeroTicket(t *testing.T) {
	p := newTestPacer(0)
	p.Release(Lease{}, outSignal) // must not panic
	if n := len(p.snapshot()); n != 0 {
		t.Errorf("%d hosts; want 0", n)
	}
}

// TestPacerConcurrent runs many goroutines over a few hosts, with sweeps and
// snapshots on the way; run it with -race.
func TestPacerConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			hosts      = 8
			goroutines = 64
			each       = 20
			base       = 10 * time.Millisecond
			slots      = 2
		)
		p := newMemory(Config{Policy: Policy{BaseDelay: base, MaxDelay: time.Second, MaxCrawlDelay: time.Second, MaxInFlight: slots},
			MaxKeys: hosts / 2}, nil)
		var (
			mu       sync.Mutex
			starts   = map[string][]time.Time{}
			inFlight = map[string]int{}
			wg       sync.WaitGroup
		)
		outcomes := []Outcome{outSignal, outNeutral, outIgnore, outSuccess, outSuccess,
			outSuccess, outSuccess, outSuccess, outSuccess, outSuccess}
		for g := range goroutines {
			wg.Go(func() {
				for i := range each {
					key := fmt.Sprint("host-", (g+i)%hosts)
					tk, err := p.Acquire(context.Background(), Request{Key: key, CrawlDelay: 0})
					if err != nil {
						t.Errorf("acquire: %v", err)
						return
					}
					mu.Lock()
					starts[key] = append(starts[key], p.clock.timeOf(instant(tk.Seq)))
					if inFlight[key]++; inFlight[key] > slots {
						t.Errorf("%s: %d in flight", key, inFlight[key])
					}
					mu.Unlock()
					time.Sleep(time.Duration(g%3) * time.Millisecond)
					mu.Lock()
					inFlight[key]--
					mu.Unlock()
					p.Release(tk, outcomes[(g*each+i)%len(outcomes)])
					if i%4 == 0 {
						for _, s := range p.snapshot() {
							if s.InFlight > slots || s.Level > maxLevel || s.Waiting < 0 {
								t.Errorf("bad snapshot %+v", s)
							}
						}
					}
				}
			})
		}
		wg.Wait()

		total := 0
		for key, ts := range starts {
			total += len(ts)
			slices.SortFunc(ts, time.Time.Compare)
			for i := 1; i < len(ts); i++ {
				if gap := ts[i].Sub(ts[i-1]); gap < base {
					t.Errorf("%s: starts %d and %d are %v apart; want >= %v", key, i-1, i, gap, base)
				}
			}
		}
		if total != goroutines*each {
			t.Errorf("%d starts; want %d", total, goroutines*each)
		}
	})
}

// TestPacerProperties: random sequences of requests, outcomes,
// cancellations and deadlines over a few hosts never start a request
// sooner than the hard minimums allow, nor before a backoff already in force.
func TestPacerProperties(t *testing.T) {
	const sequences = 300
	for seed := range uint64(sequences) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { checkRandomSequence(t, seed) })
		})
	}
}

func checkRandomSequence(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 1))
	pick := func(ds ...time.Duration) time.Duration { return ds[r.IntN(len(ds))] }
	const ms = time.Millisecond
	cfg := Config{
		Policy: Policy{
			BaseDelay:     orNone(pick(0, 100*ms, time.Second)),
			Jitter:        orNone([]float64{0, 0.5, 1}[r.IntN(3)]),
			MaxDelay:      pick(2*time.Second, time.Minute),
			MaxCrawlDelay: orNone(pick(0, 5*time.Second, time.Minute)),
			MaxInFlight:   1 + r.IntN(3),
		},
		MaxKeys: 1 + r.IntN(3),
	}
	pol := cfg.Policy.Effective()
	var drawMu sync.Mutex
	draws := rand.New(rand.NewPCG(seed, 2))
	p := newMemory(cfg, func() float64 {
		drawMu.Lock()
		defer drawMu.Unlock()
		return draws.Float64()
	})

	keys := []string{"a", "b", "c"}
	floors := map[string]time.Duration{} // one robots.txt per key
	for _, k := range keys {
		floors[k] = pick(0, 500*ms, 3*time.Second, 2*time.Hour)
	}
	minGap := func(key string) time.Duration {
		return max(Value(pol.BaseDelay), min(floors[key], Value(pol.MaxCrawlDelay)))
	}

	type event struct {
		key       string
		at, until time.Time // until: blockedUntil after a response
	}
	var (
		mu       sync.Mutex
		starts   []event
		blocks   []event
		inFlight = map[string]int{}
		wg       sync.WaitGroup
	)
	n := 20 + r.IntN(40)
	for range n {
		time.Sleep(pick(0, 0, 100*ms, time.Second, 5*time.Second, 30*time.Second))
		key := keys[r.IntN(len(keys))]
		ttfb := pick(0, 50*ms, time.Second, 10*time.Second)
		o := Outcome{Class: Class(r.IntN(4))}
		if o.Class == Signal && r.IntN(2) == 0 {
			o.RetryAfter = pick(time.Second, 30*time.Second, 2*time.Hour)
		}
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		switch r.IntN(6) {
		case 0:
			ctx, cancel = context.WithTimeout(context.Background(), pick(100*ms, 2*time.Second, 20*time.Second))
		case 1:
			c, cc := context.WithCancel(context.Background())
			stop := time.AfterFunc(pick(0, 500*ms, 10*time.Second), cc)
			ctx, cancel = c, func() { stop.Stop(); cc() }
		}
		wg.Go(func() {
			defer cancel()
			tk, err := p.Acquire(ctx, Request{Key: key, CrawlDelay: floors[key]})
			if err != nil {
				var de *DeadlineError
				switch {
				case errors.As(err, &de):
					if de.Key != key || de.Earliest.Before(de.Deadline) || time.Now().After(de.Deadline) {
						t.Errorf("seed %d: %v returned at %v", seed, err, time.Now())
					}
				case err != context.Canceled && err != context.DeadlineExceeded:
					t.Errorf("seed %d: acquire = %v", seed, err)
				}
				return
			}
			mu.Lock()
			starts = append(starts, event{key: key, at: p.clock.timeOf(instant(tk.Seq))})
			if inFlight[key]++; inFlight[key] > pol.MaxInFlight {
				t.Errorf("seed %d: %s has %d in flight; max %d", seed, key, inFlight[key], pol.MaxInFlight)
			}
			mu.Unlock()
			time.Sleep(ttfb)
			mu.Lock()
			inFlight[key]--
			mu.Unlock()
			p.Release(tk, o)
			for _, s := range p.snapshot() {
				if s.Key == key {
					mu.Lock()
					blocks = append(blocks, event{key: key, at: time.Now(), until: s.PausedUntil})
					mu.Unlock()
				}
				if s.Level < 0 || s.Level > maxLevel {
					t.Errorf("seed %d: %s at level %d", seed, s.Key, s.Level)
				}
			}
		})
	}
	wg.Wait()

	slices.SortStableFunc(starts, func(a, b event) int { return a.at.Compare(b.at) })
	last := map[string]time.Time{}
	for _, s := range starts {
		if prev, ok := last[s.key]; ok && s.at.Sub(prev) < minGap(s.key) {
			t.Errorf("seed %d: %s started at %v and %v: %v apart; want >= %v",
				seed, s.key, prev, s.at, s.at.Sub(prev), minGap(s.key))
		}
		last[s.key] = s.at
		for _, b := range blocks {
			if b.key == s.key && b.at.Before(s.at) && s.at.Before(b.until) {
				t.Errorf("seed %d: %s started at %v, before %v, blocked at %v", seed, s.key, s.at, b.until, b.at)
			}
		}
	}
}

func BenchmarkPacerAcquireRelease(b *testing.B) {
	const hosts = 1000
	cfg := Config{Policy: Policy{BaseDelay: None}, MaxKeys: 1 << 20}
	keySet := func(prefix string) []string {
		keys := make([]string, hosts)
		for i := range keys {
			keys[i] = fmt.Sprintf("%s-host-%d.example", prefix, i)
		}
		return keys
	}
	warm := func(p *Memory, keys []string) {
		for _, k := range keys {
			tk, _ := p.Acquire(context.Background(), Request{Key: k, CrawlDelay: 0})
			p.Release(tk, outSuccess)
		}
	}

	b.Run("serial", func(b *testing.B) {
		p := newMemory(cfg, nil)
		keys := keySet("s")
		warm(p, keys)
		ctx := context.Background()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			tk, err := p.Acquire(ctx, Request{Key: keys[i%hosts], CrawlDelay: 0})
			if err != nil {
				b.Fatal(err)
			}
			p.Release(tk, outSuccess)
			i++
		}
	})

	b.Run("parallel", func(b *testing.B) {
		// Each goroutine has hosts of its own, so that pacing never binds.
		p := newMemory(cfg, nil)
		sets := make([][]string, 4*runtime.GOMAXPROCS(0))
		for g := range sets {
			sets[g] = keySet(fmt.Sprint("p", g))
			warm(p, sets[g])
		}
		var next atomic.Int32
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			keys := sets[int(next.Add(1)-1)%len(sets)]
			ctx := context.Background()
			for i := 0; pb.Next(); i++ {
				tk, err := p.Acquire(ctx, Request{Key: keys[i%hosts], CrawlDelay: 0})
				if err != nil {
					b.Error(err)
					return
				}
				p.Release(tk, outSuccess)
			}
		})
	})
}

// TestPacerBoundHoldsForFlakyHosts checks that hosts whose pause is over
// but whose backoff level is remembered leave the table once it is over
// its bound, while a host still paused stays.
func TestPacerBoundHoldsForFlakyHosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPacer(0, withMaxHosts(2))
		for _, key := range []string{"flaky-1", "flaky-2", "flaky-3"} {
			request(t, p, key, 0, 100*time.Millisecond, outSignal) // paused 5s, level 1 for 30m
		}
		time.Sleep(time.Minute)
		request(t, p, "paused", 0, 100*time.Millisecond, Outcome{Class: Signal, RetryAfter: time.Hour})
		request(t, p, "new", 0, 0, outSuccess)
		if got, want := keysOf(p), []string{"new", "paused"}; !slices.Equal(got, want) {
			t.Errorf("hosts %v; want %v", got, want)
		}
	})
}

func TestPacerBoundSpansShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPacer(0, withMaxHosts(8))
		var busy []Lease
		for i := range 8 {
			key := fmt.Sprint("host-", i)
			if i%2 == 0 {
				busy = append(busy, mustAcquire(t, p, key, 0))
			} else {
				request(t, p, key, 0, 0, outSuccess)
			}
		}
		time.Sleep(time.Minute) // the idle ones have nothing left to enforce
		if n := len(p.snapshot()); n != 8 {
			t.Fatalf("%d hosts; want 8 before the bound is reached", n)
		}
		request(t, p, "new", 0, 0, outSuccess) // sweeps every shard, not just new's
		want := []string{"host-0", "host-2", "host-4", "host-6", "new"}
		if got := keysOf(p); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("hosts after the sweep: %v; want %v", got, want)
		}
		if got := p.size.Load(); got != 5 {
			t.Errorf("size = %d; want 5", got)
		}
		for _, tk := range busy {
			p.Release(tk, outSuccess)
		}
	})
}
