package polite

import (
	"fmt"
	"net/http"
	"time"
)

// A Decision is what [PoliteTransport.Check] found for a request.
type Decision struct {
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
	// RobotsURL is the robots.txt consulted, "scheme://host:port/robots.txt".
	RobotsURL string
	// RobotsStatus is the HTTP status of the robots.txt fetch whose result
	// is in force, or 0 when it got no response.
	RobotsStatus int
	// RobotsErr says why the last robots.txt fetch failed (unreachable: a
	// 429, a 5xx, a network error or a timeout); "" when it succeeded. When
	// it is set, an earlier good copy may still be in force.
	RobotsErr string
	// CrawlDelay is the group's Crawl-delay as written, before
	// [WithMaxCrawlDelay] clamps it; 0 when there is none.
	CrawlDelay time.Duration
	// Pace is the least gap, before jitter, that would separate the next two
	// starts of requests like this one to its host, as things stand now.
	Pace time.Duration
}

// Check decides req as RoundTrip would, without sending it: it fetches the
// origin's robots.txt if needed (waiting for the host's turn, like any
// fetch), matches req against it, and reports the pace. It does not close
// req's body. It fails when req's URL is not http or https, or when req's
// context ends first.
//
// Crawlers can use Check to drop disallowed URLs before queueing them.
func (t *PoliteTransport) Check(req *http.Request) (Decision, error) {
	origin, ok := originOf(req.URL)
	if !ok {
		return Decision{}, fmt.Errorf("polite: Check %q: not an http or https URL", req.URL)
	}
	token, _ := t.agentOf(req.Header)
	d := Decision{Agent: token, RobotsURL: origin.String() + "/robots.txt"}
	if isRobotsPath(req.URL) {
		d.Allowed, d.Reason = true, "/robots.txt is always allowed"
		d.Pace = t.pacer.paceOf(hostKey(req.URL), 0)
		return d, nil
	}
	rules, agent, err := t.lookup(req.Context(), origin, token)
	if err != nil {
		return Decision{}, err
	}
	d.Group, d.RobotsStatus, d.RobotsErr, d.CrawlDelay = agent.agent, rules.status, rules.err, agent.crawlDelay
	d.Pace = t.pacer.paceOf(hostKey(req.URL), agent.crawlDelay)
	switch {
	case rules.disallow:
		d.Reason = rules.reason()
	case rules.file == nil && rules.err != "":
		d.Allowed, d.Reason = true, "robots.txt unreachable ("+rules.err+"), and the policy is FailOpen"
	case rules.file == nil:
		d.Allowed, d.Reason = true, fmt.Sprintf("robots.txt unavailable (status %d): no rules apply", rules.status)
	default:
		path := normalizeTarget(req.URL.RequestURI())
		d.Allowed = agent.allowed(path)
		d.Rule = agent.explain(path, d.Allowed)
	}
	return d, nil
}
