package politeredis

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/polite-go/polite"
)

// An Option configures the Pacers that [NewPacer] makes and the robots
// stores that [NewRobotsStore] makes; each option says which it applies to
// when not both.
type Option func(*options)

type options struct {
	prefix    string
	lease     time.Duration
	poll      time.Duration
	timeout   time.Duration
	probe     time.Duration
	logger    *slog.Logger
	failClose bool
	clock     func() time.Time
	events    func(polite.Event)
	claim     time.Duration
}

// defaults returns the options that no Option changed.
func defaults() options {
	return options{prefix: "polite", lease: 2 * time.Minute, poll: 50 * time.Millisecond,
		timeout: time.Second, probe: time.Second, logger: slog.Default(), claim: 10 * time.Second}
}

// WithKeyPrefix sets the prefix of the Redis keys, "polite" by default.
// Pacers and robots stores that share state must use the same prefix.
func WithKeyPrefix(prefix string) Option {
	return func(o *options) { o.prefix = prefix }
}

// WithLeaseDuration sets how long a Pacer's in-flight slot stays taken
// when its request is never released, as when its process dies: 2 minutes
// by default. A request that outlives its lease no longer counts against
// MaxInFlight, so d should exceed the longest time a request takes to its
// response headers.
// It panics if d is not positive.
func WithLeaseDuration(d time.Duration) Option {
	positive("WithLeaseDuration", d)
	return func(o *options) { o.lease = d }
}

// WithPollInterval sets how often a request waiting for a free slot looks
// again, 50ms by default. A slot freed by this process wakes its waiters
// at once; one freed by another process is seen at the next look. A robots
// store waiting for another process's fetch looks first after d, then
// twice as long after each look, up to a second.
// It panics if d is not positive.
func WithPollInterval(d time.Duration) Option {
	positive("WithPollInterval", d)
	return func(o *options) { o.poll = d }
}

// WithTimeout bounds each call to Redis, 1s by default; the request's
// context bounds it too. A call that fails or times out counts as Redis
// being unreachable.
// It panics if d is not positive.
func WithTimeout(d time.Duration) Option {
	positive("WithTimeout", d)
	return func(o *options) { o.timeout = d }
}

// positive panics unless d, the argument of option name, is positive.
func positive(name string, d time.Duration) {
	if d <= 0 {
		panic(fmt.Sprintf("politeredis: %s(%v): must be > 0", name, d))
	}
}

// WithLogger sets the logger that hears when Redis becomes unreachable and
// when it answers again, once each per outage; [slog.Default] by default,
// nil for silence.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// FailWhenUnreachable makes a Pacer's Acquire and a robots store's Load
// fail with an error naming Redis when Redis is unreachable, instead of
// pacing, or fetching robots.txt, in this process until Redis answers
// again.
func FailWhenUnreachable() Option {
	return func(o *options) { o.failClose = true }
}

// WithEvents makes a Pacer call hook with an [polite.EventBackoff] when a request's
// outcome raises its host's backoff level, and an
// [polite.EventBackoffCleared] when it brings the level back to 0: the
// changes that this process's releases made, in the fleet's shared state.
// hook is called synchronously, with no lock held.
func WithEvents(hook func(polite.Event)) Option {
	return func(o *options) { o.events = hook }
}

// WithClock makes the Pacer read the time from now instead of from Redis's
// TIME. It is for tests, whose clock is not the server's; the processes of
// a fleet must share the server's clock.
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.clock = now }
}

// WithFetchClaim sets how long a robots store's claim to fetch an origin's
// robots.txt outlives the process that holds it, 10s by default: the
// process renews it while it fetches, so d bounds how long the others wait
// when that process dies, not how long a fetch may take.
// It panics if d is not positive.
func WithFetchClaim(d time.Duration) Option {
	positive("WithFetchClaim", d)
	return func(o *options) { o.claim = d }
}
