package politeredis

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// The tests of this file each hold up a call to a server that answers, in
// one way that once made a Pacer take the server for down, or hold a
// request past its context: a call's failure must count against the
// server that failed, and only when that server had time to answer, and
// no request waits for a call past its context.

// loggedPacer returns a Pacer on c that paces with no delay, and what it
// logs.
func loggedPacer(c redis.UniversalClient, opts ...PacerOption) (*pacer, *syncBuffer) {
	log := &syncBuffer{}
	policy := pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, Jitter: pace.None}
	opts = append([]PacerOption{WithKeyPrefix(freshPrefix()), WithLogger(slog.New(slog.NewTextHandler(log, nil)))}, opts...)
	return NewPacer(c, opts...)(pace.Config{Policy: policy}).(*pacer), log
}

// inRedis fails t unless key's next request is admitted by Redis, not
// paced in memory.
func inRedis(t *testing.T, p *pacer, key string) {
	t.Helper()
	l, err := p.Acquire(context.Background(), pace.Request{Key: key})
	if err != nil {
		t.Fatalf("Acquire(%s) = %v", key, err)
	}
	defer p.Release(l, pace.Outcome{Class: pace.Success})
	if _, shared := l.Ref.(*lease); !shared {
		t.Errorf("Acquire(%s) paced in memory; want Redis, which answers", key)
	}
}

// outages fails t unless the Pacer logged an outage of each server of
// down, named by its address, and of no other.
func outages(t *testing.T, log *syncBuffer, down ...string) {
	t.Helper()
	out := log.String()
	n := strings.Count(out, "unreachable")
	for _, node := range down {
		if !strings.Contains(out, "unreachable; pacing its keys in this process's memory until it answers\" node="+node) {
			n = -1
		}
	}
	if n != len(down) {
		t.Errorf("want an outage of %v alone, servers that did not answer:\n%s", down, out)
	}
}

// lapsed is a context whose deadline has passed while the timer that
// ends it has not fired yet, as on a busy machine: Err is nil, Done open.
type lapsed struct {
	context.Context
	deadline time.Time
}

func (c lapsed) Deadline() (time.Time, bool) { return c.deadline, true }

// TestDeadlinePassedBeforeCall gives Acquire a request whose deadline has
// passed by the clock, though its context has not ended yet: Acquire
// fails with the deadline, sends nothing, and the server stays up.
// Before, the admission went with a deadline already past, failed at once,
// and its failure took the server for down.
func TestDeadlinePassedBeforeCall(t *testing.T) {
	p, log := loggedPacer(hungClient(t))
	ctx := lapsed{context.Background(), time.Now().Add(-time.Millisecond)}
	if l, err := p.Acquire(ctx, pace.Request{Key: "a"}); !errors.Is(err, context.DeadlineExceeded) {
		if l != (pace.Lease{}) {
			p.Release(l, pace.Outcome{Class: pace.Success})
		}
		t.Fatalf("Acquire past the request's deadline = %v, %v; want the deadline", l, err)
	}
	inRedis(t, p, "a")
	outages(t, log)
}

// slowCalls is a go-redis hook that holds each command that match picks
// for d, or until its context ends, as a slow server would; for d whatever
// its context, when deaf.
type slowCalls struct {
	d     time.Duration
	deaf  bool
	match func(redis.Cmder) bool
}

func (h slowCalls) hold(ctx context.Context, cmds ...redis.Cmder) error {
	done := ctx.Done()
	if h.deaf {
		done = nil
	}
	for _, cmd := range cmds {
		if h.match(cmd) {
			select {
			case <-time.After(h.d):
			case <-done:
				return ctx.Err()
			}
			return nil
		}
	}
	return nil
}

func (h slowCalls) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h slowCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := h.hold(ctx, cmd); err != nil {
			return err
		}
		return next(ctx, cmd)
	}
}
func (h slowCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := h.hold(ctx, cmds...); err != nil {
			return err
		}
		return next(ctx, cmds)
	}
}

// script returns a match for the commands that run s.
func script(s *redis.Script) func(redis.Cmder) bool {
	return func(cmd redis.Cmder) bool {
		args := cmd.Args()
		return cmd.Name() == "evalsha" && len(args) > 1 && args[1] == s.Hash()
	}
}

// TestDeadlineCutsCallShort sends an admission a moment before its
// request's deadline to a server that takes 50ms to answer it: Acquire
// fails at the deadline, and the server, which had no time to answer, is
// not taken for down. Before, any admission that the request's deadline
// cut short did. A server that does not answer in a tenth of WithTimeout
// still is (TestHungServer).
func TestDeadlineCutsCallShort(t *testing.T) {
	c := hungClient(t)
	p, log := loggedPacer(c)
	inRedis(t, p, "a") // the server has the scripts
	c.AddHook(slowCalls{d: 50 * time.Millisecond, match: script(p.admit)})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(ctx, pace.Request{Key: "a"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire cut short = %v; want the deadline", err)
	}
	inRedis(t, p, "a")
	outages(t, log)
}

// hang is a go-redis hook that, while on, holds every command until its
// context ends, as a server stopped by SIGSTOP would.
type hang struct{ on *atomic.Bool }

func (h hang) hold(ctx context.Context) error {
	if !h.on.Load() {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

func (h hang) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h hang) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := h.hold(ctx); err != nil {
			return err
		}
		return next(ctx, cmd)
	}
}
func (h hang) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := h.hold(ctx); err != nil {
			return err
		}
		return next(ctx, cmds)
	}
}

// hungPrimary starts a Cluster of three primaries and returns a client
// of it that hangs the primary of the key "a" while hung is on, that
// primary's address, keys it holds, and a key that another primary holds.
func hungPrimary(t *testing.T, hung *atomic.Bool) (c *redis.ClusterClient, cl *cluster, down string, onDown []string, onUp string) {
	t.Helper()
	cl = launchCluster(t, 3, 0, "--cluster-require-full-coverage", "no")
	options := &redis.ClusterOptions{Addrs: cl.addrs, ContextTimeoutEnabled: true}
	probe := redis.NewClusterClient(options)
	defer probe.Close()
	master := func(key string) string {
		m, err := probe.MasterForKey(context.Background(), "{"+key+"}")
		if err != nil {
			t.Fatal(err)
		}
		return m.Options().Addr
	}
	down = master("a")
	for i := 0; len(onDown) < 2*maxSending || onUp == ""; i++ {
		key := "h" + strconv.Itoa(i)
		if master(key) == down {
			onDown = append(onDown, key)
		} else if onUp == "" {
			onUp = key
		}
	}
	c = redis.NewClusterClient(options)
	t.Cleanup(func() { c.Close() })
	c.OnNewNode(func(n *redis.Client) { // before the client makes any
		if n.Options().Addr == down {
			n.AddHook(hang{hung})
		}
	})
	return c, cl, down, onDown, onUp
}

// TestHungPrimaryHoldsUpNoOther hangs one primary of a Cluster while
// twice as many admissions as go at once wait for it: an admission for a
// key on another primary goes at once, within its request's short
// deadline, and that primary is not taken for down. Before, the Pacer's
// calls to every server shared its four calls on their way and its queue,
// so that the admission queued behind those to the hung primary, and the
// end of its request's context took its own primary for down.
func TestHungPrimaryHoldsUpNoOther(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	var hung atomic.Bool
	c, _, down, onDown, onUp := hungPrimary(t, &hung)
	p, log := loggedPacer(c)
	inRedis(t, p, onUp)
	inRedis(t, p, onDown[0])
	hung.Store(true)
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, key := range onDown {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			if l, err := p.Acquire(ctx, pace.Request{Key: key}); err == nil {
				p.Release(l, pace.Outcome{Class: pace.Success})
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // the calls to the hung primary are on their way or queued
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	l, err := p.Acquire(ctx, pace.Request{Key: onUp})
	if err != nil {
		t.Fatalf("Acquire(%s) on a primary that answers, while another hangs = %v", onUp, err)
	}
	if _, shared := l.Ref.(*lease); !shared {
		t.Errorf("Acquire(%s) paced in memory; want Redis", onUp)
	}
	p.Release(l, pace.Outcome{Class: pace.Success})
	wg.Wait()
	outages(t, log, down)
}

// TestDeadPrimaryBlamedAlone kills a primary of a Cluster, then reads the
// Pacer's keys with Stats, in one pipeline to each primary: the dead
// primary's failure counts against it alone. Before, the calls went in
// one pipeline of the Cluster client, which retried those of the dead
// primary until its context ended, then set that error on every call,
// answered or not, and the Pacer took every primary for down.
func TestDeadPrimaryBlamedAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	c, cl, down, onDown, onUp := hungPrimary(t, new(atomic.Bool))
	p, log := loggedPacer(c)
	for _, key := range append(onDown, onUp) {
		inRedis(t, p, key)
	}
	cl.procs[down].Process.Kill()
	cl.procs[down].Wait()
	if _, err := p.Stats(context.Background()); err != nil {
		t.Fatal(err)
	}
	outages(t, log, down)
	inRedis(t, p, onUp)
}

// TestCallHeldPastContext has go-redis hold the Pacer's calls past their
// requests' contexts: a Cluster client that looks up the server's
// commands (under a lock and a context of its own of 5s) before its first
// call, and a hook that ignores its context. Acquire, Ready and Release
// return when the request's context ends, and the lease of the release
// left behind is given back. Before, Acquire and Release waited for
// go-redis.
func TestCallHeldPastContext(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	addrs := startCluster(t)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	c.OnNewNode(func(n *redis.Client) { // before the client makes any
		n.AddHook(slowCalls{d: time.Second, deaf: true, match: func(cmd redis.Cmder) bool { return cmd.Name() == "command" }})
	})
	policy := pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, Jitter: pace.None, MaxInFlight: 1}
	p := NewPacer(c, WithKeyPrefix(freshPrefix()))(pace.Config{Policy: policy}).(*pacer)
	inTime := func(what string, f func(ctx context.Context)) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		f(ctx)
		deadline, _ := ctx.Deadline()
		if late := time.Since(deadline); late > 100*time.Millisecond {
			t.Errorf("%s returned %v past its request's deadline", what, late)
		}
	}
	inTime("Acquire", func(ctx context.Context) {
		if _, err := p.Acquire(ctx, pace.Request{Key: "a"}); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Acquire while go-redis looks up the commands = %v; want the deadline", err)
		}
	})
	inTime("Ready", func(ctx context.Context) { p.Ready(ctx, pace.Request{Key: "a"}) })

	time.Sleep(time.Second) // the look-up ends
	inTime("Release", func(ctx context.Context) {
		l, err := p.Acquire(ctx, pace.Request{Key: "a"})
		if err != nil {
			t.Fatal(err)
		}
		c.AddHook(slowCalls{d: time.Second, deaf: true, match: script(p.release)})
		p.Release(l, pace.Outcome{Class: pace.Success})
	})
	eventually(t, 5*time.Second, "the lease given back", func() bool {
		return leases(t, c, p.keys("a")[0]) == 0
	})
}
