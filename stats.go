package polite

import (
	"context"
	"slices"
	"strings"
	"time"
)

// HostStats is a snapshot of what a [PoliteTransport] knows about one
// pacing key, by default a host.
type HostStats struct {
	// KeyState is the key's pacing state, its Pace counting the
	// Crawl-delay of the key's robots.txt for the transport's own
	// User-Agent; it holds only Key when the Pacer is not a [StatsPacer].
	KeyState
	// Refused counts requests refused by robots.txt.
	Refused uint64
	// WouldRefuse counts requests that robots.txt disallowed and that
	// [RobotsReport] mode sent all the same.
	WouldRefuse uint64
	// UsageRefused counts requests refused for a use declared with
	// [WithUsage] that a usage preference of robots.txt disallows, and
	// UsageWouldRefuse those that [UsageReport] mode sent all the same.
	UsageRefused, UsageWouldRefuse uint64
	// Robots describes the cached robots.txt of each of the key's origins,
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
	// UsageRefused and UsageWouldRefuse count the requests this file's
	// usage preferences refused, or would have ([WithUsage]).
	UsageRefused, UsageWouldRefuse uint64
}

// Stats returns a snapshot of every key the transport tracks, ordered by
// key: keys with pacing state, and keys with only a cached robots.txt,
// each with the policy in force for it (KeyState.Policy). It
// is safe to call while requests run, and costs time in proportion to the
// keys tracked; with a Pacer that a fleet shares, it reads their state
// from the Pacer's store ([StatsPacer]), and fails when that fails or ctx
// ends.
func (t *PoliteTransport) Stats(ctx context.Context) ([]HostStats, error) {
	byKey := make(map[string]*HostStats)
	get := func(key string) *HostStats {
		s := byKey[key]
		if s == nil {
			s = &HostStats{KeyState: KeyState{Key: key}}
			byKey[key] = s
		}
		return s
	}
	if sp := t.pacer.stats; sp != nil {
		states, err := sp.Stats(ctx)
		if err != nil {
			return nil, err
		}
		for _, ks := range states {
			get(ks.Key).KeyState = ks
		}
	}
	t.robots.each(func(k originKey, r *robotsRecord) {
		s := get(t.originPacingKey(k))
		rs := RobotsStats{RobotsResult: r.result(), CrawlDelay: r.crawlDelay(t.defaultToken),
			Refused: r.counts.refused.Load(), WouldRefuse: r.counts.wouldRefuse.Load(),
			UsageRefused: r.counts.usageRefused.Load(), UsageWouldRefuse: r.counts.usageWouldRefuse.Load()}
		if r.file != nil {
			rs.Rules, rs.Sitemaps = r.file.NumRules(), r.file.Sitemaps()
		}
		s.Refused += rs.Refused
		s.WouldRefuse += rs.WouldRefuse
		s.UsageRefused += rs.UsageRefused
		s.UsageWouldRefuse += rs.UsageWouldRefuse
		s.Robots = append(s.Robots, rs)
	})
	out := make([]HostStats, 0, len(byKey))
	for _, s := range byKey {
		if s.Policy == (PacingPolicy{}) { // a key the Pacer did not report
			p, _ := t.policies.forKey(s.Key)
			s.Policy = *p
		}
		var floor time.Duration
		for _, r := range s.Robots {
			floor = max(floor, r.CrawlDelay)
		}
		if rp := t.pacer.ready; rp != nil && floor > 0 {
			ks, err := rp.Ready(ctx, s.Key, "", floor)
			if err != nil {
				return nil, err
			}
			s.Pace = max(s.Pace, ks.Pace)
		}
		slices.SortFunc(s.Robots, func(a, b RobotsStats) int { return strings.Compare(a.URL, b.URL) })
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b HostStats) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}
