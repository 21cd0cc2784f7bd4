package politeredis

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// The tests of this file each break the server in one way that once left
// the fleet impolite or stuck, and check what must always hold after:
// the policy's pace, and requests within their contexts.

// stopped sends the test server SIGSTOP, and SIGCONT when t ends unless
// resume was called.
func stopped(t *testing.T) (resume func()) {
	t.Helper()
	if err := server.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	resume = func() { once.Do(func() { server.Process.Signal(syscall.SIGCONT) }) }
	t.Cleanup(resume)
	return resume
}

// hungClient returns a client of the test server that ends a call when
// its context ends, as the package documentation asks.
func hungClient(t *testing.T) *redis.Client {
	t.Helper()
	newClient(t) // skips without a server
	opts := clientOptions(sock)
	opts.ContextTimeoutEnabled = true
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

// eventually polls cond every 10ms until it holds, and fails t after
// limit.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
	}
}

// leases returns how many leases the state at key lists; a tombstone
// leaves an empty list.
func leases(t *testing.T, c redis.Cmdable, key string) int {
	t.Helper()
	l, _ := stateField(t, c, key, "L").([]any)
	return len(l) / 2
}

// TestGhostLease stops the server past the deadlines of requests whose
// admissions are on their way, four sent alone and one in a pipeline,
// then resumes it: the server runs the abandoned admissions, and their
// leases are given back, so that the next request to each host (MaxInFlight
// 1) starts.
func TestGhostLease(t *testing.T) {
	c := hungClient(t)
	policy := pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, Jitter: pace.None, MaxInFlight: 1}
	prefix := freshPrefix()
	p := NewPacer(c, WithKeyPrefix(prefix), FailWhenUnreachable(), WithTimeout(500*time.Millisecond))(pace.Config{Policy: policy}).(*pacer)
	p.o.probe = 200 * time.Millisecond
	keys := []string{"a", "b", "c", "d", "piped"}
	if l, err := p.Acquire(context.Background(), pace.Request{Key: "load"}); err != nil { // the server has the script
		t.Fatal(err)
	} else {
		p.Release(l, pace.Outcome{Class: pace.Success})
	}

	resume := stopped(t)
	var wg sync.WaitGroup
	for i, key := range keys {
		wg.Go(func() {
			deadline := 300 * time.Millisecond
			if key == "piped" { // queues behind the four sent alone, and goes in a pipeline when they end
				time.Sleep(100 * time.Millisecond)
				deadline = 600 * time.Millisecond
			}
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			if _, err := p.Acquire(ctx, pace.Request{Key: key}); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Acquire(%s, %d) on a stopped server = %v; want the context's deadline", key, i, err)
			}
		})
	}
	wg.Wait()
	resume()

	for _, key := range keys {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		l, err := p.Acquire(ctx, pace.Request{Key: key})
		cancel()
		if err != nil {
			t.Errorf("Acquire(%s) after the server resumed = %v; want its slot free", key, err)
			continue
		}
		p.Release(l, pace.Outcome{Class: pace.Success})
	}
}

// TestTombstone gives back a lease before its admission runs: the
// admission, when it comes, admits nothing.
func TestTombstone(t *testing.T) {
	c := newClient(t)
	policy := pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, MaxInFlight: 1}
	p := NewPacer(c, WithKeyPrefix(freshPrefix()), FailWhenUnreachable())(pace.Config{Policy: policy}).(*pacer)
	ctx := context.Background()
	if err := p.cancel.Run(ctx, c, p.keys("a"), p.argv("late")...).Err(); err != nil {
		t.Fatal(err)
	}
	r, err := reply(p.admit.Run(ctx, c, p.keys("a"), p.argv("0", "0", "late")...))
	if err != nil || r[0] != 0 {
		t.Fatalf("admission with a tombstone = %v, %v; want none", r, err)
	}
	l, err := p.Acquire(ctx, pace.Request{Key: "a"}) // the slot is free
	if err != nil {
		t.Fatal(err)
	}
	p.Release(l, pace.Outcome{Class: pace.Success})
}

// TestReleaseWithinContext stops the server while a request's response
// comes: its release returns at the request's deadline, not after the
// Pacer's longer timeout, and its lease is given back once the server
// resumes.
func TestReleaseWithinContext(t *testing.T) {
	stopWhileLeased(t, 2*time.Second, 300*time.Millisecond, func(p *pacer, l pace.Lease) {
		p.Release(l, pace.Outcome{Class: pace.Success})
		deadline, _ := l.Ref.(*lease).ctx.Deadline()
		if late := time.Since(deadline); late > 100*time.Millisecond {
			t.Errorf("Release on a stopped server returned %v past the request's deadline", late)
		}
	})
}

// TestLeaseGivenBackAfterOutage ends a request while its server is known
// to be down: Release does not wait for the server, and the lease is given
// back when the server answers again rather than held until it expires.
func TestLeaseGivenBackAfterOutage(t *testing.T) {
	stopWhileLeased(t, 300*time.Millisecond, 0, func(p *pacer, l pace.Lease) {
		if m, err := p.Acquire(context.Background(), pace.Request{Key: "b"}); err != nil { // finds the server down, and paces in memory
			t.Fatal(err)
		} else {
			p.Release(m, pace.Outcome{Class: pace.Success})
		}
		t0 := time.Now()
		p.Release(l, pace.Outcome{Class: pace.Success})
		if d := time.Since(t0); d > 100*time.Millisecond {
			t.Errorf("Release in an outage took %v; want no wait", d)
		}
	})
}

// stopWhileLeased takes a lease of a key on a Pacer with timeout, for a
// request with deadline (0: none), stops the server, calls release with
// the Pacer and the lease, resumes the server, and waits until the lease
// is given back.
func stopWhileLeased(t *testing.T, timeout, deadline time.Duration, release func(p *pacer, l pace.Lease)) {
	t.Helper()
	c := hungClient(t)
	policy := pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, MaxInFlight: 1}
	prefix := freshPrefix()
	p := NewPacer(c, WithKeyPrefix(prefix), WithTimeout(timeout))(pace.Config{Policy: policy}).(*pacer)
	p.o.probe = 200 * time.Millisecond
	ctx := context.Background()
	if deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, deadline)
		defer cancel()
	}
	l, err := p.Acquire(ctx, pace.Request{Key: "a"})
	if err != nil {
		t.Fatal(err)
	}
	resume := stopped(t)
	release(p, l)
	resume()
	eventually(t, 5*time.Second, "the lease given back", func() bool {
		return leases(t, c, prefix+":{a}") == 0
	})
}

// TestCorruptState puts values in a host's key that are not a state: the
// Pacer replaces them, says so once for each, stays on Redis, and the
// next start comes no sooner than the pace from the repair.
func TestCorruptState(t *testing.T) {
	newClient(t)
	corrupt := map[string]func(c *redis.Client, key string) error{
		"not MessagePack": func(c *redis.Client, key string) error {
			return c.Set(context.Background(), key, "\xc1garbage", 0).Err()
		},
		"a hash": func(c *redis.Client, key string) error {
			c.Del(context.Background(), key)
			return c.HSet(context.Background(), key, "ls", 1).Err()
		},
		"MessagePack of another shape": func(c *redis.Client, key string) error {
			return c.Set(context.Background(), key, "\xa5hello", 0).Err()
		},
		"a lease that is not one": func(c *redis.Client, key string) error {
			return c.Set(context.Background(), key, "\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x92\xa2id\xa1x", 0).Err()
		},
	}
	for name, spoil := range corrupt {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := redis.NewClient(clientOptions(sock))
				defer c.Close()
				var log syncBuffer
				prefix := freshPrefix()
				policy := pace.Policy{Jitter: pace.None, LatencyFactor: pace.None}
				p := NewPacer(c, WithClock(time.Now), WithKeyPrefix(prefix),
					WithLogger(slog.New(slog.NewTextHandler(&log, nil))))(pace.Config{Policy: policy})
				request := func() time.Time {
					t.Helper()
					l, err := p.Acquire(context.Background(), pace.Request{Key: "a"})
					if err != nil {
						t.Fatal(err)
					}
					at := time.Now()
					p.Release(l, pace.Outcome{Class: pace.Success})
					return at
				}
				request()
				time.Sleep(time.Minute)
				if err := spoil(c, prefix+":{a}"); err != nil {
					t.Fatal(err)
				}
				spoiled := time.Now()
				if got := request().Sub(spoiled); got != time.Second {
					t.Errorf("start after the state was spoiled = +%v; want +1s, the pace from the repair", got)
				}
				first := request()
				if got := request().Sub(first); got != time.Second {
					t.Errorf("gap after the repair = %v; want the pace, 1s", got)
				}
				if n := stateField(t, c, prefix+":{a}", "n"); n != int64(3) {
					t.Errorf("starts in redis since the repair = %v; want 3: the Pacer stayed on redis", n)
				}
				if got := strings.Count(log.String(), "was not its state"); got != 1 {
					t.Errorf("repair said %d times; want once:\n%s", got, log.String())
				}
				if strings.Contains(log.String(), "unreachable") {
					t.Errorf("a spoiled value was taken for an outage:\n%s", log.String())
				}
			})
		})
	}
}

// TestRecoveryKeepsPace paces one host through an outage, then starts the
// server again empty: the start that comes first through Redis keeps the
// pace from the last start made in memory.
func TestRecoveryKeepsPace(t *testing.T) {
	c := newClient(t)
	const pacing = 300 * time.Millisecond
	policy := pace.Policy{BaseDelay: pacing, LatencyFactor: pace.None, Jitter: pace.None}
	prefix := freshPrefix()
	p := NewPacer(c, WithKeyPrefix(prefix), WithTimeout(300*time.Millisecond))(pace.Config{Policy: policy}).(*pacer)
	p.o.probe = 50 * time.Millisecond
	var (
		mu     sync.Mutex
		starts []time.Time
		shared []bool // the start was made through redis
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			l, err := p.Acquire(ctx, pace.Request{Key: "a"})
			cancel()
			if err != nil {
				t.Error(err)
				return
			}
			_, inRedis := l.Ref.(*lease)
			mu.Lock()
			starts, shared = append(starts, time.Now()), append(shared, inRedis)
			mu.Unlock()
			p.Release(l, pace.Outcome{Class: pace.Success})
		}
	}()
	count := func(inRedis bool) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, s := range shared {
			if s == inRedis {
				n++
			}
		}
		return n
	}
	eventually(t, 10*time.Second, "starts before the outage", func() bool { return count(true) >= 2 })
	stopServer()
	t.Cleanup(func() {
		if server == nil {
			restartServer(t)
		}
	})
	eventually(t, 10*time.Second, "starts in memory", func() bool { return count(false) >= 3 })
	before := count(true)
	restartServer(t) // empty: the server keeps nothing
	eventually(t, 10*time.Second, "starts after the outage", func() bool { return count(true) >= before+3 })
	close(stop)
	<-done

	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(starts); i++ {
		// 30ms of slack: a start is taken when Acquire returns.
		if gap := starts[i].Sub(starts[i-1]); gap < pacing-30*time.Millisecond {
			t.Errorf("gap %d (%s to %s) = %v; want at least the pacing, %v", i, where(shared[i-1]), where(shared[i]), gap, pacing)
		}
	}
}

func where(inRedis bool) string {
	if inRedis {
		return "redis"
	}
	return "memory"
}

// TestWaiterInMemoryBackOnRedis ends an outage while a request waits in
// memory for the pace from a start made there: the request starts through
// Redis, which the other processes use again, no sooner than the pace from
// the start in memory, rather than in memory, where they would not see
// it. Before, it started in memory when its turn came there.
func TestWaiterInMemoryBackOnRedis(t *testing.T) {
	c := hungClient(t)
	const pacing = time.Second
	policy := pace.Policy{BaseDelay: pacing, LatencyFactor: pace.None, Jitter: pace.None}
	p := NewPacer(c, WithKeyPrefix(freshPrefix()), WithTimeout(200*time.Millisecond))(pace.Config{Policy: policy}).(*pacer)
	p.o.probe = 100 * time.Millisecond
	acquire := func(key string) (pace.Lease, time.Time) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l, err := p.Acquire(ctx, pace.Request{Key: key})
		if err != nil {
			t.Fatalf("Acquire(%s) = %v", key, err)
		}
		p.Release(l, pace.Outcome{Class: pace.Success})
		return l, time.Now()
	}
	acquire("load") // the server has the scripts

	resume := stopped(t)
	if l, _ := acquire("a"); isShared(l) { // the call fails, and the start is made in memory
		t.Fatal("Acquire on a stopped server started through Redis")
	}
	memory := time.Now()
	waiter := make(chan pace.Lease, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l, err := p.Acquire(ctx, pace.Request{Key: "a"}) // waits in memory for the pacing
		if err != nil {
			t.Errorf("Acquire(a) = %v", err)
			close(waiter)
			return
		}
		p.Release(l, pace.Outcome{Class: pace.Success})
		waiter <- l
	}()
	time.Sleep(50 * time.Millisecond)
	resume()
	time.Sleep(p.o.probe)
	acquire("b") // the probe: the server answers again
	l, ok := <-waiter
	if !ok {
		return
	}
	if !isShared(l) {
		t.Fatal("the request that waited in memory when the outage ended started there; want Redis")
	}
	us, _ := strconv.ParseInt(l.Ref.(*lease).start, 10, 64)
	if gap := time.UnixMicro(us).Sub(memory); gap < pacing-30*time.Millisecond {
		t.Errorf("start through Redis %v after the start in memory; want at least the pacing, %v", gap, pacing)
	}
}

// isShared reports whether l was admitted by Redis rather than in memory.
func isShared(l pace.Lease) bool {
	_, ok := l.Ref.(*lease)
	return ok
}
