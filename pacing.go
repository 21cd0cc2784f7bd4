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

// PacingPolicy is the delay policy, as the options set it, that a [Pacer]
// runs; the package documentation states the policy.
type PacingPolicy struct {
	BaseDelay     time.Duration // WithBaseDelay
	Jitter        float64       // WithJitter
	LatencyFactor float64       // WithLatencyFactor
	MaxDelay      time.Duration // WithMaxDelay
	MaxCrawlDelay time.Duration // WithMaxCrawlDelay
	BackoffBase   time.Duration // WithBackoff's base
	MaxBackoff    time.Duration // WithBackoff's max
	MaxInFlight   int           // WithMaxInFlight
}

// DefaultPacingPolicy returns the policy of a transport built with no
// option.
func DefaultPacingPolicy() PacingPolicy {
	return pacingPolicyOf(defaultConfig())
}

func pacingPolicyOf(c config) PacingPolicy {
	p := c.policy
	return PacingPolicy{BaseDelay: p.baseDelay, Jitter: p.jitter, LatencyFactor: p.latencyFactor,
		MaxDelay: p.maxDelay, MaxCrawlDelay: p.maxCrawlDelay, BackoffBase: p.backoffBase, MaxBackoff: p.maxBackoff,
		MaxInFlight: c.maxInFlight}
}

// NewMemoryPacer returns the transport's own in-memory Pacer for policy p,
// whose values must be valid as the options define them, keeping state for
// at most maxKeys keys (a soft bound; 0: 10,000). It is what a transport
// uses without [WithPacer]; a Pacer of a fleet may use it as its fallback
// when its shared store is out of reach.
func NewMemoryPacer(p PacingPolicy, maxKeys int) Pacer {
	if maxKeys == 0 {
		maxKeys = defaultLimits.MaxKeys
	}
	return newMemoryPacer(pacerConfig{
		policy: delayPolicy{baseDelay: p.BaseDelay, jitter: p.Jitter, latencyFactor: p.LatencyFactor,
			maxDelay: p.MaxDelay, maxCrawlDelay: p.MaxCrawlDelay, backoffBase: p.BackoffBase, maxBackoff: p.MaxBackoff},
		maxInFlight: p.MaxInFlight,
		maxHosts:    maxKeys,
	})
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
// transport's Stats, Check and Ready then know nothing of pacing state,
// unless the Pacer is NewMemoryPacer's. Nil is an error, and so is a nil
// Pacer returned: New panics with a [*ConfigError].
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
