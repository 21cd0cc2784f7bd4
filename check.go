package polite

import (
	"net/http"
	"time"

	"github.com/polite-go/polite/pace"
	"github.com/polite-go/polite/robotstxt"
)

// A Decision is what [PoliteTransport.Check] or [PoliteTransport.Ready]
// found for a request: what robots.txt says of it, and when it could
// start.
type Decision struct {
	// Mode is what robots.txt does to the request. In [RobotsReport] mode
	// RoundTrip sends the request even when Allowed is false; in
	// [RobotsOff] mode robots.txt is not consulted and Allowed is true.
	Mode RobotsMode
	// RobotsKnown reports that robots.txt has decided the request: its
	// file was in the cache, or fetched, or robots.txt is not needed
	// (RobotsOff, or /robots.txt itself). It is false only from Ready,
	// which fetches nothing, for an origin whose file is not cached; the
	// request would first wait for a fetch, and Allowed is then false, as
	// nothing has allowed it yet.
	RobotsKnown bool
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
	// Robots is the robots.txt consulted, as the transport holds it: how
	// its fetch went (its Err says why the last fetch failed: a 429, a
	// 5xx, a network error or a timeout; when it is set, an earlier good
	// copy may still be in force), its rules and what it did to requests.
	// It is zero when robots.txt was not consulted: in [RobotsOff] mode,
	// for /robots.txt itself, and when RobotsKnown is false.
	Robots RobotsStats
	// CrawlDelay is the group's Crawl-delay as written, before
	// [pace.Policy].MaxCrawlDelay clamps it; 0 when there is none.
	CrawlDelay time.Duration
	// Next is the earliest start that the key's pace and backoff allow,
	// counting the requests queued ahead and the Crawl-delay; a time not
	// after now means the key is ready. The zero time means a key the
	// Pacer knows nothing of, ready at once, or a Pacer that is not a
	// [pace.ReadyPacer].
	Next time.Time
	// Busy reports that the key has all its requests in flight, or
	// requests waiting for their turn: a request would queue behind them,
	// however early Next is.
	Busy bool
	// Pace is the least gap, before jitter, that would separate the next two
	// starts of requests like this one to its host, as things stand now; 0
	// when the Pacer is not a [pace.ReadyPacer].
	Pace time.Duration
	// Policy is the pacing policy in force for the request's key,
	// Effective: the transport's, or the one a rule or [WithPacingFunc]
	// gives the key.
	Policy pace.Policy
	// Usage is the usage preferences that robots.txt states for the URL,
	// in the group that bound, when it lets the request through
	// ([robotstxt.Group.Usage]); the zero Usage when it states none, or
	// when robots.txt was not consulted.
	Usage robotstxt.Usage
	// UsageBlocked holds the uses declared with [WithUsage] that Usage
	// disallows, each [robotstxt.No]: RoundTrip refuses the request in
	// [RobotsEnforce] mode, and counts it in [RobotsReport] mode, when it
	// states any.
	UsageBlocked robotstxt.Usage
}

// Check decides req as RoundTrip would, without sending it: it fetches the
// origin's robots.txt if needed (waiting for the host's turn, like any
// fetch), matches req against it, and reports when it could start. It
// does not close req's body. It fails when req's URL is not http or
// https, when req's context has ended, before any other work and whatever
// robots.txt would say, or ends first, or with the error of a
// [RobotsStore] or a [pace.ReadyPacer] that failed.
//
// Crawlers can use Check to drop disallowed URLs before queueing them.
func (t *PoliteTransport) Check(req *http.Request) (Decision, error) {
	return t.check("Check", req, true)
}

// Ready reports what Check would, without fetching, sending or reserving
// anything: when the origin's robots.txt is cached, its decision, and
// otherwise RobotsKnown false; and when a request like req could start,
// as things stand (Next, Busy, Pace). A [pace.ReadyPacer] that a fleet
// shares reads its state, one call. A crawler's frontier can so hand its
// workers hosts that are ready instead of parking a worker on a busy one;
// a request sent later may still wait, if others got there first. It
// fails as Check does.
func (t *PoliteTransport) Ready(req *http.Request) (Decision, error) {
	return t.check("Ready", req, false)
}

// check is Check, or Ready when fetch is false, named op in its errors.
func (t *PoliteTransport) check(op string, req *http.Request, fetch bool) (Decision, error) {
	tg, err := t.queryTarget(op, req)
	if err != nil {
		return Decision{}, err
	}
	ctx := req.Context()
	v, err := t.decide(ctx, &tg, req.URL, fetch, nil)
	if err != nil {
		return Decision{}, err
	}
	d := Decision{
		Mode:        tg.mode,
		RobotsKnown: !v.unknown,
		Allowed:     v.allowed,
		Agent:       tg.token,
		Rule:        v.ruleText(),
		Reason:      v.reason(),
		CrawlDelay:  v.crawlDelay(),
	}
	d.Policy, _ = t.pacing.For(tg.pacingKey) // an invalid policy: the one the Pacer runs
	if r := v.robots; r != nil {
		d.Group, d.Robots = v.group(), r.stats(t.defaultToken)
	}
	d.Usage, d.UsageBlocked, _ = t.usageOf(v, req.URL)
	if t.ready != nil {
		ks, err := t.ready.Ready(ctx, pace.Request{Key: tg.pacingKey, Partition: tg.partition, CrawlDelay: d.CrawlDelay})
		if err != nil {
			return Decision{}, err
		}
		d.Next, d.Busy, d.Pace = ks.Next, ks.Busy, ks.Pace
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
	r, err := t.robots.get(req.Context(), &tg.origin, nil)
	if err != nil {
		return nil, err
	}
	return r.file, nil
}
