package polite

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// pacerConfig is what the in-memory pacer needs.
type pacerConfig struct {
	policy      delayPolicy // the default policy's
	maxInFlight int         // the default policy's requests in flight per host, >= 1
	policies    Policies    // the default policy, Effective, and the keys' own; a nil Override: none
	maxHosts    int         // soft bound on tracked hosts, >= 1
	events      emitter     // evictions are reported to it, outside locks; set by setEvents before first use
}

// keyPolicy is a policy that the in-memory pacer runs on some keys, worked
// out once: the default, shared by the keys with no policy of their own,
// or one of theirs.
type keyPolicy struct {
	delayPolicy
	maxInFlight int          // requests in flight per key, >= 1
	policy      PacingPolicy // Effective, as KeyState shows it
}

// maxInterned bounds the distinct policies of keys that the pacer shares
// between the keys that have them; past it, each key keeps its own copy.
const maxInterned = 1024

// memoryPacer is the in-memory pacer. Each host has a next allowed start,
// as the policy computes it. Nothing is reserved ahead of time: the head of
// a host's queue re-evaluates whenever a response changes what the pacer
// knows, so a 429 delays every request already waiting.
//
// Requests to one host are admitted in FIFO order. A queue only forms when
// a host is busy; an idle host admits a request under its lock alone,
// without its turn, a timer, a goroutine or an allocation. Times are
// instants of the pacer's clock (clock.go).
//
// Hosts are kept in shards (shard.go). Inserting a host first sweeps every
// shard when the pacer holds sweepAt hosts, or when it holds more than
// maxHosts and the time a kept host would become free to forget has come
// (retryAt), so that the table comes back under its bound soon after a
// burst has passed.
//
// Lock order: sweepMu, then a shard's mu, then a hostState's mu. None is
// held while waiting or while calling cfg.events, so one slow or backed-off
// host never delays another.
type memoryPacer struct {
	cfg    pacerConfig
	def    *keyPolicy // the policy of keys with none of their own: defPol
	defPol keyPolicy  // kept here, beside cfg, where the requests read it
	clock  clock
	shards [shardCount]pacerShard
	size   atomic.Int64 // hosts in all shards; changed under the shard's mu

	internMu sync.Mutex                  // guards interned
	interned map[PacingPolicy]*keyPolicy // the policies keys have of their own, each once

	sweepMu sync.Mutex   // serialises sweeps
	sweepAt atomic.Int64 // inserting into a pacer this large first sweeps it; stored under sweepMu
	retryAt atomic.Int64 // an instant: inserting into a pacer over maxHosts from then on first sweeps it; stored under sweepMu
}

// pacerShard holds the hosts whose keys hash to it.
type pacerShard struct {
	mu    sync.Mutex            // guards hosts; held only to find, insert or evict
	hosts map[string]*hostState // by pacing key
	_     cacheLinePad
}

var (
	_ ReadyPacer  = (*memoryPacer)(nil)
	_ StatsPacer  = (*memoryPacer)(nil)
	_ ticketPacer = (*memoryPacer)(nil)
	_ robotsPacer = (*memoryPacer)(nil)
	_ eventPacer  = (*memoryPacer)(nil)
)

// hostState is what the pacer knows about one pacing key: the policy's
// state and the host's queue.
type hostState struct {
	key string

	// turn holds one token. The goroutine holding it is the head of the
	// host's queue, the only one that may start a request; the others block
	// receiving from turn, and a channel serves blocked receivers in order.
	// While nobody is queued, a request starts without it.
	turn chan struct{}

	pol *keyPolicy // the policy in force for the key, chosen when its state is made

	// users counts goroutines inside acquire for this host. It is raised
	// under its shard's mu, so a sweep, which holds that lock, never evicts
	// a host that a goroutine has looked up and not yet left.
	users atomic.Int32

	mu       sync.Mutex    // guards the fields below
	pace     paceState     // the policy's state
	inFlight int           // admitted and not yet observed
	queued   int           // goroutines waiting for the turn or holding it
	changed  chan struct{} // closed by observe to wake the head; nil until a head waits
}

// newMemoryPacer returns a pacer for cfg, whose values the options have
// validated.
func newMemoryPacer(cfg pacerConfig) *memoryPacer {
	p := &memoryPacer{cfg: cfg, clock: newClock(), interned: make(map[PacingPolicy]*keyPolicy)}
	p.defPol = keyPolicy{delayPolicy: cfg.policy, maxInFlight: cfg.maxInFlight, policy: cfg.policies.Default}
	p.def = &p.defPol
	for i := range p.shards {
		p.shards[i].hosts = make(map[string]*hostState)
	}
	p.sweepAt.Store(int64(cfg.maxHosts))
	p.retryAt.Store(math.MaxInt64)
	return p
}

// policyOf returns the policy in force for key: the default, or the one
// cfg.policies gives key, shared with the keys that have the same.
func (p *memoryPacer) policyOf(key string) *keyPolicy {
	if p.cfg.policies.Override == nil {
		return p.def
	}
	pp := p.cfg.policies.For(key)
	if pp == p.cfg.policies.Default {
		return p.def
	}
	p.internMu.Lock()
	defer p.internMu.Unlock()
	kp := p.interned[pp]
	if kp == nil {
		dp := pp.delayPolicy()
		dp.rand = p.cfg.policy.rand
		kp = &keyPolicy{delayPolicy: dp, maxInFlight: pp.maxInFlight(), policy: pp}
		if len(p.interned) < maxInterned {
			p.interned[pp] = kp
		}
	}
	return kp
}

// shard returns the shard that holds key.
func (p *memoryPacer) shard(key string) *pacerShard {
	return &p.shards[shardIndex(key)]
}

// acquire implements [ticketPacer]. When nobody is queued on key and its
// next allowed start has come with a slot free, the request starts at
// once; otherwise acquire joins key's queue, waits for its turn, then for
// the next allowed start and a free slot. A request whose own partition's
// quota holds it waits for that outside the queue, so that it holds up no
// request of another partition. If ctx's deadline comes before the next
// allowed start, it returns a [*DeadlineError] at once. If ctx ends while
// it waits, it returns ctx.Err() and leaves the host as it found it.
func (p *memoryPacer) acquire(ctx context.Context, key, partition string, floor time.Duration) (ticket, error) {
	if err := ctx.Err(); err != nil {
		return ticket{}, err
	}
	h := p.use(key)
	defer h.users.Add(-1) // runs last, after the turn is handed on

	// The common case: nobody queued and the host free to start now. It
	// needs neither the turn nor a timer.
	h.mu.Lock()
	if h.queued == 0 {
		if t, ok := p.tryStart(h, p.clock.now(), floor, partition); ok {
			h.mu.Unlock()
			return t, nil
		}
	}
	return p.wait(ctx, h, partition, floor)
}

// wait is acquire when the request cannot start at once: it waits for its
// partition's quota outside h's queue, then in the queue for its turn.
// h.mu is held, and wait releases it.
func (p *memoryPacer) wait(ctx context.Context, h *hostState, partition string, floor time.Duration) (ticket, error) {
	for first := true; ; first = false {
		if !first {
			h.mu.Lock()
			if h.queued == 0 {
				if t, ok := p.tryStart(h, p.clock.now(), floor, partition); ok {
					h.mu.Unlock()
					return t, nil
				}
			}
		}
		if h.pace.quotas != nil {
			if held := p.heldUntil(h, p.clock.now(), partition); held != 0 {
				h.mu.Unlock()
				if err := p.waitQuota(ctx, h, partition, held); err != nil {
					return ticket{}, err
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
			err := p.checkDeadline(ctx, h, floor, partition, ahead)
			if err == nil {
				select {
				case <-h.turn:
				case <-ctx.Done():
					err = ctx.Err()
				}
			}
			if err != nil {
				h.leave()
				return ticket{}, err
			}
		}
		t, err := p.admit(ctx, h, floor, partition)
		h.turn <- struct{}{}
		if err != errQuotaHeld {
			return t, err
		}
	}
}

// errQuotaHeld is admit's word that the request's partition is held by
// its quota: it left the queue to wait for that outside it.
var errQuotaHeld = errors.New("polite: the partition's quota holds the request")

// heldUntil returns when the quotas of partition stop holding a request
// that the key itself would let start sooner, or 0 when they do not hold
// it. h.mu must be held.
func (p *memoryPacer) heldUntil(h *hostState, now instant, partition string) instant {
	q := h.pol.quotaNext(&h.pace, now, partition)
	if q <= now || q <= h.pol.keyNext(&h.pace, now, 0) {
		return 0
	}
	return q
}

// waitQuota waits, outside h's queue, until held, when partition's quotas
// stop holding a request, or until a release changes what h knows. It
// fails at once with a *DeadlineError when ctx's deadline comes first.
func (p *memoryPacer) waitQuota(ctx context.Context, h *hostState, partition string, held instant) error {
	h.mu.Lock()
	now := p.clock.now()
	if deadline, ok := ctx.Deadline(); ok {
		if err := p.deadlineError(h.key, now, held, deadline); err != nil {
			h.mu.Unlock()
			return err
		}
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
func (p *memoryPacer) use(key string) *hostState {
	s := p.shard(key)
	s.mu.Lock()
	h := s.hosts[key]
	if h == nil && p.sweepDue() {
		s.mu.Unlock() // a sweep takes every shard's lock in turn
		for _, k := range p.sweep() {
			p.cfg.events.emit(Event{Kind: EventHostEvicted, Key: k})
		}
		s.mu.Lock()
		h = s.hosts[key] // another goroutine may have inserted it meanwhile
	}
	if h == nil && p.cfg.policies.Override != nil {
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
func (p *memoryPacer) insert(s *pacerShard, key string, pol *keyPolicy) *hostState {
	h := &hostState{key: key, turn: make(chan struct{}, 1), pol: pol}
	h.turn <- struct{}{}
	s.hosts[key] = h
	p.size.Add(1)
	return h
}

// checkDeadline returns a *DeadlineError if ctx's deadline is no later than
// the earliest start of a request of partition that has ahead requests to
// h before it.
func (p *memoryPacer) checkDeadline(ctx context.Context, h *hostState, floor time.Duration, partition string, ahead int) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		return nil
	}
	h.mu.Lock()
	now := p.clock.now()
	next := h.pol.earliest(&h.pace, now, floor, partition, ahead)
	h.mu.Unlock()
	return p.deadlineError(h.key, now, next, deadline)
}

// deadlineError returns a *DeadlineError if deadline is no later than next,
// a start in the future, and nil otherwise.
func (p *memoryPacer) deadlineError(key string, now, next instant, deadline time.Time) error {
	if next > now && next >= p.clock.instantOf(deadline) {
		return &DeadlineError{Key: key, Earliest: p.clock.timeOf(next), Deadline: deadline, now: p.clock.timeOf(now)}
	}
	return nil
}

// Ready implements [ReadyPacer]. Next counts the requests queued on the
// key ahead of a newcomer: each of them starts at least a base delay
// after the one before (delayPolicy.earliest). A key the pacer does not
// hold has a zero Next and the pace of a new one.
func (p *memoryPacer) Ready(ctx context.Context, key, partition string, crawlDelay time.Duration) (KeyState, error) {
	if err := ctx.Err(); err != nil {
		return KeyState{}, err
	}
	h := p.lookup(key)
	if h == nil {
		pol := p.policyOf(key)
		return KeyState{Key: key, Pace: pol.pace(&paceState{}, p.clock.now(), crawlDelay), Policy: pol.policy}, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := p.clock.now()
	ks := p.stateLocked(h, now, crawlDelay, partition)
	ks.Next = p.clock.timeOf(h.pol.earliest(&h.pace, now, crawlDelay, partition, h.queued))
	return ks, nil
}

// lookup returns key's state, or nil when the pacer does not hold it.
func (p *memoryPacer) lookup(key string) *hostState {
	s := p.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hosts[key]
}

// fetchingRobots implements [robotsPacer].
func (p *memoryPacer) fetchingRobots(t ticket) {
	if h := t.h; h != nil {
		h.mu.Lock()
		h.pol.fetchingRobots(&h.pace)
		h.mu.Unlock()
	}
}

// fetchedRobots implements [robotsPacer].
func (p *memoryPacer) fetchedRobots(t ticket, crawlDelay time.Duration) {
	if h := t.h; h != nil {
		h.mu.Lock()
		h.pol.fetchedRobots(&h.pace, crawlDelay)
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
// to wait outside it.
func (p *memoryPacer) admit(ctx context.Context, h *hostState, floor time.Duration, partition string) (_ ticket, err error) {
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
			return ticket{}, err
		}
		h.mu.Lock()
		now := p.clock.now()
		if t, ok := p.tryStart(h, now, floor, partition); ok {
			h.queued--
			h.mu.Unlock()
			return t, nil
		}
		if h.pace.quotas != nil && p.heldUntil(h, now, partition) != 0 {
			h.mu.Unlock()
			return ticket{}, errQuotaHeld
		}
		next := h.pol.nextAllowed(&h.pace, now, floor, partition)
		var wake <-chan time.Time // nil: only a response or ctx can help
		if next > now {
			if deadline, ok := ctx.Deadline(); ok {
				if err := p.deadlineError(h.key, now, next, deadline); err != nil {
					h.mu.Unlock()
					return ticket{}, err
				}
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

		select {
		case <-wake:
		case <-changed:
		case <-ctx.Done():
			return ticket{}, ctx.Err()
		}
	}
}

// tryStart starts a request of partition on h at now, if its next allowed
// start has come and a slot is free. h.mu must be held.
func (p *memoryPacer) tryStart(h *hostState, now instant, floor time.Duration, partition string) (ticket, bool) {
	if now < h.pol.nextAllowed(&h.pace, now, floor, partition) || h.inFlight >= h.pol.maxInFlight {
		return ticket{}, false
	}
	h.pol.start(&h.pace, now, floor, partition)
	h.inFlight++
	return ticket{start: now, h: h}, true
}

// observe implements [ticketPacer]: it ends t's request of partition with
// o, and says how that changed the key's backoff.
func (p *memoryPacer) observe(t ticket, partition string, o Outcome) Change {
	h := t.h
	if h == nil {
		return Change{}
	}
	now := p.clock.now()
	h.mu.Lock()
	if h.inFlight > 0 {
		h.inFlight--
	}
	change := h.pol.learn(&h.pace, t.start, now, partition, &o)
	until := h.pace.blockedUntil
	if h.pace.quotas != nil {
		until = max(until, h.pace.quotaUntil(partition))
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

// setEvents implements [eventPacer].
func (p *memoryPacer) setEvents(e emitter) { p.cfg.events = e }

// Stats implements [StatsPacer]. Keys come sorted.
func (p *memoryPacer) Stats(ctx context.Context) ([]KeyState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p.snapshot(), nil
}

// snapshot returns the state of every key the pacer holds, sorted by key,
// each with its own last Crawl-delay.
func (p *memoryPacer) snapshot() []KeyState {
	var hosts []*hostState
	for i := range p.shards {
		s := &p.shards[i]
		s.mu.Lock()
		for _, h := range s.hosts {
			hosts = append(hosts, h)
		}
		s.mu.Unlock()
	}

	out := make([]KeyState, 0, len(hosts))
	for _, h := range hosts {
		h.mu.Lock()
		now := p.clock.now()
		ks := p.stateLocked(h, now, h.pace.floor, "")
		ks.Next = p.clock.timeOf(h.pol.nextAllowed(&h.pace, now, h.pace.floor, ""))
		out = append(out, ks)
		h.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b KeyState) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// stateLocked returns h's state at now, with the pace of a request of
// partition with Crawl-delay floor; all but Next. h.mu must be held.
func (p *memoryPacer) stateLocked(h *hostState, now instant, floor time.Duration, partition string) KeyState {
	s := &h.pace
	return KeyState{
		Key:         h.key,
		Busy:        h.inFlight >= h.pol.maxInFlight || h.queued > 0,
		Pace:        max(h.pol.pace(s, now, floor), s.quotaSpread(now, partition)),
		Level:       s.levelAt(now),
		PausedUntil: p.clock.timeOf(max(s.blockedUntil, s.quotaUntil(partition))),
		Latency:     s.est,
		LastStart:   p.clock.timeOf(s.lastStart),
		InFlight:    h.inFlight,
		Waiting:     int(h.users.Load()),
		Requests:    s.requests,
		Backoffs:    s.backoffs,
		RetryAfters: s.retryAfters,
		Policy:      h.pol.policy,
	}
}

// sweepDue reports whether inserting a host should first sweep.
func (p *memoryPacer) sweepDue() bool {
	n := p.size.Load()
	return n >= p.sweepAt.Load() ||
		n > int64(p.cfg.maxHosts) && p.clock.now() >= instant(p.retryAt.Load())
}

// sweep evicts the hosts that have nothing left to enforce, shard by
// shard; if that leaves more than maxHosts, it also evicts hosts whose
// pause and pace are over, forgetting only a remembered backoff level.
// Hosts paused, waited on or busy are kept. It sets the size of the next
// sweep so that sweeping costs O(1) per insert, and, when the pacer is
// still over its bound, the time of the next: when a kept host may be
// free, but after at least four times this sweep's length, so that sweeps
// take a fifth of a core at most. It does nothing if another sweep made
// room meanwhile. It returns the keys evicted when anyone listens to
// events. The caller holds no lock.
func (p *memoryPacer) sweep() (evicted []string) {
	p.sweepMu.Lock()
	defer p.sweepMu.Unlock()
	if !p.sweepDue() {
		return nil
	}
	began := p.clock.now()
	evicted = p.evict(evicted, func(h *hostState, now instant) bool { return h.pol.idle(&h.pace, now) })
	if p.size.Load() > int64(p.cfg.maxHosts) {
		evicted = p.evict(evicted, func(h *hostState, now instant) bool { return h.pol.startable(&h.pace, now) })
	}
	now := p.clock.now()
	p.sweepAt.Store(max(int64(p.cfg.maxHosts), 2*p.size.Load()))
	next := instant(math.MaxInt64) // within the bound: only sweepAt matters
	if p.size.Load() > int64(p.cfg.maxHosts) {
		next = max(now.add(4*time.Duration(now-began)), p.freeAt(now))
	}
	p.retryAt.Store(int64(next))
	return evicted
}

// evict drops the hosts with no users and nothing in flight for which
// drop, called with the host's mu held, returns true, and appends their
// keys to evicted when anyone listens to events. The caller holds sweepMu.
func (p *memoryPacer) evict(evicted []string, drop func(h *hostState, now instant) bool) []string {
	for i := range p.shards {
		s := &p.shards[i]
		s.mu.Lock()
		now := p.clock.now()
		for key, h := range s.hosts {
			if h.users.Load() == 0 && p.forgettable(h, now, drop) {
				delete(s.hosts, key)
				p.size.Add(-1)
				if p.cfg.events.on() {
					evicted = append(evicted, key)
				}
			}
		}
		s.mu.Unlock()
	}
	return evicted
}

// freeAt returns the earliest instant at which a host with no users and
// nothing in flight may start again, and so be evicted; hosts busy now are
// counted as free a second from now. The caller holds sweepMu.
func (p *memoryPacer) freeAt(now instant) instant {
	at := now.add(time.Second)
	for i := range p.shards {
		s := &p.shards[i]
		s.mu.Lock()
		for _, h := range s.hosts {
			h.mu.Lock()
			if h.inFlight == 0 && h.users.Load() == 0 {
				at = min(at, h.pol.free(&h.pace, now))
			}
			h.mu.Unlock()
		}
		s.mu.Unlock()
	}
	return at
}

// forgettable reports whether h has nothing in flight and drop says it may
// go.
func (p *memoryPacer) forgettable(h *hostState, now instant, drop func(*hostState, instant) bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inFlight == 0 && drop(h, now)
}
