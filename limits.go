package polite

// Limits bounds what a [PoliteTransport] keeps in memory. Each bound is
// soft: past it, what has nothing left to enforce is forgotten first, but
// never the state of a key that is backed off, waited on or has a request
// in flight, nor a robots.txt being fetched, so a bound is exceeded rather
// than forget a backoff. A zero field means its default.
type Limits struct {
	// MaxKeys bounds the pacing keys whose state is kept; 0: 10,000.
	// Past it, idle keys are forgotten, then keys whose pause and pace
	// are over, forgetting a remembered backoff level.
	MaxKeys int
	// MaxOrigins bounds the origins whose robots.txt is cached; 0:
	// 10,000. Past it, expired files are dropped first, then others at
	// random.
	MaxOrigins int
	// RobotsCacheBytes is the robots.txt cache's byte budget; 0: 256 MiB.
	// It evicts large or hostile files rather than grow the heap. Each
	// file counts as the bound it gives of what it keeps parsed and
	// compiled ([github.com/polite-go/polite/robotstxt.File.Cost]), plus
	// 2 KiB: a few KiB for a typical file, 2 to 60 times the size of a
	// file of 500 KiB by the rules it holds. Past the budget, expired
	// files go first, then files at random.
	RobotsCacheBytes int64
	// MaxResolved bounds the host names whose address [WithPacingKeyIP]
	// keeps; 0: 10,000. Past it, expired addresses are dropped first,
	// then others at random; a name dropped is looked up again.
	MaxResolved int
}

// defaultLimits are the bounds of a transport built with no [WithLimits].
var defaultLimits = Limits{MaxKeys: 10_000, MaxOrigins: 10_000, RobotsCacheBytes: 256 << 20, MaxResolved: 10_000}

// WithLimits sets the bounds that l sets (the non-zero ones); the others
// keep what earlier options gave them, or their defaults. A negative bound
// is an error.
func WithLimits(l Limits) Option {
	return optionFunc(func(c *config) error {
		if err := l.validate("WithLimits"); err != nil {
			return err
		}
		c.limits = l.over(c.limits)
		return nil
	})
}

// validate returns a *ConfigError naming option and the first negative
// field of l, or nil.
func (l Limits) validate(option string) error {
	bad := func(field string, v any) error {
		return &ConfigError{Option: option, Field: field, Value: v, Reason: "must not be negative"}
	}
	switch {
	case l.MaxKeys < 0:
		return bad("MaxKeys", l.MaxKeys)
	case l.MaxOrigins < 0:
		return bad("MaxOrigins", l.MaxOrigins)
	case l.RobotsCacheBytes < 0:
		return bad("RobotsCacheBytes", l.RobotsCacheBytes)
	case l.MaxResolved < 0:
		return bad("MaxResolved", l.MaxResolved)
	}
	return nil
}

// over returns base with the fields that l sets, the non-zero ones,
// replaced by l's.
func (l Limits) over(base Limits) Limits {
	setNonZero(&base.MaxKeys, l.MaxKeys)
	setNonZero(&base.MaxOrigins, l.MaxOrigins)
	setNonZero(&base.RobotsCacheBytes, l.RobotsCacheBytes)
	setNonZero(&base.MaxResolved, l.MaxResolved)
	return base
}

// setNonZero sets *dst to v unless v is its type's zero value: a field
// that an option leaves zero keeps what it had.
func setNonZero[T comparable](dst *T, v T) {
	var zero T
	if v != zero {
		*dst = v
	}
}
