package polite

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/polite-go/polite/pace"
	"github.com/polite-go/polite/robotstxt"
)

// usagePolicy is what WithUsage set: the uses declared and the mode. The
// zero usagePolicy declares none, and the transport then never asks for
// usage preferences.
type usagePolicy struct {
	uses []robotstxt.Category
	mode RobotsMode // RobotsEnforce or RobotsReport
}

// on reports whether the transport asks for usage preferences.
func (p *usagePolicy) on() bool { return len(p.uses) > 0 }

// WithUsage declares what the crawler does with what it fetches, as
// categories of use: [robotstxt.TrainAI] for a crawler that gathers
// training data, [robotstxt.Search] for a search index,
// [robotstxt.AIInput] for content put before a model as it answers, or
// any other label. A URL whose robots.txt group states a preference of
// "n" for one of them, for that URL, is refused in [RobotsEnforce] mode,
// with a [*RobotsBlockedError] whose Uses name them, or sent, counted
// ([RobotsStats].UsageWouldRefuse) and reported ([EventWouldRefuse]) in
// [RobotsReport] mode, for learning what a crawl would lose before
// enforcing; [RobotsOff] turns the check off, as no WithUsage does.
//
// The preferences are those of the Content-Usage rules of
// draft-ietf-aipref-attach-05 and the Content-Signal lines of Cloudflare's
// Content Signals Policy, read in the group that binds the request, for
// its path, as [robotstxt.Group.Usage] says; where both speak to one use,
// the more restrictive wins. They hold only for URLs that robots.txt lets
// the crawler fetch, and only when robots.txt is consulted: not in
// [RobotsOff] mode, nor for /robots.txt itself. A preference of "y" or
// none lets the request through. A response's own fields are not read
// before it is sent: [PoliteTransport.ResponseUsage] combines them with
// robots.txt's afterwards.
//
// With no use, or without this option, the transport never reads usage
// preferences, and a request costs what it did. An unknown mode, or a use
// that is not a label (a-z, 0-9, '_', '-', '.' and '*', starting with a-z
// or '*'), is an error. A later WithUsage replaces an earlier one.
func WithUsage(mode RobotsMode, uses ...robotstxt.Category) Option {
	return optionFunc(func(c *config) error {
		if err := mode.check("WithUsage"); err != nil {
			return err
		}
		if mode == RobotsOff {
			c.usage = usagePolicy{}
			return nil
		}
		for _, u := range uses {
			if (robotstxt.Usage{}).With(u, robotstxt.No).Of(u) != robotstxt.No {
				return &ConfigError{Option: "WithUsage", Value: u, Reason: "not a label of a category of use"}
			}
		}
		c.usage = usagePolicy{uses: slices.Compact(slices.Sorted(slices.Values(uses))), mode: mode}
		return nil
	})
}

// usageOf returns the usage preferences of v's robots.txt for u, and of
// them the declared uses they disallow; nothing when robots.txt was not consulted,
// the URL may not be crawled, or the group states no preference. It fails
// only as [robotstxt.Group.Usage] does, for a path the engine does not
// decide.
func (t *PoliteTransport) usageOf(v verdict, u *url.URL) (pref, blocked robotstxt.Usage, err error) {
	if !v.allowed || v.binding == nil || v.binding.NumUsageRules() == 0 {
		return pref, blocked, nil
	}
	path, ok := robotstxt.RequestPath(u)
	if !ok {
		return pref, blocked, nil
	}
	if pref, err = v.binding.Usage(path); err != nil {
		return pref, blocked, err
	}
	return pref, pref.Disallowed(t.usage.uses...), nil
}

// checkUsage holds a request to u, which robots.txt lets through with
// verdict v, to the uses declared: in RobotsEnforce mode it returns the
// error that refuses it, in RobotsReport mode it counts it. A path the
// engine does not decide states no preference. ctx is the request's, and
// waits what held it up until then.
func (t *PoliteTransport) checkUsage(ctx context.Context, v verdict, tg target, u *url.URL, waits []pace.Wait) error {
	pref, blocked, _ := t.usageOf(v, u)
	if blocked == (robotstxt.Usage{}) {
		return nil
	}
	var rules []string
	if t.usage.mode == RobotsEnforce || t.events.on() {
		path, _ := robotstxt.RequestPath(u)
		matched, _ := v.binding.UsageRules(path)
		for _, r := range matched {
			if r.Usage.Disallowed(t.usage.uses...) != (robotstxt.Usage{}) {
				rules = append(rules, r.String())
			}
		}
	}
	rule := strings.Join(rules, "; ")
	if t.usage.mode == RobotsReport {
		v.robots.counts.usageWouldRefuse.Add(1)
		if t.events.on() {
			t.events.emit(Event{Kind: EventWouldRefuse, Context: ctx, Key: tg.pacingKey, URL: u.String(), Disallowed: blocked, Rule: rule, Group: v.group()})
		}
		return nil
	}
	v.robots.counts.usageRefused.Add(1)
	err := &RobotsBlockedError{URL: u.String(), Agent: tg.token, RobotsURL: v.robots.url, Rule: rule, Usage: pref}
	for c := range blocked.All() {
		err.Uses = append(err.Uses, c)
	}
	if t.events.on() {
		t.events.emit(Event{Kind: EventRefused, Context: ctx, Key: tg.pacingKey, URL: err.URL, Disallowed: blocked, Rule: rule, Group: v.group(), Waits: waits})
	}
	return err
}

// ResponseUsage returns the usage preferences that hold for resp's
// content: those its header states ([robotstxt.HeaderUsage]), combined with those
// that the robots.txt of resp.Request's origin states for its URL, in the
// group that binds its User-Agent, as [WithUsage] reads them. The most
// restrictive wins for each use: "n" in either is "n". A header field that
// does not parse states nothing; robotstxt.HeaderUsage says why.
//
// The robots.txt is the one in force in the transport's cache, fetched
// if need be as [PoliteTransport.Check] fetches it, in resp.Request's
// context. ResponseUsage fails as Check does, and when resp has no
// Request; a path too long or costly for the engine to decide has no
// robots.txt preference. A response that did not come through the transport is read
// the same way.
func (t *PoliteTransport) ResponseUsage(resp *http.Response) (robotstxt.Usage, error) {
	if resp == nil || resp.Request == nil || resp.Request.URL == nil {
		return robotstxt.Usage{}, errors.New("polite: ResponseUsage: the response has no request")
	}
	pref, _ := robotstxt.HeaderUsage(resp.Header)
	req := resp.Request
	tg, err := t.queryTarget("ResponseUsage", req)
	if err != nil {
		return robotstxt.Usage{}, err
	}
	v, err := t.decide(req.Context(), &tg, req.URL, true, nil)
	if err != nil {
		return robotstxt.Usage{}, err
	}
	robots, _, _ := t.usageOf(v, req.URL) // a path the engine does not decide states nothing
	return pref.Combine(robots), nil
}
