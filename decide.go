package polite

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/polite-go/polite/pace"
	"github.com/polite-go/polite/robotstxt"
)

// A verdict is what robots.txt says of one request.
type verdict struct {
	allowed bool
	off     bool             // robots.txt is off for the request
	unknown bool             // the origin's robots.txt is not cached, and decide was not to fetch it
	robots  *robotsRecord    // the origin's robots.txt; nil for /robots.txt itself and when off
	binding *robotstxt.Group // the groups that bind the request's product token; nil when no file applies
	rule    robotstxt.Rule   // the rule that decided; the zero Rule for none
	// undecided says why robots.txt did not decide the request (a path
	// too long, or too costly, for the engine to decide): the failure
	// policy did.
	undecided error
}

// decide decides a request to u, with target tg, against its origin's
// robots.txt, fetching the file first if needed and fetch is true; with
// fetch false, a file not cached gives a verdict that is unknown.
// RoundTrip, Check and Ready decide through it. It fails when ctx has
// ended, before anything else, or ends first, or with the error of a
// RobotsStore that failed. tr, when not nil, hears that the request waits
// for a fetch.
func (t *PoliteTransport) decide(ctx context.Context, tg *target, u *url.URL, fetch bool, tr *pace.Trace) (verdict, error) {
	switch err := ctx.Err(); {
	case err != nil:
		return verdict{}, err
	case tg.mode == RobotsOff:
		return verdict{allowed: true, off: true}, nil
	case tg.robotsPath:
		return verdict{allowed: true}, nil // RFC 9309 §2.2.2
	}
	if !fetch {
		r := t.robots.peek(tg.origin)
		if r == nil {
			return verdict{unknown: true}, nil
		}
		return match(r, tg.token, u, t.undecided), nil
	}
	r, err := t.robots.get(ctx, &tg.origin, tr)
	if err != nil {
		return verdict{}, err
	}
	return match(r, tg.token, u, t.undecided), nil
}

// match decides u against r for the product token; policy decides what
// the engine does not (WithRobotsFailure's undecided).
func match(r *robotsRecord, token string, u *url.URL, policy FailurePolicy) verdict {
	v := verdict{robots: r}
	switch {
	case r.disallow:
	case r.file == nil:
		v.allowed = true
	default:
		v.binding = r.file.Group(token)
		if v.binding.NumRules() == 0 {
			v.allowed = true // no rule applies: spare building the path
			break
		}
		var room [256]byte
		if path, ok := requestPath(u, room[:0]); ok { // else refused: targetOf fails first
			v.allowed, v.rule, v.undecided = v.binding.Decide(path)
			if v.undecided != nil {
				v.allowed = policy == FailOpen
			}
		}
	}
	return v
}

// crawlDelay returns the Crawl-delay of the groups that bound, not clamped.
func (v verdict) crawlDelay() time.Duration {
	if v.binding == nil {
		return 0
	}
	return v.binding.CrawlDelay()
}

// group returns the user-agent token of the groups that bound, or "".
func (v verdict) group() string {
	if v.binding == nil {
		return ""
	}
	return v.binding.Agent()
}

// ruleText returns the rule that decided, as "Disallow: /private/", or ""
// when no rule did.
func (v verdict) ruleText() string { return v.rule.String() }

// reason explains a verdict that no rule made, or returns "".
func (v verdict) reason() string {
	switch r := v.robots; {
	case v.off:
		return "robots.txt is off for this request"
	case v.unknown:
		return "robots.txt is not fetched yet"
	case r == nil:
		return "/robots.txt is always allowed"
	case v.undecided != nil && !v.allowed:
		return "robots.txt does not decide it (" + v.undecided.Error() + "), and the policy for what it does not decide is FailClosed"
	case v.undecided != nil:
		return "robots.txt does not decide it (" + v.undecided.Error() + "), and the policy for what it does not decide is FailOpen"
	case r.disallow:
		return "robots.txt unreachable (" + r.err.Error() + "), and the policy is FailClosed"
	case r.file == nil && r.err != nil:
		return "robots.txt unreachable (" + r.err.Error() + "), and the policy is FailOpen"
	case r.file == nil:
		return fmt.Sprintf("robots.txt unavailable (status %d): no rules apply", r.status)
	}
	return ""
}

// apply does what v, the verdict of robots.txt on a request to u with
// target tg and context ctx, says: it returns the error that refuses the
// request, or counts and reports a request that is sent although
// robots.txt did not allow it (RobotsReport mode, or FailOpen for what it
// does not decide), and then holds it to the uses declared with WithUsage.
// A refusal is reported with waits, what held the request up until then.
func (t *PoliteTransport) apply(ctx context.Context, v verdict, tg *target, u *url.URL, waits []pace.Wait) error {
	if v.undecided != nil {
		v.robots.counts.undecided.Add(1)
	}
	switch {
	case !v.allowed && tg.mode == RobotsReport:
		v.robots.counts.wouldRefuse.Add(1)
		t.wouldRefuse(ctx, v, tg, u)
	case !v.allowed:
		v.robots.counts.refused.Add(1)
		err := &RobotsBlockedError{URL: u.String(), Agent: tg.token, RobotsURL: v.robots.url, Rule: v.ruleText(), Reason: v.reason()}
		if t.events.on() {
			t.events.emit(Event{Kind: EventRefused, Context: ctx, Key: tg.pacingKey, URL: err.URL, Rule: err.Rule, Reason: err.Reason, Group: v.group(), Waits: waits})
		}
		return err
	case v.undecided != nil:
		t.wouldRefuse(ctx, v, tg, u) // sent by FailOpen
	}
	if t.usage.on() {
		return t.checkUsage(ctx, v, *tg, u, waits)
	}
	return nil
}

// wouldRefuse reports a request to u, with target tg and context ctx,
// that robots.txt did not allow and that is sent all the same.
func (t *PoliteTransport) wouldRefuse(ctx context.Context, v verdict, tg *target, u *url.URL) {
	if t.events.on() {
		t.events.emit(Event{Kind: EventWouldRefuse, Context: ctx, Key: tg.pacingKey, URL: u.String(), Rule: v.ruleText(), Reason: v.reason(), Group: v.group()})
	}
}
