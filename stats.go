package polite

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/polite-go/polite/pace"
)

// HostStats is a snapshot of what a [PoliteTransport] knows about one
// pacing key, by default a host.
type HostStats struct {
	// KeyState is the key's pacing state, its Pace counting the
	// Crawl-delay of the key's robots.txt for the transport's own
	// User-Agent; it holds only Key and Policy when the Pacer is not a
	// [pace.StatsPacer].
	pace.KeyState
	// Refused counts requests refused by robots.txt, and WouldRefuse
	// those that it disallowed and that [RobotsReport] mode, or FailOpen
	// for what it does not decide, sent all the same.
	Refused, WouldRefuse uint64
	// UsageRefused counts requests refused for a use declared with
	// [WithUsage] that a usage preference of robots.txt disallows, and
	// UsageWouldRefuse those that [RobotsReport] mode sent all the same.
	UsageRefused, UsageWouldRefuse uint64
	// Undecided counts requests that robots.txt did not decide (see
	// [WithRobotsFailure]), whether refused or sent.
	Undecided uint64
	// Robots describes the cached robots.txt of each of the key's origins,
	// ordered by URL.
	Robots []RobotsStats
}

// RobotsStats describes one origin's robots.txt as the transport holds
// it: how the fetch whose result is in force went (the last fetch, or
// for a Stale copy the last good one, whose Err is the last fetch's), the
// file, and what it did to requests.
type RobotsStats struct {
	// URL is the file's URL, as fetched: "https://example.com/robots.txt".
	URL string
	// Status is the HTTP status of the fetch in force; 0 when no response
	// came.
	Status int
	// Err says why the last fetch failed; nil when it reached the file.
	Err error
	// Stale reports that Err is set and an earlier good copy is in force.
	Stale bool
	// FetchedAt is when the fetch ended, and Duration how long it took,
	// redirects and waits included.
	FetchedAt time.Time
	Duration  time.Duration
	// Rules counts the Allow and Disallow rules in the file.
	Rules int
	// CrawlDelay is the Crawl-delay of the group that binds the
	// transport's own User-Agent, before clamping.
	CrawlDelay time.Duration
	// Sitemaps lists the file's Sitemap lines.
	Sitemaps []string
	// Refused counts requests this file refused, and WouldRefuse those it
	// disallowed that were sent all the same.
	Refused, WouldRefuse uint64
	// UsageRefused and UsageWouldRefuse count the requests this file's
	// usage preferences refused, or would have ([WithUsage]).
	UsageRefused, UsageWouldRefuse uint64
	// Undecided counts the requests this file did not decide.
	Undecided uint64
}

// stats returns r as RobotsStats, its CrawlDelay the one that binds the
// product token.
func (r *robotsRecord) stats(token string) RobotsStats {
	rs := RobotsStats{URL: r.url, Status: r.status, Err: r.err, Stale: r.stale, FetchedAt: r.fetchedAt, Duration: r.duration,
		CrawlDelay: r.crawlDelay(token),
		Refused:    r.counts.refused.Load(), WouldRefuse: r.counts.wouldRefuse.Load(),
		UsageRefused: r.counts.usageRefused.Load(), UsageWouldRefuse: r.counts.usageWouldRefuse.Load(),
		Undecided: r.counts.undecided.Load()}
	if r.file != nil {
		rs.Rules, rs.Sitemaps = r.file.NumRules(), r.file.Sitemaps()
	}
	return rs
}

// Stats returns a snapshot of every key the transport tracks, ordered by
// key: keys with pacing state, and keys with only a cached robots.txt,
// each with the policy in force for it (KeyState.Policy). It is safe to
// call while requests run, and costs time in proportion to the keys
// tracked; with a Pacer that a fleet shares, it reads their state from
// the Pacer's store ([pace.StatsPacer]), and fails when that fails or ctx
// ends.
func (t *PoliteTransport) Stats(ctx context.Context) ([]HostStats, error) {
	byKey := make(map[string]*HostStats)
	get := func(key string) *HostStats {
		s := byKey[key]
		if s == nil {
			s = &HostStats{KeyState: pace.KeyState{Key: key}}
			byKey[key] = s
		}
		return s
	}
	if t.stats != nil {
		states, err := t.stats.Stats(ctx)
		if err != nil {
			return nil, err
		}
		for _, ks := range states {
			get(ks.Key).KeyState = ks
		}
	}
	t.robots.each(func(k originKey, r *robotsRecord) {
		s := get(t.originPacingKey(k))
		rs := r.stats(t.defaultToken)
		s.Refused += rs.Refused
		s.WouldRefuse += rs.WouldRefuse
		s.UsageRefused += rs.UsageRefused
		s.UsageWouldRefuse += rs.UsageWouldRefuse
		s.Undecided += rs.Undecided
		s.Robots = append(s.Robots, rs)
	})
	out := make([]HostStats, 0, len(byKey))
	for _, s := range byKey {
		if s.Policy == (pace.Policy{}) { // a key the Pacer did not report
			s.Policy, _ = t.pacing.For(s.Key)
		}
		var floor time.Duration
		for _, r := range s.Robots {
			floor = max(floor, r.CrawlDelay)
		}
		if t.ready != nil && floor > 0 {
			ks, err := t.ready.Ready(ctx, pace.Request{Key: s.Key, CrawlDelay: floor})
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
