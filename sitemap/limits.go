package sitemap

// Limits bound what a [Reader] reads of one file and what a [Walker]
// fetches in one walk. A zero field takes its default.
type Limits struct {
	// MaxURLs is the most entries a Reader yields from one file: 50,000 by
	// default, the protocol's limit. Past it, Next returns an error that
	// matches ErrTooMany.
	MaxURLs int
	// MaxBytes is the most bytes read of one file, counted both as they
	// arrive and after gzip decompression: 52,428,800 (50 MiB) by default,
	// the protocol's limit. Past it, Next returns an error that matches
	// ErrTooLarge, so a gzip bomb stops there.
	MaxBytes int64
	// MaxDepth is how many levels of sitemap index a Walker follows below
	// the sitemaps it starts from: 2 by default, one more than the
	// protocol allows, since indexes that list indexes are found on the
	// web. A negative value follows none.
	MaxDepth int
	// MaxSitemaps is the most sitemaps a Walker fetches in one walk, those
	// it starts from included: 1,000 by default.
	MaxSitemaps int
}

// The defaults of Limits.
const (
	defaultMaxURLs     = 50_000
	defaultMaxBytes    = 50 << 20
	defaultMaxDepth    = 2
	defaultMaxSitemaps = 1_000
)

// withDefaults returns l with its zero fields set to their defaults.
func (l Limits) withDefaults() Limits {
	if l.MaxURLs <= 0 {
		l.MaxURLs = defaultMaxURLs
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = defaultMaxBytes
	}
	switch {
	case l.MaxDepth == 0:
		l.MaxDepth = defaultMaxDepth
	case l.MaxDepth < 0:
		l.MaxDepth = 0
	}
	if l.MaxSitemaps <= 0 {
		l.MaxSitemaps = defaultMaxSitemaps
	}
	return l
}
