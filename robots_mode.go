package polite

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
)

// RobotsMode says what robots.txt does to requests.
type RobotsMode int

const (
	// RobotsEnforce fetches robots.txt and refuses the URLs it disallows,
	// with an error that matches [ErrRobotsBlocked]. This is the default.
	RobotsEnforce RobotsMode = iota
	// RobotsReport fetches robots.txt and decides every request, counts
	// the ones it would refuse (HostStats.WouldRefuse) and logs them, but
	// sends them all: for auditing a crawl before enforcing robots.txt.
	// Crawl-delay is honoured.
	RobotsReport
	// RobotsOff neither fetches robots.txt nor decides by it: for API
	// clients and URLs an operator is entitled to fetch. Crawl-delay does
	// not apply; pacing and backoff still do.
	RobotsOff
)

// String returns "RobotsEnforce", "RobotsReport" or "RobotsOff".
func (m RobotsMode) String() string {
	switch m {
	case RobotsEnforce:
		return "RobotsEnforce"
	case RobotsReport:
		return "RobotsReport"
	case RobotsOff:
		return "RobotsOff"
	}
	return fmt.Sprintf("RobotsMode(%d)", int(m))
}

// check returns a *ConfigError naming option unless m is a known mode.
func (m RobotsMode) check(option string) error {
	if m < RobotsEnforce || m > RobotsOff {
		return &ConfigError{Option: option, Value: m, Reason: "unknown mode"}
	}
	return nil
}

// robotsModes is what robots.txt does to each host's requests, as
// WithRobotsMode sets it.
type robotsModes struct {
	all   RobotsMode            // for the hosts that hosts does not name
	hosts map[string]RobotsMode // by canonical host name; nil: none
}

// WithRobotsMode sets what robots.txt does to requests (default
// [RobotsEnforce]): to every request when no host is given, and otherwise
// to the requests to those hosts, each named as a URL's host is
// (lower-cased, international names in their ASCII form, one trailing dot
// dropped; "api.example.com", not its subdomains), so that a program that
// calls an API and crawls sites at once turns robots.txt off for the API
// alone:
//
//	polite.New(nil, polite.WithRobotsMode(polite.RobotsOff, "api.example.com"))
//
// Later options override earlier ones host by host: a mode for every
// request keeps the modes given to named hosts, and a host's later mode
// replaces its earlier one. [ContextWithRobotsMode] overrides both per
// request. An unknown mode, or a host name that names no host, is an
// error.
func WithRobotsMode(m RobotsMode, hosts ...string) Option {
	return optionFunc(func(c *config) error {
		if err := m.check("WithRobotsMode"); err != nil {
			return err
		}
		if len(hosts) == 0 {
			c.robotsModes.all = m
			return nil
		}
		named := make(map[string]RobotsMode, len(c.robotsModes.hosts)+len(hosts))
		for h, hm := range c.robotsModes.hosts {
			named[h] = hm // a copy: an earlier transport's config keeps its own
		}
		for _, h := range hosts {
			canon, ok := canonicalHost(h)
			if !ok || canon == "" {
				return &ConfigError{Option: "WithRobotsMode", Value: h, Reason: "names no host"}
			}
			named[canon] = m
		}
		c.robotsModes.hosts = named
		return nil
	})
}

// robotsModeKey is the context key of ContextWithRobotsMode.
type robotsModeKey struct{}

// contextModes is set once ContextWithRobotsMode has been called: until
// then no context can hold a mode, and a request need not look for one.
var contextModes atomic.Bool

// ContextWithRobotsMode returns a copy of ctx that makes a
// [PoliteTransport] treat requests made with it by mode m, whatever the
// transport's options say: for a URL that an operator is entitled to
// fetch, say, RobotsOff. An invalid mode panics with a [*ConfigError].
func ContextWithRobotsMode(ctx context.Context, m RobotsMode) context.Context {
	if err := m.check("ContextWithRobotsMode"); err != nil {
		panic(err)
	}
	contextModes.Store(true)
	return context.WithValue(ctx, robotsModeKey{}, m)
}

// robotsModeOf returns the mode of req, to host, its canonical host name:
// its context's, else the one the transport's options give host.
func (t *PoliteTransport) robotsModeOf(req *http.Request, host string) RobotsMode {
	if contextModes.Load() {
		if m, ok := req.Context().Value(robotsModeKey{}).(RobotsMode); ok {
			return m
		}
	}
	if t.robotsModes.hosts != nil {
		if m, ok := t.robotsModes.hosts[host]; ok {
			return m
		}
	}
	return t.robotsModes.all
}
