package pace

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// maxInterned bounds the distinct policies of keys that the pacer shares
// between the keys that have them; past it, each key keeps its own copy.
const maxInterned = 1024

// Memory is the in-memory [Pacer]: the policy of the package
// documentation, with each key's state in this process's memory. Build it
// with [NewMemory]. It is a [ReadyPacer] and a [StatsPacer], and safe for
// concurrent use.
//
// Each key has a next allowed start, as the policy computes it. Nothing is
// reserved ahead of time: the head of a key's queue re-evaluates whenever
// a response changes what the Pacer knows, so a 429 delays every request
// already waiting. Requests to one key are admitted in FIFO order. A queue
// only forms when a key is busy; an idle key admits a request under its
// lock alone, without its turn, a timer, a goroutine or an allocation.
type Memory struct {
	cfg    Config         // as given, MaxKeys set; Evicted called outside locks
	def    *Policy        // the policy of keys with none of their own: &defPol
	defPol Policy         // cfg.Policy, Effective
	rand   func() float64 // jitter draws; nil: math/rand/v2's
	clock  clock
	shards [shardCount]pacerShard
	size   atomic.Int64 // keys in all shards; changed under the shard's mu

	internMu sync.Mutex         // guards interned
	interned map[Policy]*Policy // the policies keys have of their own, each once

	sweepMu sync.Mutex   // serialises sweeps
	sweepAt atomic.Int64 // inserting into a pacer this large first sweeps it; stored under sweepMu
	retryAt atomic.Int64 // an instant: inserting into a pacer over MaxKeys from then on first sweeps it; stored under sweepMu
}

// Memory's state, as this file and sweep.go keep it. Times are instants
// of its clock (clock.go). Keys are kept in shards (shard.go). Inserting
// a key first sweeps every shard when the Pacer holds sweepAt keys, or
// when it holds more than MaxKeys and the time a kept key would become
// free to forget has come (retryAt), so that the table comes back under
// its bound soon after a burst has passed. Lock order: sweepMu, then a
// shard's mu, then a hostState's mu. None is held while waiting or while
// calling cfg.Evicted, so one slow or backed-off key never delays another.

// pacerShard holds the keys that hash to it.
type pacerShard struct {
	mu    sync.Mutex            // guards hosts; held only to find, insert or evict
	hosts map[string]*hostState // by pacing key
	_     cacheLinePad
}

var (
	_ ReadyPacer = (*Memory)(nil)
	_ StatsPacer = (*Memory)(nil)
)

// hostState is what the Pacer knows about one pacing key: the policy's
// state and the key's queue.
type hostState struct {
	key string

	// turn holds one token. The goroutine holding it is the head of the
	// key's queue, the only one that may start a request; the others block
	// receiving from turn, and a channel serves blocked receivers in order.
	// While nobody is queued, a request starts without it.
	turn chan struct{}

	pol *Policy // the policy in force for the key, Effective, chosen when its state is made

	// users counts goroutines inside Acquire for this key. It is raised
	// under its shard's mu, so a sweep, which holds that lock, never evicts
	// a key that a goroutine has looked up and not yet left.
	users atomic.Int32

	mu       sync.Mutex    // guards the fields below
	pace     paceState     // the policy's state
	inFlight int           // admitted and not yet released
	queued   int           // goroutines waiting for the turn or holding it
	changed  chan struct{} // closed by Release to wake the head; nil until a head waits
}

// defaultMaxKeys is Config.MaxKeys's default.
const defaultMaxKeys = 10_000

// NewMemory returns an in-memory Pacer for c: it runs, for each key, the
// policy that [Config.For] gives it, asked when the Pacer first keeps the
// key's state and kept with it. A Config that does not validate (see
// [Config.Validate]) is an error.
func NewMemory(c Config) (*Memory, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.MaxKeys == 0 {
		c.MaxKeys = defaultMaxKeys
	}
	p := &Memory{cfg: c, defPol: c.Policy.Effective(), clock: newClock(), interned: make(map[Policy]*Policy)}
	p.def = &p.defPol
	for i := range p.shards {
		p.shards[i].hosts = make(map[string]*hostState)
	}
	p.sweepAt.Store(int64(c.MaxKeys))
	p.retryAt.Store(math.MaxInt64)
	return p, nil
}

// policyOf returns the policy in force for key: the default, or the one
// cfg.Override gives key, shared with the keys that have the same.
func (p *Memory) policyOf(key string) *Policy {
	if p.cfg.Override == nil {
		return p.def
	}
	pp, _ := p.cfg.For(key) // an invalid policy: the default
	if pp == p.defPol {
		return p.def
	}
	p.internMu.Lock()
	defer p.internMu.Unlock()
	kp := p.interned[pp]
	if kp == nil {
		kp = &pp
		if len(p.interned) < maxInterned {
			p.interned[pp] = kp
		}
	}
	return kp
}

// shard returns the shard that holds key.
func (p *Memory) shard(key string) *pacerShard {
	return &p.shards[shardIndex(key)]
}

// Acquire implements [Pacer]. When nobody is queued on the key and its
// next allowed start has come with a slot free, the request starts at
// once; otherwise acquire joins key's queue, waits for its turn, then for
// the next allowed start and a free slot. A request whose own partition's
// quota holds it waits for that outside the queue, so that it holds up no
// request of another partition. If ctx's deadline comes before the next
// allowed start, it returns a [*DeadlineError] at once. If ctx ends while
// it waits, it returns ctx.Err() and leaves the host as it found it.
func (p *Memory) Acquire(ctx context.Context, r Request) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, err
	}
	h := p.use(r.Key)
	defer h.users.Add(-1) // runs last, after the turn is handed on

	// The common case: nobody queued and the host free to start now. It
	// needs neither the turn nor a timer.
	h.mu.Lock()
	if h.queued == 0 {
		if l, ok := p.tryStart(h, p.clock.now(), &r); ok {
			h.mu.Unlock()
			return l, nil
		}
	}
	return p.wait(ctx, h, &r)
}

// wait is acquire when the request cannot start at once: it waits for its
// partition's quota outside h's queue, then in the queue for its turn.
// h.mu is held, and wait releases it.
func (p *Memory) wait(ctx context.Context, h *hostState, r *Request) (Lease, error) {
	tr := ContextTrace(ctx)
	for first := true; ; first = false {
		if !first {
			h.mu.Lock()
			if h.queued == 0 {
				if l, ok := p.tryStart(h, p.clock.now(), r); ok {
					h.mu.Unlock()
					return l, nil
				}
			}
		}
		if h.pace.quotas != nil {
			now := p.clock.now()
			if held := p.heldUntil(h, now, r.Partition); held != 0 {
				_, cause := h.pol.quotaCause(&h.pace, now, r.Partition)
				h.mu.Unlock()
				tr.wait(cause)
				if err := p.waitQuota(ctx, h, held, cause); err != nil {
					return Lease{}, err
				}
				continue
			}
		}
		ahead := h.queued // goroutines queued or holding the turn
		h.queued++
		h.mu.Unlock()

		select {
		case <-h.turn: // nobody else queued
		default:
			tr.wait(CauseQueue)
			err := p.checkDeadline(ctx, h, r, ahead)
			if err == nil {
				select {
				case <-h.turn:
				case <-ctx.Done():
					err = ctx.Err()
				}
			}
			if err != nil {
				h.leave()
				return Lease{}, err
			}
		}
		l, err := p.admit(ctx, h, r, tr)
		h.turn <- struct{}{}
		if err != errQuotaHeld {
			return l, err
		}
	}
}

// errQuotaHeld is admit's word that the request's partition is held by
// its quota: it left the queue to wait for that outside it.
var errQuotaHeld = errors.New("pace: the partition's quota holds the request")

// heldUntil returns when the quotas of partition stop holding a request
// that the key itself would let start sooner, or 0 when they do not hold
// it. h.mu must be held.
func (p *Memory) heldUntil(h *hostState, now instant, partition string) instant {
	q := h.pol.quotaNext(&h.pace, now, partition)
	if q <= now || q <= h.pol.keyNext(&h.pace, now, 0) {
		return 0
	}
	return q
}

// waitQuota waits, outside h's queue, until held, when a partition's
// quotas stop holding a request for cause, or until a release changes
// what h knows. It fails at once with a *DeadlineError when ctx's
// deadline comes first.
func (p *Memory) waitQuota(ctx context.Context, h *hostState, held instant, cause Cause) error {
	h.mu.Lock()
	now := p.clock.now()
	if deadline, ok := ctx.Deadline(); ok && p.late(now, held, deadline) {
		h.mu.Unlock()
		return p.deadlineError(h.key, now, held, deadline, cause)
	}
	if h.changed == nil {
		h.changed = make(chan struct{})
	}
	changed := h.changed
	h.mu.Unlock()
	timer := time.NewTimer(time.Duration(held - now))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-changed:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// leave takes a goroutine that gives up out of h's queue.
func (h *hostState) leave() {
	h.mu.Lock()
	h.queued--
	h.mu.Unlock()
}

// use returns key's state, creating it if needed, and counts the caller as
// one of its users.
func (p *Memory) use(key string) *hostState {
	s := p.shard(key)
	s.mu.Lock()
	h := s.hosts[key]
	if h == nil && p.sweepDue() {
		s.mu.Unlock() // a sweep takes every shard's lock in turn
		for _, k := range p.sweep() {
			p.cfg.Evicted(k)
		}
		s.mu.Lock()
		h = s.hosts[key] // another goroutine may have inserted it meanwhile
	}
	if h == nil && p.cfg.Override != nil {
		// Asked outside the lock: Override is the caller's code.
		s.mu.Unlock()
		pol := p.policyOf(key)
		s.mu.Lock()
		if h = s.hosts[key]; h == nil {
			h = p.insert(s, key, pol)
		}
	}
	if h == nil {
		h = p.insert(s, key, p.def)
	}
	h.users.Add(1)
	s.mu.Unlock()
	return h
}

// insert puts a new state for key, under policy pol, in s, whose mu is
// held.
func (p *Memory) insert(s *pacerShard, key string, pol *Policy) *hostState {
	h := &hostState{key: key, turn: make(chan struct{}, 1), pol: pol}
	h.turn <- struct{}{}
	s.hosts[key] = h
	p.size.Add(1)
	return h
}

// checkDeadline returns a *DeadlineError if ctx's deadline is no later than
// the earliest start of r when it has ahead requests to h before it. Its
// cause is the queue, unless the key would hold r past its deadline with
// nobody ahead.
func (p *Memory) checkDeadline(ctx context.Context, h *hostState, r *Request, ahead int) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := p.clock.now()
	next := h.pol.earliest(&h.pace, now, r.CrawlDelay, r.Partition, ahead)
	if !p.late(now, next, deadline) {
		return nil
	}
	cause := CauseQueue // unless the key would hold r past its deadline with nobody ahead
	if p.late(now, h.pol.nextAllowed(&h.pace, now, r.CrawlDelay, r.Partition), deadline) {
		cause = h.pol.cause(&h.pace, now, r.CrawlDelay, r.Partition)
	}
	return p.deadlineError(h.key, now, next, deadline, cause)
}

// late reports whether deadline is no later than next, a start in the
// future.
func (p *Memory) late(now, next instant, deadline time.Time) bool {
	return next > now && next >= p.clock.instantOf(deadline)
}

// deadlineError returns the *DeadlineError of a request to key that cause
// holds until next, past deadline.
func (p *Memory) deadlineError(key string, now, next instant, deadline time.Time, cause Cause) error {
	return &DeadlineError{Key: key, Earliest: p.clock.timeOf(next), Deadline: deadline, Now: p.clock.timeOf(now), Cause: cause}
}

// RobotsRead implements [Pacer].
func (p *Memory) RobotsRead(l Lease, crawlDelay time.Duration) {
	if h, ok := l.Ref.(*hostState); ok {
		h.mu.Lock()
		h.pace.robotsRead(crawlDelay)
		h.mu.Unlock()
	}
}

// admit starts a request on h once its next allowed start has come and a
// slot is free. The caller holds h's turn and is counted in h.queued; admit
// takes it out of the queue, in the same critical section as the start when
// it starts, so that nothing that may block comes between the start and the
// request.
//
// When the quotas of the request's partition hold it past the key's next
// start, admit leaves the queue and returns errQuotaHeld, for the request
// to wait outside it. tr hears what holds the request each time it waits.
func (p *Memory) admit(ctx context.Context, h *hostState, r *Request, tr *Trace) (_ Lease, err error) {
	var timer *time.Timer // made on the first timed wait, then reused
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		if err != nil {
			h.leave()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return Lease{}, err
		}
		h.mu.Lock()
		now := p.clock.now()
		if l, ok := p.tryStart(h, now, r); ok {
			h.queued--
			h.mu.Unlock()
			return l, nil
		}
		if h.pace.quotas != nil && p.heldUntil(h, now, r.Partition) != 0 {
			h.mu.Unlock()
			return Lease{}, errQuotaHeld
		}
		next := h.pol.nextAllowed(&h.pace, now, r.CrawlDelay, r.Partition)
		var wake <-chan time.Time // nil: only a response or ctx can help
		cause := CauseInFlight
		if next > now {
			if deadline, ok := ctx.Deadline(); ok && p.late(now, next, deadline) {
				err := p.deadlineError(h.key, now, next, deadline, h.pol.cause(&h.pace, now, r.CrawlDelay, r.Partition))
				h.mu.Unlock()
				return Lease{}, err
			}
			if tr.hears() {
				cause = h.pol.cause(&h.pace, now, r.CrawlDelay, r.Partition)
			}
			d := time.Duration(h.pol.wakeAt(&h.pace, now, next) - now)
			if timer == nil {
				timer = time.NewTimer(d)
			} else {
				timer.Reset(d)
			}
			wake = timer.C
		} else if timer != nil {
			timer.Stop()
		}
		if h.changed == nil {
			h.changed = make(chan struct{})
		}
		changed := h.changed
		h.mu.Unlock()
		tr.wait(cause)

		select {
		case <-wake:
		case <-changed:
		case <-ctx.Done():
			return Lease{}, ctx.Err()
		}
	}
}

// tryStart starts r on h at now, if its next allowed start has come and a
// slot is free. h.mu must be held.
func (p *Memory) tryStart(h *hostState, now instant, r *Request) (Lease, bool) {
	if now < h.pol.nextAllowed(&h.pace, now, r.CrawlDelay, r.Partition) || h.full() {
		return Lease{}, false
	}
	h.pol.start(&h.pace, now, r.CrawlDelay, r.Partition, p.rand)
	if r.Robots {
		h.pace.fetchingRobots()
	}
	h.inFlight++
	return Lease{Partition: r.Partition, Ref: h, Seq: int64(now)}, true
}

// full reports whether h has all its slots in flight. h.mu must be held.
func (h *hostState) full() bool {
	n := Value(h.pol.MaxInFlight) // 0: no cap
	return n > 0 && h.inFlight >= n
}

// Release implements [Pacer]: it ends l's request with o, and says how
// that changed the key's backoff. The zero Lease, or one of another
// Pacer, releases nothing.
func (p *Memory) Release(l Lease, o Outcome) Change {
	h, ok := l.Ref.(*hostState)
	if !ok {
		return Change{}
	}
	now := p.clock.now()
	h.mu.Lock()
	if h.inFlight > 0 {
		h.inFlight--
	}
	change := h.pol.learn(&h.pace, instant(l.Seq), now, l.Partition, &o, p.rand)
	until := h.pace.blockedUntil
	if h.pace.quotas != nil {
		until = max(until, h.pace.quotaUntil(l.Partition))
	}
	c := Change{Raised: change == levelRaised, Cleared: change == levelCleared, Level: h.pace.level,
		Pause: max(time.Duration(until-now), 0)}
	if h.changed != nil {
		close(h.changed)
		h.changed = nil
	}
	h.mu.Unlock()
	return c
}
