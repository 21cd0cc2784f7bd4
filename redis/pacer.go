package politeredis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/polite-go/polite"
	"github.com/redis/go-redis/v9"
)

// NewPacer returns a function that makes a [polite.Pacer] keeping each
// pacing key's state in Redis through client, for [polite.WithPacer]:
//
//	t := polite.New(nil, polite.WithPacer(politeredis.NewPacer(client)))
//
// client may be a single server, a Sentinel failover client or a Cluster.
// The function runs the policy's [polite.PacingPolicy.Effective]: the
// transport gives it that already, and a caller may leave fields zero for
// their defaults. Every process that paces the same hosts must use the
// same policy and the same options. Idle hosts' keys expire by themselves.
// The Pacer keeps no goroutine running: the ones it starts to send queued
// calls in pipelines end when the queue is empty (see Calls and waits in
// the package documentation). It closes nothing; the client stays the
// caller's. An invalid option makes NewPacer panic with a
// [*polite.ConfigError].
func NewPacer(client redis.UniversalClient, opts ...PacerOption) func(polite.PacingPolicy) polite.Pacer {
	o := apply(opts, PacerOption.applyPacer)
	return func(policy polite.PacingPolicy) polite.Pacer {
		return newPacer(client, policy.Effective(), o)
	}
}

// pacer is the Pacer that NewPacer makes.
type pacer struct {
	client   redis.UniversalClient
	policy   polite.PacingPolicy // Effective
	o        options
	admit    *redis.Script // admitLua for policy
	release  *redis.Script // releaseLua for policy
	admits   *batcher      // sends the admissions
	releases *batcher      // sends the releases

	fallback func() polite.Pacer // made on first use
	rand     func() float64      // jitter draws in [0, 1)

	health  *health
	mu      sync.Mutex // guards watches
	watches map[string]*watch
}

// A watch lets the goroutines of this process that wait on a key learn
// that a lease of the key was released.
type watch struct {
	ch chan struct{} // closed at a release
	n  int           // goroutines waiting
}

// newPacer returns the Pacer of an Effective policy.
func newPacer(client redis.UniversalClient, policy polite.PacingPolicy, o options) *pacer {
	admit, release := newScripts(policy, o.lease)
	p := &pacer{
		client:   client,
		policy:   policy,
		o:        o,
		admit:    admit,
		release:  release,
		admits:   &batcher{client: client, timeout: o.timeout},
		releases: &batcher{client: client, timeout: o.timeout},
		fallback: sync.OnceValue(func() polite.Pacer {
			p, err := polite.NewMemoryPacer(policy, 0)
			if err != nil {
				panic(err) // the transport validated policy
			}
			return p
		}),
		watches: make(map[string]*watch),
		health: &health{logger: o.logger, probe: o.probe,
			fallback: "pacing in this process's memory", resumed: "pacing in redis"},
		rand: rand.Float64,
	}
	p.health.watchDials(client)
	return p
}

// keys returns the Redis keys of a pacing key: the one that holds its
// state.
func (p *pacer) keys(key string) []string {
	return []string{p.o.prefix + ":{" + key + "}"}
}

// argv returns the arguments of a script: the instant for tests or "",
// then extra.
func (p *pacer) argv(extra ...string) []any {
	a := make([]any, 0, 1+len(extra))
	if p.o.clock != nil {
		a = append(a, strconv.FormatInt(p.o.clock().UnixMicro(), 10))
	} else {
		a = append(a, "")
	}
	for _, s := range extra {
		a = append(a, s)
	}
	return a
}

// draw returns a jitter draw in [0, 1) as a script argument.
func (p *pacer) draw() string {
	if p.policy.Jitter == polite.None {
		return "0"
	}
	return strconv.FormatFloat(p.rand(), 'g', -1, 64)
}

// Acquire implements [polite.Pacer].
func (p *pacer) Acquire(ctx context.Context, key string, crawlDelay time.Duration) (polite.Lease, error) {
	floor := strconv.FormatInt(max(crawlDelay, 0).Microseconds(), 10)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if p.skipRedis() {
			return p.fallback().Acquire(ctx, key, crawlDelay)
		}
		id := strconv.FormatUint(rand.Uint64(), 36)
		r, err := p.acquire(ctx, key, floor, id)
		if err != nil {
			switch ctx.Err() {
			case context.Canceled:
				return nil, ctx.Err()
			case context.DeadlineExceeded:
				// Redis did not answer within the request's deadline: the
				// next requests should not wait for it either.
				if !p.o.failClose {
					p.health.failed(err)
				}
				return nil, ctx.Err()
			}
			if p.o.failClose {
				return nil, fmt.Errorf("politeredis: redis unreachable: %w", p.health.cause(err))
			}
			p.health.failed(err)
			return p.fallback().Acquire(ctx, key, crawlDelay)
		}
		p.health.answered()
		if r[0] == 1 {
			return &lease{p: p, key: key, id: id, start: strconv.FormatInt(r[1], 10)}, nil
		}
		next, wake := time.Duration(r[1])*time.Microsecond, time.Duration(r[2])*time.Microsecond
		if deadline, ok := ctx.Deadline(); ok && next > 0 {
			if now := time.Now(); !now.Add(next).Before(deadline) {
				return nil, &polite.DeadlineError{Key: key, Earliest: now.Add(next), Deadline: deadline}
			}
		}
		if next == 0 {
			wake = min(wake, p.o.poll) // a slot freed elsewhere is not announced
		}
		changed := p.watch(key)
		if timer == nil {
			timer = time.NewTimer(wake)
		} else {
			timer.Reset(wake)
		}
		select {
		case <-timer.C:
		case <-changed:
		case <-ctx.Done():
		}
		p.unwatch(key)
	}
}

// acquire runs the admission script for a request to key with Crawl-delay
// floor and lease id, and returns its reply as integers. When ctx ends
// after the call was sent, a lease that it took is released.
func (p *pacer) acquire(ctx context.Context, key, floor, id string) ([]int64, error) {
	orphan := func(cmd *redis.Cmd) {
		if r, err := reply(cmd); err == nil && r[0] == 1 {
			l := &lease{p: p, key: key, id: id, start: strconv.FormatInt(r[1], 10)}
			go l.Release(polite.Outcome{Class: polite.OutcomeIgnore})
		}
	}
	cmd, err := p.admits.run(ctx, p.admit, p.keys(key), p.argv(floor, p.draw(), id), orphan)
	if err != nil {
		return nil, err
	}
	return reply(cmd)
}

// reply returns the reply of a script as integers.
func reply(cmd *redis.Cmd) ([]int64, error) {
	v, err := cmd.Slice()
	if err != nil {
		return nil, err
	}
	r := make([]int64, len(v))
	for i, x := range v {
		n, ok := x.(int64)
		if !ok {
			return nil, fmt.Errorf("politeredis: script reply %q", v)
		}
		r[i] = n
	}
	if len(r) < 2 || r[0] != 1 && len(r) < 3 {
		return nil, fmt.Errorf("politeredis: script reply %q", v)
	}
	return r, nil
}

// skipRedis reports whether Acquire should pace in memory: Redis is
// unreachable, was tried less than a probe interval ago, and the Pacer
// may fall back. Otherwise, in an outage, the caller is the probe.
func (p *pacer) skipRedis() bool { return !p.o.failClose && p.health.skip() }

// watch returns a channel that a release of key closes, and counts the
// caller as waiting until unwatch.
func (p *pacer) watch(key string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.watches[key]
	if w == nil {
		w = &watch{ch: make(chan struct{})}
		p.watches[key] = w
	}
	w.n++
	return w.ch
}

func (p *pacer) unwatch(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w := p.watches[key]; w != nil {
		if w.n--; w.n == 0 {
			delete(p.watches, key)
		}
	}
}

// notify wakes the goroutines waiting on key.
func (p *pacer) notify(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w := p.watches[key]; w != nil {
		close(w.ch)
		w.ch = make(chan struct{})
	}
}

// lease is a pacer's Lease: a member of the key's lease set.
type lease struct {
	p     *pacer
	key   string
	id    string
	start string // µs on the store's clock
}

// Release implements [polite.Lease]: it returns what the release changed
// in the key's shared state. When Redis is unreachable the outcome is
// lost, the slot comes back when the lease expires, and the Change is the
// zero one; in an outage Release does not even try, so that a response
// never waits for a server known to be down.
func (l *lease) Release(o polite.Outcome) polite.Change {
	defer l.p.notify(l.key)
	if l.p.health.down.Load() && !l.p.o.failClose {
		return polite.Change{}
	}
	b := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	us := func(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }
	q := o.Quota
	u := "0" // the draw for a pause, which only a signal causes
	if o.Class == polite.OutcomeSignal {
		u = l.p.draw()
	}
	args := []string{l.id, l.start, strconv.Itoa(int(o.Class)), b(o.TimedOut), us(o.RetryAfter),
		b(q.Known), strconv.FormatInt(q.Remaining, 10), strconv.FormatInt(q.Limit, 10), us(q.Reset), u}
	for args[len(args)-1] == "0" { // the script takes a missing argument as 0
		args = args[:len(args)-1]
	}
	// With a context that cannot end, run returns no error of its own.
	cmd, _ := l.p.releases.run(context.Background(), l.p.release, l.p.keys(l.key), l.p.argv(args...), nil)
	r, err := reply(cmd)
	if err != nil {
		if !l.p.o.failClose {
			l.p.health.failed(err)
		}
		return polite.Change{}
	}
	return polite.Change{Raised: r[0] == 1, Cleared: r[0] == 2, Level: int(r[1]),
		Pause: time.Duration(r[2]) * time.Microsecond}
}
