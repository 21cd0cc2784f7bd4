package polite

import (
	"context"
	"fmt"
	"net/http"
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

// robotsModeKey is the context key of ContextWithRobotsMode.
type robotsModeKey struct{}

// ContextWithRobotsMode returns a copy of ctx that makes a
// [PoliteTransport] treat requests made with it by mode m, whatever the
// transport's options say: for a URL that an operator is entitled to
// fetch, say, RobotsOff. An invalid mode panics with a [*ConfigError].
func ContextWithRobotsMode(ctx context.Context, m RobotsMode) context.Context {
	if err := m.check("ContextWithRobotsMode"); err != nil {
		panic(err)
	}
	return context.WithValue(ctx, robotsModeKey{}, m)
}

// robotsModeOf returns the mode of req: its context's, else the one the
// transport's options choose for its URL.
func (t *PoliteTransport) robotsModeOf(req *http.Request) RobotsMode {
	if m, ok := req.Context().Value(robotsModeKey{}).(RobotsMode); ok {
		return m
	}
	if f := t.robotsModeFunc; f != nil {
		return f(req.URL)
	}
	return t.robotsMode
}
