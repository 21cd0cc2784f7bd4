package pace

import (
	"math"
	"reflect"
	"time"
)

// None, given to a field of [Policy] that documents it, turns that part of
// the policy off (a zero delay, no jitter, no cap...).
const None = -1

// Policy is the delay policy that a [Pacer] runs, as the package
// documentation states it. A zero field means its default; [None] turns a
// part off, where the field says so. [Policy.Effective] gives every field
// its value in force, which is what a Pacer is given.
type Policy struct {
	// BaseDelay is the least time between the starts of two requests to
	// one key. 0: 1s, StormCrawler's default and the W3C's "at least 1s
	// between each query" (Nutch uses 5s, Heritrix at least 3s). None: no
	// base delay; robots.txt, Crawl-delay, latency and backoff still
	// apply.
	BaseDelay time.Duration
	// Jitter is the upward jitter factor J: each gap is the pace times
	// 1+J·U, with U uniform in [0,1), so the pace stays a minimum. 0: 0.5,
	// so that keys paused together do not resume in lockstep. None: no
	// jitter.
	Jitter float64
	// LatencyFactor is how many times the server's smoothed time to
	// response headers the pace is at least. 0: 2, which keeps a server at
	// most half busy with this client (Scrapy AutoThrottle at target
	// concurrency 0.5). None: latency pacing off, so that with BaseDelay
	// None nothing paces a key until the server signals.
	LatencyFactor float64
	// MaxDelay caps the adaptive part of the pace, the base delay or
	// latency times the backoff factor; it does not cap the base delay,
	// Crawl-delay, Retry-After or backoff pauses. 0: 60s, Scrapy
	// AutoThrottle's AUTOTHROTTLE_MAX_DELAY. None: the adaptive part is
	// capped at 0.
	MaxDelay time.Duration
	// MaxCrawlDelay is the longest robots.txt Crawl-delay honoured; a
	// longer one is clamped to it, as Heritrix does. 0: 60s, since a
	// "Crawl-delay: 86400" would stall a host for a day. None: Crawl-delay
	// is ignored.
	MaxCrawlDelay time.Duration
	// BackoffBase is the pause after the first backoff signal (a 429, a
	// 5xx but 501 and 505, a timeout or a reset connection), doubled with
	// each level up to MaxBackoff and jittered upward. A Retry-After is a
	// floor on the pause. 0: 5s, Nutch's fetcher.exceptions.per.queue.delay,
	// doubled per incident. None: no pause of its own, so the server's
	// Retry-After is the wait.
	BackoffBase time.Duration
	// MaxBackoff caps the pauses computed from BackoffBase. 0: 10m. None:
	// capped at 0, so that only a Retry-After or a rate limit pauses a key.
	MaxBackoff time.Duration
	// MaxInFlight is how many requests to one key may be in flight at
	// once; a request counts until its response headers arrive. 0: 1, the
	// Heritrix, Nutch and StormCrawler default. None: no cap.
	MaxInFlight int
	// RecoverAfter is how many successes, each started after the last
	// rise of the backoff level, lower it by one. 0: 5, so that a crawler
	// comes back to full pace slowly after an incident. None: successes
	// never lower it; only 30 minutes without a signal forget it.
	RecoverAfter int
	// MaxBandwidth caps the bytes per second read from the response
	// bodies of one key, all its bodies together, as Heritrix's
	// maxPerHostBandwidthUsageKbSec does. A Pacer does not run it: the
	// transport that reads the bodies does, in each process, whatever the
	// Pacer. 0: no cap, the default. None: no cap, for a key's own policy
	// to lift a cap that the default policy sets.
	MaxBandwidth int64
}

// defaults is the policy that Effective gives the zero fields: the
// defaults that Policy's fields document.
var defaults = Policy{
	BaseDelay:     time.Second,
	Jitter:        0.5,
	LatencyFactor: 2,
	MaxDelay:      time.Minute,
	MaxCrawlDelay: time.Minute,
	BackoffBase:   5 * time.Second,
	MaxBackoff:    10 * time.Minute,
	MaxInFlight:   1,
	RecoverAfter:  5,
}

// Effective returns p with each zero field set to its default. Each field
// of the result is then its default, the value given, or None; it is what
// a Pacer is given. Effective is idempotent.
func (p Policy) Effective() Policy { return p.Over(defaults) }

// Over returns base with the fields that p sets, the non-zero ones,
// replaced by p's: a key's own policy over the default, or an option's
// policy over what earlier options set.
func (p Policy) Over(base Policy) Policy {
	setNonZero(&base.BaseDelay, p.BaseDelay)
	setNonZero(&base.Jitter, p.Jitter)
	setNonZero(&base.LatencyFactor, p.LatencyFactor)
	setNonZero(&base.MaxDelay, p.MaxDelay)
	setNonZero(&base.MaxCrawlDelay, p.MaxCrawlDelay)
	setNonZero(&base.BackoffBase, p.BackoffBase)
	setNonZero(&base.MaxBackoff, p.MaxBackoff)
	setNonZero(&base.MaxInFlight, p.MaxInFlight)
	setNonZero(&base.RecoverAfter, p.RecoverAfter)
	setNonZero(&base.MaxBandwidth, p.MaxBandwidth)
	return base
}

// setNonZero sets *dst to v unless v is 0: a field left zero keeps what it
// had.
func setNonZero[T comparable](dst *T, v T) {
	var zero T
	if v != zero {
		*dst = v
	}
}

// Validate reports the first field of p that is negative but not None, or
// a Jitter or LatencyFactor that is NaN or infinite, as a [*PolicyError].
// It allocates only for an error.
func (p Policy) Validate() error {
	for _, f := range [...]struct{ name, bad string }{
		{"BaseDelay", negative(p.BaseDelay)},
		{"Jitter", badFactor(p.Jitter)},
		{"LatencyFactor", badFactor(p.LatencyFactor)},
		{"MaxDelay", negative(p.MaxDelay)},
		{"MaxCrawlDelay", negative(p.MaxCrawlDelay)},
		{"BackoffBase", negative(p.BackoffBase)},
		{"MaxBackoff", negative(p.MaxBackoff)},
		{"MaxInFlight", negative(p.MaxInFlight)},
		{"RecoverAfter", negative(p.RecoverAfter)},
		{"MaxBandwidth", negative(p.MaxBandwidth)},
	} {
		if f.bad != "" {
			value := reflect.ValueOf(p).FieldByName(f.name).Interface()
			return &PolicyError{Field: f.name, Value: value, Reason: f.bad}
		}
	}
	return nil
}

// negative says why v, a field of Policy, is invalid: it is negative but
// not None. It returns "" for a valid v.
func negative[T number](v T) string {
	if v >= 0 || v == None {
		return ""
	}
	return "must not be negative (None turns it off)"
}

// badFactor is negative for a factor, which must be finite too.
func badFactor(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "must be finite"
	}
	return negative(v)
}

// number is the type of a field of Policy.
type number interface{ ~int | ~int64 | ~float64 }

// Value returns v, a field of an Effective Policy, as a Pacer runs it: v,
// or 0 for None. A Pacer reads a field's 0 as the part it sets turned
// off: no delay, no jitter, no latency pacing, the adaptive part or the
// backoff pauses capped at 0, Crawl-delay ignored, no bandwidth cap; and
// for MaxInFlight, no cap on the requests in flight, and for
// RecoverAfter, successes that never lower the level. It is the one place
// where None is read, for every Pacer, in memory or not.
func Value[T int | int64 | float64 | time.Duration](v T) T {
	return max(v, 0) // None is -1, and every other valid value at least 0
}
