package politeredis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// NewPacer returns a function that makes a [pace.Pacer] keeping each
// pacing key's state in Redis through client, for [polite.WithPacer]:
//
//	t := polite.New(nil, polite.WithPacer(politeredis.NewPacer(client)))
//
// client may be a single server, a Sentinel failover client or a Cluster.
// The Pacer runs, for each key, the policy that [pace.Config.For]
// gives it, Effective: the transport's, or the key's own, which the
// scripts are given with each call (the server holds one set of scripts
// whatever the policies). Every process that paces the same hosts must
// use the same policies and the same options. Idle hosts' keys expire by
// themselves. The Pacer keeps no goroutine running: the ones it starts to
// send its calls end when their queue is empty (see Calls and waits in the
// package documentation). It closes nothing; the client stays the
// caller's. An invalid option makes NewPacer panic with a
// [*polite.ConfigError].
func NewPacer(client redis.UniversalClient, opts ...PacerOption) func(pace.Config) pace.Pacer {
	o := apply(opts, PacerOption.applyPacer)
	return func(c pace.Config) pace.Pacer {
		return newPacer(client, c, o)
	}
}

// pacer is the Pacer that NewPacer makes.
type pacer struct {
	client   redis.UniversalClient
	policies pace.Config // its Policy Effective
	o        options
	scripts           // for the Default and the lease duration
	admits   *batcher // sends the admissions
	releases *batcher // sends the releases
	servers  *servers // whether each server answers

	fallback func() *pace.Memory // made on first use
	rand     func() float64      // jitter draws in [0, 1)

	ownArgs  sync.Map     // the ownPolicyArgs of the keys' own policies, by policy
	ownCount atomic.Int32 // entries in ownArgs, at most maxOwnArgs

	mu      sync.Mutex // guards watches
	watches map[string]*watch

	usedMu sync.Mutex // guards used and uses
	used   map[string]use
	uses   uint64

	carryMu  sync.Mutex        // guards carries, carryGen and carryAt
	carries  map[string]uint64 // the keys whose memory holds a start not carried, with the carryGen of the last
	carryGen uint64
	carrying atomic.Bool // carries is not empty
	carryAt  time.Time   // when carryAll last started

	orphanMu sync.Mutex // guards orphans and sweeping
	orphans  []orphan
	sweeping bool

	keep *keeper  // renews the leases of this process's requests in flight
	reg  registry // writes the keys this process uses to the fleet's index
}

// A watch lets the goroutines of this process that wait on a key learn
// that a lease of the key was released.
type watch struct {
	ch chan struct{} // closed at a release
	n  int           // goroutines waiting
}

// A use is when this process last used a key, for Stats.
type use struct {
	seq   uint64        // the order of uses
	floor time.Duration // the Crawl-delay of that use
}

// statsKeys bounds the keys that Stats reads: the ones this process used
// last.
const statsKeys = 1000

// maxCarries bounds the keys paced in memory whose state is carried into
// Redis when it answers again.
const maxCarries = 10000

// An orphan is a lease that a request took, or may yet take, and that
// no release will give back: its caller stopped waiting for its admission,
// or its release could not be sent.
type orphan struct {
	key, id string
	until   time.Time // when its lease has expired anyway
}

// maxOwnArgs bounds the keys' own policies whose script arguments are
// kept; past it, the others' are written out for each call.
const maxOwnArgs = 1024

// newPacer returns the Pacer of c.
func newPacer(client redis.UniversalClient, c pace.Config, o options) *pacer {
	c.Policy = c.Policy.Effective()
	p := &pacer{
		client:   client,
		policies: c,
		o:        o,
		scripts:  newScripts(c.Policy, o.lease),
		admits:   &batcher{client: client, timeout: o.timeout, detach: isCluster(client)},
		releases: &batcher{client: client, timeout: o.timeout, detach: isCluster(client)},
		fallback: sync.OnceValue(func() *pace.Memory {
			p, err := pace.NewMemory(c)
			if err != nil {
				panic(err) // the transport validated the policy
			}
			return p
		}),
		watches: make(map[string]*watch),
		used:    make(map[string]use),
		carries: make(map[string]uint64),
		rand:    rand.Float64,
	}
	p.keep = newKeeper(p)
	p.reg.p = p
	d := watchDials(client)
	p.servers = newServers(client, func(node string) *health {
		return &health{logger: o.logger, probe: o.probe, node: node, up: p.carryLater, dials: d,
			fallback: "pacing its keys in this process's memory", resumed: "pacing in redis"}
	})
	return p
}

// keys returns the Redis keys of a pacing key: the one that holds its
// state.
func (p *pacer) keys(key string) []string {
	return []string{p.o.prefix + ":{" + key + "}"}
}

// argv returns the arguments of a script: the instant for tests or "",
// then extra; withPolicy ends them.
func (p *pacer) argv(extra ...string) []any {
	return scriptArgs(p.o.clock, 2, extra...) // room for withCarry's
}

// now returns the time on the Pacer's clock.
func (p *pacer) now() time.Time {
	if p.o.clock != nil {
		return p.o.clock()
	}
	return time.Now()
}

// policy returns the policy in force for key.
func (p *pacer) policy(key string) pace.Policy {
	if p.policies.Override == nil {
		return p.policies.Policy
	}
	pol, _ := p.policies.For(key) // an invalid policy: the default, as every Pacer runs it
	return pol
}

// withPolicy returns args, which it ends with the arguments of key's own
// policy when key has one; the scripts hold the Default. args that end
// with a quota partition equal to ownPolicyMark get one more, which no
// script reads, so that the scripts do not take the partition for the
// mark.
func (p *pacer) withPolicy(key string, args []any) []any {
	if n := len(args); args[n-1] == ownPolicyMark {
		args = append(args, "")
	}
	if p.policies.Override == nil {
		return args
	}
	pol := p.policy(key)
	if pol == p.policies.Policy {
		return args
	}
	if a, ok := p.ownArgs.Load(pol); ok {
		return append(args, a.([]any)...)
	}
	a := ownPolicyArgs(pol)
	if p.ownCount.Add(1) <= maxOwnArgs {
		p.ownArgs.Store(pol, a)
	}
	return append(args, a...)
}

// draw returns a jitter draw in [0, 1) as a script argument, for a key
// whose policy has jitter j.
func (p *pacer) draw(j float64) string {
	if pace.Value(j) == 0 {
		return "0"
	}
	return strconv.FormatFloat(p.rand(), 'g', -1, 64)
}

// us returns d in whole microseconds, as a script argument.
func us(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }

// Acquire implements [pace.Pacer].
func (p *pacer) Acquire(ctx context.Context, r pace.Request) (pace.Lease, error) {
	key, partition, crawlDelay := r.Key, r.Partition, r.CrawlDelay
	floor := us(max(crawlDelay, 0))
	keys := p.keys(key)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if err := ended(ctx); err != nil {
			return pace.Lease{}, err
		}
		h := p.servers.of(ctx, keys[0])
		if !p.o.failClose && h.skip() {
			if l, err := p.alone(ctx, h, r); err != errBack {
				return l, err
			}
			continue
		}
		id := strconv.FormatUint(rand.Uint64(), 36)
		sent := time.Now()
		reply, err := p.acquire(ctx, h, key, partition, keys, floor, id)
		if err != nil {
			switch err := ended(ctx); err {
			case context.Canceled:
				return pace.Lease{}, err
			case context.DeadlineExceeded:
				// Redis did not answer within the request's deadline: the
				// next requests should not wait for it either, if it had
				// time to answer; if not, giving back the lease judges it.
				if !p.o.failClose && p.fairTry(sent) {
					h.failed(err)
				}
				return pace.Lease{}, err
			}
			if p.o.failClose {
				return pace.Lease{}, fmt.Errorf("politeredis: redis unreachable: %w", h.cause(err))
			}
			h.failed(err)
			continue // in memory, until the next probe
		}
		h.answered()
		if p.carrying.Load() {
			p.carryLater()
		}
		if reply[0] == 1 {
			p.keep.add(leaseRef{key, id})
			p.touch(key, crawlDelay)
			p.reg.add(key)
			return pace.Lease{Partition: partition, Ref: &lease{ctx: ctx, key: key, id: id, start: strconv.FormatInt(reply[1], 10)}}, nil
		}
		next, wake := time.Duration(reply[1])*time.Microsecond, time.Duration(reply[2])*time.Microsecond
		if deadline, ok := ctx.Deadline(); ok && next > 0 {
			if now := time.Now(); !now.Add(next).Before(deadline) {
				return pace.Lease{}, &pace.DeadlineError{Key: key, Earliest: now.Add(next), Deadline: deadline, Now: now}
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

// acquire runs the admission script for a request of partition to key,
// whose Redis keys are keys on server h, with Crawl-delay floor and lease
// id, and returns its reply as integers. When the call fails or ctx ends
// after it was sent, the lease it took, or may take when the server runs
// it, is given back.
func (p *pacer) acquire(ctx context.Context, h *health, key, partition string, keys []string, floor, id string) ([]int64, error) {
	orphan := func(cmd *redis.Cmd) {
		if cmd == nil {
			return // never sent
		}
		r, err := reply(cmd)
		if err == nil && r[0] == 1 || err != nil && !isReply(cmd.Err()) {
			p.abandon(key, id)
		}
	}
	args := p.argv(floor, p.draw(p.policy(key).Jitter), id, partition)
	var carried uint64
	if p.carrying.Load() {
		args, carried = p.withCarry(key, args)
	}
	args = p.withPolicy(key, args)
	cmd, err := p.admits.run(ctx, h.node, p.admit, keys, args, orphan)
	if err != nil {
		return nil, err
	}
	r, err := reply(cmd)
	if err != nil {
		if !isReply(cmd.Err()) {
			p.abandon(key, id)
		}
		return nil, err
	}
	if carried > 0 {
		p.carried(key, carried)
	}
	p.repaired(key, r)
	return r, nil
}

// errBack says that the outage of a key's server ended while a request
// waited in memory.
var errBack = errors.New("politeredis: the server answers again")

// reply returns the reply of a script as integers: its own, then 1 when
// the script replaced a stored value that was not a state.
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
	if len(r) < 4 {
		return nil, fmt.Errorf("politeredis: script reply %q", v)
	}
	return r, nil
}

// repaired says, when a script's reply r says so, that key's stored value
// was not a state and was replaced.
func (p *pacer) repaired(key string, r []int64) {
	if r[len(r)-1] == 1 && p.o.logger != nil {
		p.o.logger.Warn("politeredis: the value in redis of a pacing key was not its state; replaced it, no start sooner than the pace from now",
			"key", key, "redis_key", p.keys(key)[0])
	}
}

// alone paces r in this process's memory while h, its key's server, is
// down, and remembers to carry what it did into Redis when the server
// answers again. When the outage ends while the request waits, it returns
// errBack, for the request to ask Redis: the other processes start there,
// and would not see its start in time.
func (p *pacer) alone(ctx context.Context, h *health, r pace.Request) (pace.Lease, error) {
	key := r.Key
	p.touch(key, r.CrawlDelay)
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(h.outage(), cancel)()
	l, err := p.fallback().Acquire(mctx, r)
	if err != nil && ctx.Err() == nil && mctx.Err() != nil {
		return pace.Lease{}, errBack
	}
	if err == nil {
		p.carryMu.Lock()
		if _, ok := p.carries[key]; ok || len(p.carries) < maxCarries {
			p.carryGen++
			p.carries[key] = p.carryGen
			p.carrying.Store(true)
		}
		p.carryMu.Unlock()
	}
	return l, err
}

// touch records that this process used key with Crawl-delay floor, for
// Stats, keeping the last statsKeys keys used and up to as many more.
func (p *pacer) touch(key string, floor time.Duration) {
	p.usedMu.Lock()
	defer p.usedMu.Unlock()
	p.uses++
	p.used[key] = use{seq: p.uses, floor: floor}
	if len(p.used) >= 2*statsKeys {
		for k, u := range p.used {
			if u.seq <= p.uses-statsKeys {
				delete(p.used, k)
			}
		}
	}
}

// recent returns the keys this process used last, at most statsKeys, with
// the Crawl-delay of each one's last use.
func (p *pacer) recent() map[string]time.Duration {
	p.usedMu.Lock()
	defer p.usedMu.Unlock()
	out := make(map[string]time.Duration, min(len(p.used), statsKeys))
	for k, u := range p.used {
		if p.uses < statsKeys || u.seq > p.uses-statsKeys {
			out[k] = u.floor
		}
	}
	return out
}

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

// waiting returns how many goroutines of this process wait on key.
func (p *pacer) waiting(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w := p.watches[key]; w != nil {
		return w.n
	}
	return 0
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

// lease is what a pace.Lease of the pacer refers to: a member of the
// key's lease set. The lease's quota partition is the pace.Lease's.
type lease struct {
	ctx   context.Context // the request's, which bounds the release
	key   string
	id    string
	start string // µs on the store's clock
}

// Release implements [pace.Pacer]: it returns what the release changed in
// the key's shared state. The call is bounded by the request's context
// (the one given to Acquire) and by [WithTimeout]. When it cannot be made
// (the key's server is unreachable, or the request's context ends first)
// the outcome is lost, the Change is the zero one, and the lease is given
// back when the server answers again, or expires; in an outage of the
// key's server Release does not even try, so that a response never waits
// for a server known to be down. A lease that the Pacer granted from its
// memory, in an outage, is released there.
func (p *pacer) Release(pl pace.Lease, o pace.Outcome) pace.Change {
	l, ok := pl.Ref.(*lease)
	if !ok {
		return p.fallback().Release(pl, o)
	}
	p.keep.drop(leaseRef{l.key, l.id})
	defer p.notify(l.key)
	keys := p.keys(l.key)
	h := p.servers.of(l.ctx, keys[0])
	if h.isDown.Load() && !p.o.failClose {
		p.abandon(l.key, l.id)
		return pace.Change{}
	}
	b := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	q := o.Quota
	u := "0" // the draw for a pause, which only a signal causes
	if o.Class == pace.Signal {
		u = p.draw(p.policy(l.key).Jitter)
	}
	flags := 0 // as releaseLua reads them
	if o.TimedOut {
		flags |= 1
	}
	if o.RateLimited {
		flags |= 2
	}
	args := []string{l.id, l.start, strconv.Itoa(int(o.Class)), strconv.Itoa(flags), us(o.RetryAfter),
		b(q.Known), strconv.FormatInt(q.Remaining, 10), strconv.FormatInt(q.Limit, 10), us(q.Reset), u}
	if pl.Partition != "" || q.Partition != "" {
		args = append(args, pl.Partition, q.Partition)
	} else {
		for args[len(args)-1] == "0" { // the script takes a missing argument as 0
			args = args[:len(args)-1]
		}
	}
	orphan := func(cmd *redis.Cmd) {
		if cmd == nil || cmd.Err() != nil {
			p.abandon(l.key, l.id)
		}
	}
	cmd, err := p.releases.run(l.ctx, h.node, p.release, keys, p.withPolicy(l.key, p.argv(args...)), orphan)
	if err != nil {
		return pace.Change{} // the request's context ended; orphan gives the lease back
	}
	r, err := reply(cmd)
	if err != nil {
		p.abandon(l.key, l.id) // whether the server failed or refused, the script did not run
		if !p.o.failClose && l.ctx.Err() == nil {
			h.failed(err)
		}
		return pace.Change{}
	}
	h.answered()
	p.repaired(l.key, r)
	p.reg.write(l.ctx, o.Class == pace.Signal)
	return pace.Change{Raised: r[0] == 1, Cleared: r[0] == 2, Level: int(r[1]),
		Pause: time.Duration(r[2]) * time.Microsecond}
}

// RobotsRead implements [pace.Pacer]. A key's state in Redis stays at
// least 30 minutes past its last start (the time after which a backoff
// level is forgotten), and at least the policy's MaxCrawlDelay (see
// stateLua's save), so that whatever Crawl-delay a robots.txt fetch finds
// is honoured from the fetch's start: it needs no call. A lease granted
// from memory, in an outage, is told there.
func (p *pacer) RobotsRead(pl pace.Lease, crawlDelay time.Duration) {
	if _, ok := pl.Ref.(*lease); !ok {
		p.fallback().RobotsRead(pl, crawlDelay)
	}
}
