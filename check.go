package polite

import (
	"net/http"
	"time"

	"github.com/polite-go/polite/robotstxt"
)

// A Decision is what [PoliteTransport.Check] found for a request.
type Decision struct {
	// Mode is what robots.txt does to the request. In [RobotsReport] mode
	// RoundTrip sends the request even when Allowed is false; in
	// [RobotsOff] mode robots.txt is not consulted and Allowed is true.
	Mode RobotsMode
	// Allowed reports whether robots.txt lets the request through.
	Allowed bool
	// Agent is the product token that chose the group, lower-cased:
	// "mybot" for the User-Agent "MyBot/1.0 (+https://example.com/bot)".
	Agent string
	// Group is the user-agent token of the group that bound: Agent, "*",
	// or "" when no group did and so no rule applies.
	Group string
	// Rule is the rule that decided, as "Disallow: /private/", or "" when
	// no rule matched.
	Rule string
	// Reason explains a decision that no rule made, for example
	// "/robots.txt is always allowed".
	Reason string
	// Robots is how the fetch of the robots.txt consulted went. Its Err
	// says why the last fetch failed (unreachable: a 429, a 5xx, a network
	// error or a timeout); when it is set, an earlier good copy may still
	// be in force. It is zero when robots.txt was not consulted: in
	// [RobotsOff] mode, and for /robots.txt itself.
	Robots RobotsResult
	// CrawlDelay is the group's Crawl-delay as written, before
	// [PacingPolicy].MaxCrawlDelay clamps it; 0 when there is none.
	CrawlDelay time.Duration
	// Pace is the least gap, before jitter, that would separate the next two
	// starts of requests like this one to its host, as things stand now; 0
	// when the Pacer is not a [ReadyPacer].
	Pace time.Duration
	// Policy is the pacing policy in force for the request's key,
	// Effective: the transport's, or the one a rule or [WithPacingFunc]
	// gives the key.
	Policy PacingPolicy
	// Usage is the usage preferences that robots.txt states for the URL,
	// in the group that bound, when it lets the request through
	// ([robotstxt.Group.Usage]); the zero Usage when it states none, or
	// when robots.txt was not consulted.
	Usage robotstxt.Usage
	// UsageBlocked holds the uses declared with [WithUsage] that Usage
	// disallows, each [robotstxt.No]: RoundTrip refuses the request in
	// [UsageEnforce] mode, and counts it in [UsageReport] mode, when it
	// states any.
	UsageBlocked robotstxt.Usage
}

// Check decides req as RoundTrip would, without sending it: it fetches the
// origin's robots.txt if needed (waiting for the host's turn, like any
// fetch), matches req against it, and reports the pace. It does not close
// req's body. It fails when req's URL is not http or https, when req's
// context has ended, before any other work and whatever robots.txt would
// say, or ends first, or with the error of a [RobotsStore] or a
// [ReadyPacer] that failed.
//
// Crawlers can use Check to drop disallowed URLs before queueing them.
func (t *PoliteTransport) Check(req *http.Request) (Decision, error) {
	tg, err := t.queryTarget("Check", req)
	if err != nil {
		return Decision{}, err
	}
	v, err := t.decide(req.Context(), &tg, req.URL)
	if err != nil {
		return Decision{}, err
	}
	d := Decision{
		Mode:       tg.mode,
		Allowed:    v.allowed,
		Agent:      tg.token,
		Rule:       v.ruleText(),
		Reason:     v.reason(),
		CrawlDelay: v.crawlDelay(),
		Policy:     t.policyOf(tg),
	}
	if r := v.robots; r != nil {
		d.Group, d.Robots = v.group(), r.result()
	}
	d.Usage, d.UsageBlocked, _ = t.usageOf(v, req.URL)
	if rp := t.pacer.ready; rp != nil {
		ks, err := rp.Ready(req.Context(), tg.pacingKey, tg.partition, d.CrawlDelay)
		if err != nil {
			return Decision{}, err
		}
		d.Pace = ks.Pace
	}
	return d, nil
}

// Robots returns the robots.txt in force for req's origin, from the cache,
// fetching it if needed as Check does: its Sitemaps, its Crawl-delays, the
// lines it skipped. It returns nil, and no error, when no file applies: the
// file was unavailable (4xx) or unreachable with no earlier good copy.
func (t *PoliteTransport) Robots(req *http.Request) (*robotstxt.File, error) {
	tg, err := t.queryTarget("Robots", req)
	if err != nil {
		return nil, err
	}
	r, err := t.robots.get(req.Context(), tg.origin)
	if err != nil {
		return nil, err
	}
	return r.file, nil
}
