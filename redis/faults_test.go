package politeredis

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
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

// syncBuffer is a bytes.Buffer safe for concurrent use, for a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// stateFields are the names of the state's values, in their order.
var stateFields = []string{"ls", "u", "fl", "est", "lvl", "stk", "bu", "esc", "lsig", "n", "nb", "nra", "L", "T", "Q"}

// stateField returns a field of the state at key, or nil when there is
// none.
func stateField(t *testing.T, c redis.Cmdable, key, field string) any {
	t.Helper()
	i := slices.Index(stateFields, field)
	if i < 0 {
		t.Fatalf("no state field %q", field)
	}
	v, err := c.Eval(context.Background(),
		"local v = redis.call('GET', KEYS[1]); if not v then return nil end; return ({cmsgpack.unpack(v)})[tonumber(ARGV[1])]",
		[]string{key}, i+1).Result()
	if err == redis.Nil {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestServerClock(t *testing.T) {
	c := newClient(t)
	policy := pace.Policy{BaseDelay: 50 * time.Millisecond, Jitter: pace.None, LatencyFactor: pace.None}
	prefix := freshPrefix()
	p := NewPacer(c, WithKeyPrefix(prefix), FailWhenUnreachable())(pace.Config{Policy: policy})
	ctx := context.Background()
	var starts []int64 // µs on the server's clock
	for range 3 {
		l, err := p.Acquire(ctx, pace.Request{Key: "a"})
		if err != nil {
			t.Fatal(err)
		}
		start, _ := strconv.ParseInt(l.Ref.(*lease).start, 10, 64)
		starts = append(starts, start)
		p.Release(l, pace.Outcome{Class: pace.Success})
	}
	for i := 1; i < len(starts); i++ {
		if gap := time.Duration(starts[i]-starts[i-1]) * time.Microsecond; gap < 50*time.Millisecond {
			t.Errorf("gap %d = %v on the server's clock; want at least 50ms", i, gap)
		}
	}
	ttl, err := c.PTTL(ctx, prefix+":{a}").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 29*time.Minute || ttl > 31*time.Minute {
		t.Errorf("PTTL of the state = %v; want the 30 minutes of forgetting, and the pace", ttl)
	}
	if l, _ := stateField(t, c, prefix+":{a}", "L").([]any); len(l) != 0 {
		t.Errorf("leases after the last release = %v; want none", l)
	}
	if n := stateField(t, c, prefix+":{a}", "n"); n != int64(3) {
		t.Errorf("requests counted = %v; want 3", n)
	}
}

func TestLeaseExpires(t *testing.T) {
	newClient(t)
	synctest.Test(t, func(t *testing.T) {
		c := redis.NewClient(clientOptions(sock))
		defer c.Close()
		policy := pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, Jitter: pace.None, MaxInFlight: 1}
		prefix := freshPrefix()
		opts := []PacerOption{WithClock(time.Now), WithKeyPrefix(prefix), FailWhenUnreachable(), WithLeaseDuration(time.Minute)}
		crashed := NewPacer(c, opts...)(pace.Config{Policy: policy})
		l, err := crashed.Acquire(context.Background(), pace.Request{Key: "a"})
		if err != nil {
			t.Fatal(err)
		}
		// The process that holds the slot dies: its lease is no longer
		// renewed, and another process waits for it to expire.
		crashed.(*pacer).keep.drop(leaseRef{"a", l.Ref.(*lease).id})
		t0 := time.Now()
		other := NewPacer(c, opts...)(pace.Config{Policy: policy})
		l, err = other.Acquire(context.Background(), pace.Request{Key: "a"})
		if err != nil {
			t.Fatal(err)
		}
		other.Release(l, pace.Outcome{Class: pace.Success})
		if got := time.Since(t0); got != time.Minute {
			t.Errorf("start after a crashed holder = +%v; want +1m0s, when its lease expires", got)
		}
	})
}

func TestFailWhenUnreachable(t *testing.T) {
	c := redis.NewClient(clientOptions("/nonexistent/redis.sock"))
	defer c.Close()
	p := NewPacer(c, FailWhenUnreachable(), WithTimeout(100*time.Millisecond))(pace.Config{Policy: pace.Policy{}})
	_, err := p.Acquire(context.Background(), pace.Request{Key: "a"})
	if err == nil || !strings.Contains(err.Error(), "redis unreachable") || !strings.Contains(err.Error(), "dial unix /nonexistent/redis.sock") {
		t.Fatalf("Acquire = %v; want an error naming redis and the dial's error", err)
	}
}

// TestOutage stops the server while a Pacer uses it, checks that requests
// go on in memory within their contexts, then starts the server again and
// checks that the Pacer goes back to it.
func TestOutage(t *testing.T) {
	c := newClient(t)
	policy := pace.Policy{BaseDelay: 10 * time.Millisecond, LatencyFactor: pace.None, Jitter: pace.None}
	var log syncBuffer
	prefix := freshPrefix()
	p := NewPacer(c, WithKeyPrefix(prefix), WithTimeout(500*time.Millisecond),
		WithLogger(slog.New(slog.NewTextHandler(&log, nil))))(pace.Config{Policy: policy}).(*pacer)
	p.o.probe = 50 * time.Millisecond
	request := func(key string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		t0 := time.Now()
		l, err := p.Acquire(ctx, pace.Request{Key: key})
		if err != nil {
			t.Fatalf("Acquire(%q) = %v after %v", key, err, time.Since(t0))
		}
		if d := time.Since(t0); d > 2100*time.Millisecond {
			t.Errorf("Acquire(%q) took %v, past its context's 2s", key, d)
		}
		p.Release(l, pace.Outcome{Class: pace.Success})
	}
	inRedis := func(key string) bool {
		n, _ := stateField(t, c, prefix+":{"+key+"}", "n").(int64)
		return n > 0
	}

	request("before")
	if !inRedis("before") {
		t.Fatal("no state in redis before the outage")
	}

	stopServer()
	t.Cleanup(func() {
		if server == nil {
			restartServer(t)
		}
	})
	for range 20 {
		request("during") // each within its context
	}
	if got := strings.Count(log.String(), "unreachable"); got != 1 {
		t.Errorf("outage said %d times; want once:\n%s", got, log.String())
	}
	// The call's context ends while go-redis retries its dials: the
	// warning carries their error, not only the context's.
	if !strings.Contains(log.String(), "the last dial failed: dial unix ") {
		t.Errorf("outage warning without the dial's error:\n%s", log.String())
	}

	restartServer(t)
	// The next request after a probe interval is the probe; on a busy
	// machine its call may time out, and the next probe tries again.
	for i := 0; !inRedis("after"); i++ {
		if i == 20 {
			t.Fatal("the pacer did not go back to redis")
		}
		time.Sleep(2 * p.o.probe)
		request("after")
	}
	if got := strings.Count(log.String(), "answers again"); got != 1 {
		t.Errorf("recovery said %d times; want once:\n%s", got, log.String())
	}
}

func TestFailWhenUnreachableNeverFallsBack(t *testing.T) {
	c := redis.NewClient(clientOptions("/nonexistent/redis.sock"))
	defer c.Close()
	p := NewPacer(c, FailWhenUnreachable(), WithTimeout(100*time.Millisecond))(pace.Config{Policy: pace.Policy{}})
	for range 3 {
		if _, err := p.Acquire(context.Background(), pace.Request{Key: "a"}); err == nil {
			t.Fatal("Acquire succeeded with redis unreachable")
		}
	}
}

// TestJitter checks that the jitter draw passed to the scripts stretches
// the gap that follows its start by the factor 1 + J·u.
func TestJitter(t *testing.T) {
	newClient(t)
	synctest.Test(t, func(t *testing.T) {
		c := redis.NewClient(clientOptions(sock))
		defer c.Close()
		policy := pace.Policy{Jitter: 0.5, LatencyFactor: pace.None}
		p := NewPacer(c, WithClock(time.Now), WithKeyPrefix(freshPrefix()), FailWhenUnreachable())(pace.Config{Policy: policy}).(*pacer)
		draws := []float64{0.25, 1, 0, 0.5, 0}
		var u float64
		p.rand = func() float64 { return u }
		want := []time.Duration{1125 * time.Millisecond, 1500 * time.Millisecond, time.Second, 1250 * time.Millisecond}
		var last time.Time
		for i := range 5 {
			u = draws[i]
			l, err := p.Acquire(context.Background(), pace.Request{Key: "a"})
			if err != nil {
				t.Fatal(err)
			}
			if i > 0 {
				if got := time.Since(last); got != want[i-1] {
					t.Errorf("gap %d = %v; want %v", i, got, want[i-1])
				}
			}
			last = time.Now()
			p.Release(l, pace.Outcome{Class: pace.Success})
		}
	})
}

// TestHungServer stops the server's process without ending it: a request
// fails at its deadline, not later, and the next ones pace in memory.
func TestHungServer(t *testing.T) {
	newClient(t) // skips without a server
	opts := clientOptions(sock)
	opts.ContextTimeoutEnabled = true
	c := redis.NewClient(opts)
	defer c.Close()
	policy := pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None}
	p := NewPacer(c, WithKeyPrefix(freshPrefix()))(pace.Config{Policy: policy})
	if l, err := p.Acquire(context.Background(), pace.Request{Key: "a"}); err != nil {
		t.Fatal(err)
	} else {
		p.Release(l, pace.Outcome{Class: pace.Success})
	}

	if err := server.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer server.Process.Signal(syscall.SIGCONT)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := p.Acquire(ctx, pace.Request{Key: "a"})
	if d := time.Since(t0); !errors.Is(err, context.DeadlineExceeded) || d > 300*time.Millisecond {
		t.Fatalf("Acquire on a hung server = %v after %v; want the context's deadline at 200ms", err, d)
	}
	t0 = time.Now()
	l, err := p.Acquire(context.Background(), pace.Request{Key: "a"})
	if err != nil || time.Since(t0) > 100*time.Millisecond {
		t.Fatalf("next Acquire = %v after %v; want a start in memory at once", err, time.Since(t0))
	}
	p.Release(l, pace.Outcome{Class: pace.Success})
}

// TestIgnore checks that a cancelled request frees its slot and teaches
// the policy nothing: neither its latency nor a signal.
func TestIgnore(t *testing.T) {
	newClient(t)
	synctest.Test(t, func(t *testing.T) {
		c := redis.NewClient(clientOptions(sock))
		defer c.Close()
		policy := pace.Policy{Jitter: pace.None}
		p := NewPacer(c, WithClock(time.Now), WithKeyPrefix(freshPrefix()), FailWhenUnreachable())(pace.Config{Policy: policy})
		ctx := context.Background()
		l, err := p.Acquire(ctx, pace.Request{Key: "a"})
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		time.Sleep(3 * time.Second)
		p.Release(l, pace.Outcome{Class: pace.Ignore, RetryAfter: time.Hour})
		l, err = p.Acquire(ctx, pace.Request{Key: "a"})
		if err != nil {
			t.Fatal(err)
		}
		p.Release(l, pace.Outcome{Class: pace.Success})
		// Not 6s, twice the latency, nor an hour.
		if got := time.Since(t0); got != 3*time.Second {
			t.Errorf("start after an ignored outcome = +%v; want +3s, at once", got)
		}
	})
}

// TestReleaseChanges checks what a Pacer's releases say they changed in
// the key's shared state: the backoff raised, with its level and pause,
// then cleared after five successes.
func TestReleaseChanges(t *testing.T) {
	newClient(t)
	synctest.Test(t, func(t *testing.T) {
		c := redis.NewClient(clientOptions(sock))
		defer c.Close()
		policy := pace.Policy{Jitter: pace.None}
		p := NewPacer(c, WithClock(time.Now), WithKeyPrefix(freshPrefix()), FailWhenUnreachable())(pace.Config{Policy: policy})
		request := func(o pace.Outcome) pace.Change {
			l, err := p.Acquire(context.Background(), pace.Request{Key: "a"})
			if err != nil {
				t.Fatal(err)
			}
			return p.Release(l, o)
		}
		var got []pace.Change
		got = append(got, request(pace.Outcome{Class: pace.Signal, RetryAfter: 7 * time.Second}))
		for range 5 {
			got = append(got, request(pace.Outcome{Class: pace.Success}))
		}
		want := []pace.Change{{Raised: true, Level: 1, Pause: 7 * time.Second}, {Level: 1}, {Level: 1}, {Level: 1}, {Level: 1}, {Cleared: true}}
		if !slices.Equal(got, want) {
			t.Errorf("changes\n%+v\nwant\n%+v", got, want)
		}
	})
}
