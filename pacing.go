package polite

import (
	"context"
	"time"
)

// A Pacer decides when requests to a pacing key may start, by the delay
// policy of the package documentation, and learns from how they ended.
// The transport's own Pacer keeps its state in memory; [WithPacer] plugs in
// another, such as one that a fleet of processes shares. A Pacer must be
// safe for concurrent use.
type Pacer interface {
	// Acquire blocks until a request to key may start, or ctx ends.
	// crawlDelay is the robots.txt Crawl-delay of the request's group, not
	// clamped; 0 when there is none. When ctx's deadline falls before the
	// earliest start, Acquire fails at once with a [*DeadlineError]; when
	// ctx ends while it waits, it returns ctx.Err() and holds nothing.
	Acquire(ctx context.Context, key string, crawlDelay time.Duration) (Lease, error)
}

// A Lease is a started request's hold on one of its key's in-flight slots.
type Lease interface {
	// Release reports how the request ended and frees its slot. The
	// transport calls it exactly once, when the response headers or an
	// error have come.
	Release(Outcome)
}

// NewMemoryPacer returns the transport's own in-memory Pacer for policy
// p, keeping state for at most maxKeys keys (a soft bound; 0: 10,000). It
// runs p.Effective(), so that NewMemoryPacer(PacingPolicy{}, 0) paces by
// the defaults. An invalid p (see [PacingPolicy.Validate]) or a negative
// maxKeys is a [*ConfigError]. It is what a transport uses without
// [WithPacer]; a Pacer of a fleet may use it as its fallback when its
// shared store is out of reach.
func NewMemoryPacer(p PacingPolicy, maxKeys int) (Pacer, error) {
	if err := p.validate("NewMemoryPacer"); err != nil {
		return nil, err
	}
	if maxKeys < 0 {
		return nil, &ConfigError{Option: "NewMemoryPacer", Value: maxKeys, Reason: "maxKeys must not be negative"}
	}
	return newMemoryPacer(memoryPacerConfig(p.Effective(), maxKeys, nil)), nil
}

// memoryPacerConfig returns the configuration of an in-memory pacer for
// p, an Effective policy, that keeps at most maxKeys keys (0: the
// default) and delivers its events to events.
func memoryPacerConfig(p PacingPolicy, maxKeys int, events emitter) pacerConfig {
	if maxKeys == 0 {
		maxKeys = defaultLimits.MaxKeys
	}
	return pacerConfig{policy: p.delayPolicy(), maxInFlight: p.maxInFlight(), maxHosts: maxKeys, events: events}
}

// Acquire implements [Pacer].
func (p *memoryPacer) Acquire(ctx context.Context, key string, crawlDelay time.Duration) (Lease, error) {
	t, err := p.acquire(ctx, key, crawlDelay)
	if err != nil {
		return nil, err
	}
	return &memoryLease{p: p, t: t}, nil
}

// memoryLease is a memoryPacer's Lease, for callers of the exported API;
// the transport itself holds tickets, which cost no allocation.
type memoryLease struct {
	p *memoryPacer
	t ticket
}

// Release implements [Lease].
func (l *memoryLease) Release(o Outcome) { l.p.observe(l.t, o) }

// WithPacer makes the transport pace requests with the Pacer that
// newPacer returns for the transport's policy, instead of its own. The
// policy newPacer is given is the [PacingPolicy.Effective] one: each field
// its default, the value an option gave, or [None]. The transport's Stats,
// Check and Ready then know nothing of pacing state, unless the Pacer is
// NewMemoryPacer's. Nil is an error, and so is a nil Pacer returned: New
// panics with a [*ConfigError].
func WithPacer(newPacer func(PacingPolicy) Pacer) Option {
	return optionFunc(func(c *config) error {
		if newPacer == nil {
			return &ConfigError{Option: "WithPacer", Reason: "must not be nil"}
		}
		c.newPacer = newPacer
		return nil
	})
}

// leasePacer adapts a Pacer of WithPacer to the transport's pacer.
type leasePacer struct{ p Pacer }

func (lp leasePacer) acquire(ctx context.Context, key string, floor time.Duration) (ticket, error) {
	l, err := lp.p.Acquire(ctx, key, floor)
	return ticket{lease: l}, err
}

func (lp leasePacer) observe(t ticket, o Outcome) {
	if t.lease != nil {
		t.lease.Release(o)
	}
}

func (leasePacer) snapshot() []hostSnapshot                              { return nil }
func (leasePacer) paceOf(string, time.Duration) time.Duration            { return 0 }
func (leasePacer) tooLate(context.Context, string) error                 { return nil }
func (leasePacer) ready(string, time.Duration) (at time.Time, busy bool) { return time.Time{}, false }
func (leasePacer) fetchingRobots(ticket)                                 {}
func (leasePacer) fetchedRobots(ticket, time.Duration)                   {}
