package politeredis

import "time"

// A FrontierOption configures the Frontiers that [NewFrontier] makes:
// [WithTurnLease], or an [Option] ([WithKeyPrefix], [WithTimeout],
// [WithPollInterval], [WithLogger]).
type FrontierOption interface{ applyFrontier(*options) error }

// frontierOption is a FrontierOption made of the function that applies
// it.
type frontierOption func(*options) error

func (f frontierOption) applyFrontier(o *options) error { return f(o) }

// WithTurnLease sets how long a URL that a Frontier handed out stays
// leased to its process once the process stops renewing the lease, as
// when it dies: 10s by default. The Frontier renews the leases of its
// turns every third of d, in one pipeline to each server, until each turn
// ends (or for an hour at most); when a lease runs out, the URL goes back
// to the head of its host's queue and is handed out again. A d that is
// not positive makes NewFrontier panic with a [*polite.ConfigError].
func WithTurnLease(d time.Duration) FrontierOption {
	return frontierOption(func(o *options) error {
		return positive("WithTurnLease", d, &o.turnLease)
	})
}
