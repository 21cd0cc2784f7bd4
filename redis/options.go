package politeredis

import (
	"log/slog"
	"time"

	"github.com/polite-go/polite"
)

// A PacerOption configures the Pacers that [NewPacer] makes.
type PacerOption interface{ applyPacer(*options) error }

// A RobotsOption configures the robots stores that [NewRobotsStore] makes.
type RobotsOption interface{ applyRobots(*options) error }

// An Option configures Pacers, robots stores and Frontiers alike.
type Option interface {
	PacerOption
	RobotsOption
	FrontierOption
}

// The three kinds of option, each made of the function that applies it.
type (
	bothOption   func(*options) error
	pacerOption  func(*options) error
	robotsOption func(*options) error
)

func (f bothOption) applyPacer(o *options) error    { return f(o) }
func (f bothOption) applyRobots(o *options) error   { return f(o) }
func (f bothOption) applyFrontier(o *options) error { return f(o) }
func (f pacerOption) applyPacer(o *options) error   { return f(o) }
func (f robotsOption) applyRobots(o *options) error { return f(o) }

type options struct {
	prefix    string
	lease     time.Duration
	poll      time.Duration
	timeout   time.Duration
	probe     time.Duration
	logger    *slog.Logger // nil: silent
	failClose bool
	clock     func() time.Time // nil: the server's TIME
	claim     time.Duration
	turnLease time.Duration
}

// defaults returns the options that no Option changed.
func defaults() options {
	return options{prefix: "polite", lease: 10 * time.Second, poll: 50 * time.Millisecond,
		timeout: time.Second, probe: time.Second, claim: 10 * time.Second, turnLease: defaultTurnLease}
}

// apply applies opts, through the method of their kind, to the defaults,
// and panics with the error of the first that fails, a
// *polite.ConfigError.
func apply[O any](opts []O, applyOne func(O, *options) error) options {
	o := defaults()
	for _, opt := range opts {
		if err := applyOne(opt, &o); err != nil {
			panic(err)
		}
	}
	return o
}

// WithKeyPrefix sets the prefix of the Redis keys, "polite" by default.
// Pacers and robots stores that share state must use the same prefix.
func WithKeyPrefix(prefix string) Option {
	return bothOption(func(o *options) error {
		o.prefix = prefix
		return nil
	})
}

// WithLeaseDuration sets how long a Pacer's in-flight slot stays taken
// once its process stops renewing it, as when the process dies: 10s by
// default. The Pacer renews the leases of its requests in flight every
// third of d, in one pipeline to each server, until each request's
// response headers come (or for an hour at most), so d bounds how long a
// dead process holds a host's slots, not how long a request may take. A
// d that is not positive makes NewPacer panic with a
// [*polite.ConfigError].
func WithLeaseDuration(d time.Duration) PacerOption {
	return pacerOption(func(o *options) error {
		return positive("WithLeaseDuration", d, &o.lease)
	})
}

// WithPollInterval sets how often a request waiting for a free slot looks
// again, 50ms by default. A slot freed by this process wakes its waiters
// at once; one freed by another process is seen at the next look. A robots
// store waiting for another process's fetch looks first after d, then
// twice as long after each look, up to a second. A d that is not positive
// makes the constructor panic with a [*polite.ConfigError].
func WithPollInterval(d time.Duration) Option {
	return bothOption(func(o *options) error {
		return positive("WithPollInterval", d, &o.poll)
	})
}

// WithTimeout bounds each call to Redis, 1s by default; the request's
// context bounds it too. A call that fails or times out counts as Redis
// being unreachable; one that the request's context ends counts only after
// a tenth of d. A d that is not positive makes the constructor panic
// with a [*polite.ConfigError].
func WithTimeout(d time.Duration) Option {
	return bothOption(func(o *options) error {
		return positive("WithTimeout", d, &o.timeout)
	})
}

// positive sets *dst to d, the value of option name, if it is positive,
// and returns a *polite.ConfigError otherwise.
func positive(name string, d time.Duration, dst *time.Duration) error {
	if d <= 0 {
		return &polite.ConfigError{Option: "politeredis." + name, Value: d, Reason: "must be positive"}
	}
	*dst = d
	return nil
}

// WithLogger sets the logger that hears when Redis becomes unreachable,
// with the error that shows it and its cause (see the package
// documentation), and when it answers again, once each per outage. Nil,
// the default, logs nothing, as package polite's WithLogger.
func WithLogger(l *slog.Logger) Option {
	return bothOption(func(o *options) error {
		o.logger = l
		return nil
	})
}

// FailWhenUnreachable makes a Pacer's Acquire and a robots store's Load
// fail with an error naming Redis when Redis is unreachable, instead of
// pacing, or fetching robots.txt, in this process until Redis answers
// again. A Frontier, which has nothing to do without Redis, is the same
// with it or without.
func FailWhenUnreachable() Option {
	return bothOption(func(o *options) error {
		o.failClose = true
		return nil
	})
}

// WithClock makes the Pacer read the time from now instead of from Redis's
// TIME. It is for tests, whose clock is not the server's; the processes of
// a fleet must share the server's clock.
func WithClock(now func() time.Time) PacerOption {
	return pacerOption(func(o *options) error {
		o.clock = now
		return nil
	})
}

// WithFetchClaim sets how long a robots store's claim to fetch an origin's
// robots.txt outlives the process that holds it, 10s by default: the
// process renews it while it fetches, so d bounds how long the others wait
// when that process dies, not how long a fetch may take. A d that is not
// positive makes NewRobotsStore panic with a [*polite.ConfigError].
func WithFetchClaim(d time.Duration) RobotsOption {
	return robotsOption(func(o *options) error {
		return positive("WithFetchClaim", d, &o.claim)
	})
}
