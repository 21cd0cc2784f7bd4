package politeredis

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// holdAlone is a go-redis hook that holds back the commands sent alone
// until the release batcher of p has queued want calls, so that these go
// in one pipeline, and that has the server forget its scripts, with flush,
// before the first pipeline, when no command sent alone is on its way, so
// that the pipeline must load them again.
type holdAlone struct {
	p         *pacer
	want      int
	flush     func(context.Context) error
	open      atomic.Bool  // the batcher has queued want calls
	alone     atomic.Int64 // commands sent alone on their way or held
	flushed   atomic.Bool
	pipelines atomic.Int64 // pipelines of more than one command
	reloads   atomic.Int64 // pipelines that sent scripts by EVAL
	err       atomic.Value // the error of flush or of the wait, if any
}

func (h *holdAlone) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *holdAlone) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.alone.Add(1)
		defer h.alone.Add(-1)
		for deadline := time.Now().Add(10 * time.Second); !h.open.Load(); time.Sleep(time.Millisecond) {
			if n := h.p.releases.queued(); n >= h.want {
				h.open.Store(true)
			} else if time.Now().After(deadline) {
				h.err.Store("the batcher queued " + strconv.Itoa(n) + " calls")
				h.open.Store(true)
			}
		}
		return next(ctx, cmd)
	}
}
func (h *holdAlone) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if cmds[0].Name() == "eval" {
			h.reloads.Add(1)
		}
		if len(cmds) > 1 && cmds[0].Name() == "evalsha" {
			h.pipelines.Add(1)
			if !h.flushed.Swap(true) {
				// No command sent alone loads the scripts again after the
				// flush.
				for h.alone.Load() > 0 {
					time.Sleep(time.Millisecond)
				}
				if err := h.flush(ctx); err != nil {
					h.err.Store(err.Error())
				}
			}
		}
		return next(ctx, cmds)
	}
}

// queued returns how many calls queue in b, in all its lanes.
func (b *batcher) queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, l := range b.lanes {
		n += len(l.queue)
	}
	return n
}

// testBatchedReleases releases many requests at once through client, and
// checks that those that could not go at once went in a pipeline, which found the server without its
// scripts, and that each took effect before its Release returned.
func testBatchedReleases(t *testing.T, client redis.UniversalClient, flushScripts func(context.Context) error) {
	const n = 200
	policy := pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, Jitter: pace.None, MaxInFlight: 1}
	prefix := freshPrefix()
	var backoffs atomic.Int64
	p := NewPacer(client, WithKeyPrefix(prefix), FailWhenUnreachable())(pace.Config{Policy: policy}).(*pacer)
	ctx := context.Background()
	key := func(i int) string { return "host" + strconv.Itoa(i) + ".example" }
	leases := make([]pace.Lease, n)
	for i := range leases {
		l, err := p.Acquire(ctx, pace.Request{Key: key(i)})
		if err != nil {
			t.Fatal(err)
		}
		leases[i] = l
	}

	servers := int64(1) // each has its lane, maxSending of whose calls go alone
	if c, ok := client.(*redis.ClusterClient); ok {
		servers = 0
		c.ForEachMaster(ctx, func(context.Context, *redis.Client) error {
			atomic.AddInt64(&servers, 1)
			return nil
		})
	}
	hook := &holdAlone{p: p, want: n - maxSending*int(servers), flush: flushScripts}
	client.AddHook(hook)
	goroutines := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for i, l := range leases {
		wg.Go(func() {
			if p.Release(l, pace.Outcome{Class: pace.Signal}).Raised {
				backoffs.Add(1)
			}
			// The slot is free and the signal known as soon as Release
			// returns: a start is not allowed before the pause.
			dctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			if _, err := p.Acquire(dctx, pace.Request{Key: key(i)}); err == nil {
				t.Errorf("Acquire(%s) right after a signal was released: admitted", key(i))
			} else if _, ok := err.(*pace.DeadlineError); !ok {
				t.Errorf("Acquire(%s) right after a signal was released = %v; want a *pace.DeadlineError", key(i), err)
			}
		})
	}
	wg.Wait()
	if err := hook.err.Load(); err != nil {
		t.Fatal(err)
	}
	if hook.pipelines.Load() == 0 {
		t.Error("no release went in a pipeline")
	}
	if hook.reloads.Load() == 0 {
		t.Error("no pipeline sent the scripts again after the server forgot them")
	}
	if got := backoffs.Load(); got != n {
		t.Errorf("EventBackoff %d times; want %d, one per release", got, n)
	}
	if p.servers.anyDown() {
		t.Error("a release failed")
	}
	// The goroutines that sent the queues have ended.
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > goroutines; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("%d goroutines after the requests; want %d, as before them", runtime.NumGoroutine(), goroutines)
			break
		}
	}
}

func TestBatchedReleases(t *testing.T) {
	c := newClient(t)
	testBatchedReleases(t, c, func(ctx context.Context) error {
		return c.ScriptFlush(ctx).Err()
	})
}

// TestReleaseOnHungServer stops the server's process while requests end:
// each Release returns within the Pacer's timeout, even the ones that
// queued behind a pipeline that waits for the server.
func TestReleaseOnHungServer(t *testing.T) {
	newClient(t) // skips without a server
	opts := clientOptions(sock)
	opts.ContextTimeoutEnabled = true
	c := redis.NewClient(opts)
	defer c.Close()
	policy := pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, MaxInFlight: 100}
	const timeout = 500 * time.Millisecond
	p := NewPacer(c, WithKeyPrefix(freshPrefix()), WithTimeout(timeout))(pace.Config{Policy: policy})
	var leases []pace.Lease
	for range 50 {
		l, err := p.Acquire(context.Background(), pace.Request{Key: "a"})
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l)
	}

	if err := server.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer server.Process.Signal(syscall.SIGCONT)
	var wg sync.WaitGroup
	for i, l := range leases {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * timeout / 100) // some while a pipeline waits
			t0 := time.Now()
			p.Release(l, pace.Outcome{Class: pace.Success})
			if d := time.Since(t0); d > 2*timeout {
				t.Errorf("Release %d on a hung server took %v; want about the timeout, %v", i, d, timeout)
			}
		})
	}
	wg.Wait()
}

// slowAdmissions is a go-redis hook that holds the first maxSending
// admissions sent alone for alone, and the first pipeline of admissions
// for pipelined, as a slow server would.
type slowAdmissions struct {
	sha              string // the admission script's
	alone, pipelined time.Duration
	heldAlone        atomic.Int64
	heldPipe         atomic.Bool
}

func (h *slowAdmissions) admission(cmd redis.Cmder) bool {
	args := cmd.Args()
	return cmd.Name() == "evalsha" && len(args) > 1 && args[1] == h.sha
}

func (h *slowAdmissions) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *slowAdmissions) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.admission(cmd) && h.heldAlone.Add(1) <= maxSending {
			time.Sleep(h.alone)
		}
		return next(ctx, cmd)
	}
}
func (h *slowAdmissions) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.admission(cmds[0]) && !h.heldPipe.Swap(true) {
			time.Sleep(h.pipelined)
		}
		return next(ctx, cmds)
	}
}

// TestAbandonedAdmission ends the contexts of requests while their
// admissions wait behind others: those already sent are admitted and
// their slots freed when the reply comes, the one still queued is never
// sent.
func TestAbandonedAdmission(t *testing.T) {
	c := newClient(t)
	policy := pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, Jitter: pace.None, MaxInFlight: 1}
	prefix := freshPrefix()
	p := NewPacer(c, WithKeyPrefix(prefix), FailWhenUnreachable(), WithTimeout(3*time.Second))(pace.Config{Policy: policy})
	// The server has the scripts, then the first admissions take 600ms,
	// and those that queue behind them go in a pipeline at 600ms that
	// takes 1s. The steps are far apart, so that a busy machine keeps
	// their order.
	if l, err := p.Acquire(context.Background(), pace.Request{Key: "load"}); err != nil {
		t.Fatal(err)
	} else {
		p.Release(l, pace.Outcome{Class: pace.Success})
	}
	c.AddHook(&slowAdmissions{sha: p.(*pacer).admit.Hash(), alone: 600 * time.Millisecond, pipelined: time.Second})

	request := func(key string, after, timeout time.Duration) {
		time.Sleep(after)
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		t0 := time.Now()
		l, err := p.Acquire(ctx, pace.Request{Key: key})
		if strings.HasPrefix(key, "first") {
			if err != nil {
				t.Errorf("Acquire(%s) = %v", key, err)
			} else {
				p.Release(l, pace.Outcome{Class: pace.Success})
			}
			return
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Acquire(%s) = %v; want the context's deadline", key, err)
		}
		if d := time.Since(t0); d > timeout+500*time.Millisecond {
			t.Errorf("Acquire(%s) returned after %v; want at its deadline, %v", key, d, timeout)
		}
	}
	var wg sync.WaitGroup
	for i := range maxSending {
		wg.Go(func() { request("first"+strconv.Itoa(i), 0, time.Minute) })
	}
	wg.Go(func() { request("sent1", 100*time.Millisecond, time.Second) })
	wg.Go(func() { request("sent2", 100*time.Millisecond, time.Second) })
	wg.Go(func() { request("queued", 200*time.Millisecond, 200*time.Millisecond) })
	wg.Wait()

	for _, key := range []string{"sent1", "sent2"} {
		// Its admission runs at 1.6s, when the pipeline reaches the
		// server, and its lease is then released.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			n, l := stateField(t, c, prefix+":{"+key+"}", "n"), stateField(t, c, prefix+":{"+key+"}", "L")
			if n == int64(1) && l == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: starts %v, leases %v; want 1 start and its lease released", key, n, l)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		l, err := p.Acquire(ctx, pace.Request{Key: key})
		cancel()
		if err != nil {
			t.Fatalf("Acquire(%s) after its abandoned admission = %v; want its slot free", key, err)
		}
		p.Release(l, pace.Outcome{Class: pace.Success})
	}
	if v := stateField(t, c, prefix+":{queued}", "n"); v != nil {
		t.Errorf("starts recorded for the queued admission = %v; want none: it was never sent", v)
	}
}
