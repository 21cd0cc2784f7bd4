package polite

import (
	"context"
	"time"
)

// A Pacer decides when requests to a pacing key may start, by the delay
// policy of the package documentation, and learns from how they ended.
// The transport's own Pacer keeps its state in memory ([NewMemoryPacer]);
// [WithPacer] plugs in another, such as one that a fleet of processes
// shares. A Pacer must be safe for concurrent use.
//
// A Pacer may also be a [ReadyPacer] and a [StatsPacer]; the transport
// finds out by type assertion, as net/http finds a ResponseWriter's
// optional methods. Without them, [PoliteTransport.Ready] and
// [PoliteTransport.Check] know nothing of the key's pace, a request that
// waits for a robots.txt fetch does not fail at once when its deadline
// cannot be met, and [PoliteTransport.Stats] shows no pacing state.
type Pacer interface {
	// Acquire blocks until a request to key may start, or ctx ends.
	// partition is the request's quota partition (see
	// [WithQuotaPartition]; "" without one): the rate-limit quotas that
	// the responses to requests of that partition reported hold it, and
	// the others do not. crawlDelay is the robots.txt Crawl-delay of the
	// request's group, not clamped; 0 when there is none. When ctx's
	// deadline falls before the earliest start, Acquire fails at once with
	// a [*DeadlineError]; when ctx ends while it waits, it returns
	// ctx.Err() and holds nothing.
	Acquire(ctx context.Context, key, partition string, crawlDelay time.Duration) (Lease, error)
}

// A Lease is a started request's hold on one of its key's in-flight slots.
type Lease interface {
	// Release reports how the request ended, frees its slot, and says what
	// that changed in the key's backoff, so that the transport can report
	// it. The Outcome's Quota is learned for the partition the request was
	// acquired with, and the resource the Quota names. The transport calls it exactly once, when the response headers
	// or an error have come. A Pacer that cannot learn the outcome (its
	// store is out of reach) returns the zero Change.
	Release(Outcome) Change
}

// A Change is what a [Lease]'s release did to its key's backoff, as the
// key's state stood after it: the shared state, for a Pacer that a fleet
// shares.
type Change struct {
	// Raised reports that the outcome raised the backoff level.
	Raised bool
	// Cleared reports that the level came back to 0, after successes or a
	// quiet spell.
	Cleared bool
	// Level is the backoff level after the release.
	Level int
	// Pause is how long from the release no request to the key of the
	// released request's partition may start (a backoff pause, a
	// Retry-After, an exhausted rate limit of that partition); 0 when it
	// is not paused.
	Pause time.Duration
}

// A ReadyPacer can say when a request could start without reserving
// anything, for [PoliteTransport.Ready], the pace of
// [PoliteTransport.Check], and the deadline of a request that waits for a
// robots.txt fetch.
type ReadyPacer interface {
	Pacer
	// Ready returns key's state as a request of the quota partition with
	// the given Crawl-delay, made now, would find it: KeyState.Next is its
	// earliest start, counting the requests queued ahead of it, and
	// KeyState.Pace its pace. A key the Pacer knows nothing of has a zero
	// Next. Ready fails only when the Pacer's store does, or ctx ends.
	Ready(ctx context.Context, key, partition string, crawlDelay time.Duration) (KeyState, error)
}

// A StatsPacer reports the state of the keys it keeps, for
// [PoliteTransport.Stats].
type StatsPacer interface {
	Pacer
	// Stats returns the state of every key the Pacer keeps for this
	// process (a Pacer that a fleet shares: the keys this process used
	// lately, read from the shared state), each with its own last
	// Crawl-delay. It fails only when the Pacer's store does, or ctx ends.
	Stats(ctx context.Context) ([]KeyState, error)
}

// KeyState is what a [Pacer] knows of one pacing key.
type KeyState struct {
	// Key is the pacing key: by default the host name in canonical form
	// (see [PacingKeyHost]).
	Key string
	// Next is the earliest start that the key's pace and backoff allow a
	// request made now, counting the requests queued ahead of it; a time
	// not after now means the key is ready, the zero time that the Pacer
	// knows nothing of it.
	Next time.Time
	// Busy reports that the key has all its requests in flight, or
	// requests waiting for their turn: a request would queue behind them,
	// however early Next is.
	Busy bool
	// Pace is the least gap between two starts now, before jitter; from
	// Ready, at least the spread of the partition's low quota.
	Pace time.Duration
	// Level is the backoff level: the adaptive part of Pace is doubled
	// this many times.
	Level int
	// PausedUntil is the end of the key's pause (backoff, Retry-After, an
	// exhausted rate limit of the partition asked about; from Stats, of
	// the partition ""); zero or past when it is not paused.
	PausedUntil time.Time
	// Latency is the smoothed time to response headers.
	Latency time.Duration
	// LastStart is when the last request started.
	LastStart time.Time
	// InFlight counts requests started whose response headers have not
	// come.
	InFlight int
	// Waiting counts requests waiting for their turn in this process.
	Waiting int
	// Requests counts requests started, robots.txt fetches included.
	Requests uint64
	// Backoffs counts the times the level went up.
	Backoffs uint64
	// RetryAfters counts backoff signals that carried a Retry-After.
	RetryAfters uint64
	// Policy is the policy in force for the key, Effective: the
	// transport's, or the one a rule or [WithPacingFunc] gives the key.
	Policy PacingPolicy
}

// NewMemoryPacer returns the transport's own in-memory Pacer for the
// policies ps, keeping state for at most maxKeys keys (a soft bound; 0:
// 10,000). It runs ps.Default.Effective(), so that
// NewMemoryPacer(Policies{}, 0) paces by the defaults, and for a key that
// ps.Override gives a policy of its own, that policy ([Policies.For]),
// asked when the pacer first keeps the key's state and kept with it. An
// invalid ps.Default (see [PacingPolicy.Validate]) or a negative maxKeys
// is a [*ConfigError]. It is what a transport uses without [WithPacer]; a
// Pacer of a fleet may use it as its fallback when its shared store is
// out of reach. It is a [ReadyPacer] and a [StatsPacer].
func NewMemoryPacer(ps Policies, maxKeys int) (Pacer, error) {
	if err := ps.Default.validate("NewMemoryPacer"); err != nil {
		return nil, err
	}
	if maxKeys < 0 {
		return nil, &ConfigError{Option: "NewMemoryPacer", Value: maxKeys, Reason: "maxKeys must not be negative"}
	}
	return newMemoryPacer(memoryPacerConfig(ps, maxKeys)), nil
}

// memoryPacerConfig returns the configuration of an in-memory pacer for
// ps, whose Default is valid, that keeps at most maxKeys keys (0: the
// default).
func memoryPacerConfig(ps Policies, maxKeys int) pacerConfig {
	if maxKeys == 0 {
		maxKeys = defaultLimits.MaxKeys
	}
	ps.Default = ps.Default.Effective()
	return pacerConfig{policy: ps.Default.delayPolicy(), maxInFlight: ps.Default.maxInFlight(), policies: ps, maxHosts: maxKeys}
}

// WithPacer makes the transport pace requests with the Pacer that
// newPacer returns for the transport's policies, instead of its own. The
// [Policies] newPacer is given have the [PacingPolicy.Effective] policy
// of the transport as their Default (each field its default, the value an
// option gave, or [None]), and an Override when [WithPacingRules] or
// [WithPacingFunc] give some keys their own; the Pacer must run, for each
// key, the policy that [Policies.For] says. The transport's events report
// what the Pacer's releases change; Ready, Check and Stats report its
// state when it is a [ReadyPacer] and a [StatsPacer]. Nil is an error,
// and so is a nil Pacer returned: New panics with a [*ConfigError].
func WithPacer(newPacer func(Policies) Pacer) Option {
	return optionFunc(func(c *config) error {
		if newPacer == nil {
			return &ConfigError{Option: "WithPacer", Reason: "must not be nil"}
		}
		c.newPacer = newPacer
		return nil
	})
}

// The transport's Pacer, with what it found by type assertion.
type pacing struct {
	Pacer
	ticketPacer             // how the transport acquires and releases through the Pacer
	ready       ReadyPacer  // nil when the Pacer is not one
	stats       StatsPacer  // likewise
	robots      robotsPacer // nil when the Pacer does not keep keys for a robots.txt fetch's Crawl-delay
}

// ticketPacer is a Pacer's Acquire and Release with the request's hold
// in a ticket, which the transport keeps by value: the in-memory pacer
// holds it there without allocating a Lease, and leases holds another
// Pacer's Lease there.
type ticketPacer interface {
	acquire(ctx context.Context, key, partition string, crawlDelay time.Duration) (ticket, error)
	// observe releases t, acquired for partition, with o.
	observe(t ticket, partition string, o Outcome) Change
}

// leases is a ticketPacer through a Pacer's Acquire and its Lease's
// Release.
type leases struct{ p Pacer }

func (l leases) acquire(ctx context.Context, key, partition string, crawlDelay time.Duration) (ticket, error) {
	lease, err := l.p.Acquire(ctx, key, partition, crawlDelay)
	return ticket{lease: lease}, err
}

func (leases) observe(t ticket, _ string, o Outcome) Change {
	if t.lease == nil {
		return Change{}
	}
	return t.lease.Release(o)
}

// robotsPacer is a Pacer that forgets idle keys, and so must be told that
// a robots.txt fetch, whose file may ask for a Crawl-delay, started on a
// key (fetchingRobots) and what the file asked for (fetchedRobots), lest
// it forget the key before that Crawl-delay has passed.
type robotsPacer interface {
	fetchingRobots(t ticket)
	fetchedRobots(t ticket, crawlDelay time.Duration)
}

// eventPacer is a Pacer that reports events of its own (the in-memory
// pacer's evictions) through the transport's emitter.
type eventPacer interface{ setEvents(emitter) }

// newPacing returns the transport's pacing through p.
func newPacing(p Pacer, events emitter) pacing {
	pc := pacing{Pacer: p}
	var ok bool
	if pc.ticketPacer, ok = p.(ticketPacer); !ok {
		pc.ticketPacer = leases{p}
	}
	pc.ready, _ = p.(ReadyPacer)
	pc.stats, _ = p.(StatsPacer)
	pc.robots, _ = p.(robotsPacer)
	if e, ok := p.(eventPacer); ok {
		e.setEvents(events)
	}
	return pc
}

// A ticket is a request's admission: it holds a slot of its key until
// released. Its quota partition is not in it but given again at the
// release: the compiler keeps a struct of four words or fewer in
// registers, and RoundTrip passes the ticket through several calls.
type ticket struct {
	start instant
	h     *hostState // the in-memory pacer's
	lease Lease      // another Pacer's
}

// Acquire implements [Pacer].
func (p *memoryPacer) Acquire(ctx context.Context, key, partition string, crawlDelay time.Duration) (Lease, error) {
	t, err := p.acquire(ctx, key, partition, crawlDelay)
	if err != nil {
		return nil, err
	}
	return &memoryLease{p: p, t: t, partition: partition}, nil
}

// memoryLease is a memoryPacer's Lease, for callers of the exported API;
// the transport itself holds tickets, which cost no allocation.
type memoryLease struct {
	p         *memoryPacer
	t         ticket
	partition string
}

// Release implements [Lease].
func (l *memoryLease) Release(o Outcome) Change { return l.p.observe(l.t, l.partition, o) }
