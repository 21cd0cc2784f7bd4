package polite

import (
	"slices"
	"strings"
	"time"
)

// HostStats is a snapshot of what a [PoliteTransport] knows about one
// pacing key, by default a host.
type HostStats struct {
	// Key is the pacing key: by default the host name in canonical form
	// (see [PacingKeyHost]).
	Key string
	// Requests counts requests started, robots.txt fetches included.
	Requests uint64
	// Refused counts requests refused by robots.txt.
	Refused uint64
	// WouldRefuse counts requests that robots.txt disallowed and that
	// [RobotsReport] mode sent all the same.
	WouldRefuse uint64
	// InFlight counts requests started whose response headers have not come.
	InFlight int
	// Waiting counts requests waiting for their turn.
	Waiting int
	// Pace is the least gap between two starts now, before jitter, for
	// requests with the transport's own User-Agent: the Crawl-delay of the
	// host's robots.txt is part of it, as is that of the last request.
	Pace time.Duration
	// Level is the backoff level: the adaptive part of Pace is doubled this
	// many times.
	Level int
	// PausedUntil is the end of the key's backoff pause; zero or past when
	// it is not paused.
	PausedUntil time.Time
	// Latency is the smoothed time to response headers.
	Latency time.Duration
	// LastStart is when the last request started.
	LastStart time.Time
	// Backoffs counts the times the level went up.
	Backoffs uint64
	// RetryAfters counts backoff signals that carried a Retry-After header.
	RetryAfters uint64
	// Robots describes the cached robots.txt of each of the host's origins,
	// ordered by URL.
	Robots []RobotsStats
}

// RobotsStats describes one origin's cached robots.txt.
type RobotsStats struct {
	// RobotsResult is how the fetch whose result is in force went: the
	// last fetch, or for a Stale copy the last good one, whose Err is the
	// last fetch's.
	RobotsResult
	// Rules counts the Allow and Disallow rules in the file.
	Rules int
	// CrawlDelay is the Crawl-delay of the group that binds the transport's
	// own User-Agent, before clamping.
	CrawlDelay time.Duration
	// Sitemaps lists the file's Sitemap lines.
	Sitemaps []string
	// Refused counts requests this file refused.
	Refused uint64
	// WouldRefuse counts requests this file disallowed and that
	// [RobotsReport] mode sent all the same.
	WouldRefuse uint64
}

// Stats returns a snapshot of every key the transport tracks, ordered by
// key: keys with pacing state, and keys with only a cached
// robots.txt. It is safe to call while requests run, and costs time in
// proportion to the keys tracked.
func (t *PoliteTransport) Stats() []HostStats {
	byHost := make(map[string]*HostStats)
	get := func(host string) *HostStats {
		s := byHost[host]
		if s == nil {
			s = &HostStats{Key: host}
			byHost[host] = s
		}
		return s
	}
	for _, h := range t.pacer.snapshot() {
		s := get(h.key)
		s.Requests, s.InFlight, s.Waiting = h.requests, h.inFlight, h.waiting
		s.Pace, s.Level, s.PausedUntil = h.pace, h.level, h.blockedUntil
		s.Latency, s.LastStart = h.latency, h.lastStart
		s.Backoffs, s.RetryAfters = h.backoffs, h.retryAfters
	}
	t.robots.each(func(k originKey, r *robotsRecord) {
		s := get(t.originPacingKey(k))
		rs := RobotsStats{RobotsResult: r.result(), CrawlDelay: r.crawlDelay(t.defaultToken),
			Refused: r.counts.refused.Load(), WouldRefuse: r.counts.wouldRefuse.Load()}
		if r.file != nil {
			rs.Rules, rs.Sitemaps = r.file.NumRules(), r.file.Sitemaps()
		}
		s.Refused += rs.Refused
		s.WouldRefuse += rs.WouldRefuse
		s.Robots = append(s.Robots, rs)
	})
	out := make([]HostStats, 0, len(byHost))
	for _, s := range byHost {
		var floor time.Duration
		for _, r := range s.Robots {
			floor = max(floor, r.CrawlDelay)
		}
		if floor > 0 {
			s.Pace = max(s.Pace, t.pacer.paceOf(s.Key, floor))
		}
		slices.SortFunc(s.Robots, func(a, b RobotsStats) int { return strings.Compare(a.URL, b.URL) })
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b HostStats) int { return strings.Compare(a.Key, b.Key) })
	return out
}
