package polite

import (
	"math"
	"reflect"
	"time"
)

// None, given to a field of [PacingPolicy] or [Limits] that documents it,
// turns that part off (a zero delay, no jitter, no cap...).
const None = -1

// PacingPolicy is the delay policy that a [Pacer] runs, as the package
// documentation states it. [WithPacing] sets it for a transport. A zero
// field means its default; [None] turns the part off, where the field
// says so.
type PacingPolicy struct {
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
	// bodies of one key, all its bodies together: a body is read no
	// faster than the key's share allows, waiting within its request's
	// context, as Heritrix's maxPerHostBandwidthUsageKbSec does. It counts
	// the pages a program reads, not the transport's own robots.txt
	// fetches, and it is kept in each process, whatever the [Pacer]: a
	// fleet of N processes reads N times the cap. 0: no cap, the default.
	// None: no cap, for a [PacingRule] to lift the transport's.
	MaxBandwidth int64
}

// defaultPacing is the policy of a transport built with no [WithPacing]:
// the defaults that PacingPolicy's fields document.
var defaultPacing = PacingPolicy{
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

// WithPacing sets the pacing policy's fields that p sets (the non-zero
// ones); the others keep what earlier options gave them, or their
// defaults. So APIDefaults(), WithPacing(PacingPolicy{MaxInFlight: 64})
// keeps the API policy with 64 in flight. An invalid p (see
// [PacingPolicy.Validate]) is an error.
func WithPacing(p PacingPolicy) Option {
	return merging("WithPacing", p, func(c *config) *PacingPolicy { return &c.pacing })
}

// Validate reports a field that is negative but not None, a Jitter or
// LatencyFactor that is NaN or infinite, as a *ConfigError naming the field.
func (p PacingPolicy) Validate() error { return p.validate("PacingPolicy") }

// validate is Validate, its error naming option. It allocates only for
// an error: the transport validates the policies of WithPacingFunc on
// every request.
func (p PacingPolicy) validate(option string) error {
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
			return &ConfigError{Option: option, Field: f.name, Value: value, Reason: f.bad}
		}
	}
	return nil
}

// negative says why v, a field of PacingPolicy, is invalid: it is
// negative but not None. It returns "" for a valid v.
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

// Effective returns p with each zero field set to its default. Each field
// of the result is then its default, the value given, or None; it is what
// a Pacer is given. Effective is idempotent.
func (p PacingPolicy) Effective() PacingPolicy { return p.over(defaultPacing) }

// over returns base with the fields that p sets, the non-zero ones,
// replaced by p's.
func (p PacingPolicy) over(base PacingPolicy) PacingPolicy {
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

// delayPolicy returns the delay policy of p, an Effective policy, reading
// None as 0.
func (p PacingPolicy) delayPolicy() delayPolicy {
	return delayPolicy{
		baseDelay:     noneAsZero(p.BaseDelay),
		jitter:        noneAsZero(p.Jitter),
		latencyFactor: noneAsZero(p.LatencyFactor),
		maxDelay:      noneAsZero(p.MaxDelay),
		maxCrawlDelay: noneAsZero(p.MaxCrawlDelay),
		backoffBase:   noneAsZero(p.BackoffBase),
		maxBackoff:    noneAsZero(p.MaxBackoff),
		recoverAfter:  noneAsZero(p.RecoverAfter),
	}
}

// maxInFlight returns the MaxInFlight of p, an Effective policy, reading
// None as no cap.
func (p PacingPolicy) maxInFlight() int {
	if p.MaxInFlight == None {
		return math.MaxInt
	}
	return p.MaxInFlight
}

// bandwidth returns the MaxBandwidth of p in bytes per second, 0 for no
// cap.
func (p PacingPolicy) bandwidth() int64 { return max(p.MaxBandwidth, 0) }

// number is the type of a field of PacingPolicy.
type number interface{ ~int | ~int64 | ~float64 }

// noneAsZero returns v, or 0 for None.
func noneAsZero[T number](v T) T {
	if v == None {
		return 0
	}
	return v
}
