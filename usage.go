package polite

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/polite-go/polite/robotstxt"
)

// UsageMode says what the transport does with a URL whose robots.txt
// states a usage preference of "n" for a use it declares ([WithUsage]).
type UsageMode int

const (
	// UsageEnforce refuses such a URL before it is sent, with an error
	// that matches [ErrUsageBlocked].
	UsageEnforce UsageMode = iota
	// UsageReport sends it, and counts it (HostStats.UsageWouldRefuse)
	// and reports it ([EventUsageWouldRefuse]): for learning what a crawl
	// would lose before enforcing.
	UsageReport
)

// String returns "UsageEnforce" or "UsageReport".
func (m UsageMode) String() string {
	switch m {
	case UsageEnforce:
		return "UsageEnforce"
	case UsageReport:
		return "UsageReport"
	}
	return fmt.Sprintf("UsageMode(%d)", int(m))
}

// usagePolicy is what WithUsage set: the uses declared and the mode. The
// zero usagePolicy declares none, and the transport then never asks for
// usage preferences.
type usagePolicy struct {
	uses []robotstxt.Category
	mode UsageMode
}

// on reports whether the transport asks for usage preferences.
func (p *usagePolicy) on() bool { return len(p.uses) > 0 }

// WithUsage declares what the crawler does with what it fetches, as
// categories of use: [robotstxt.TrainAI] for a crawler that gathers
// training data, [robotstxt.Search] for a search index,
// [robotstxt.AIInput] for content put before a model as it answers, or
// any other label. A URL whose robots.txt group states a preference of
// "n" for one of them, for that URL, is refused in [UsageEnforce] mode,
// with a [*UsageBlockedError], or sent and counted in [UsageReport] mode.
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
func WithUsage(mode UsageMode, uses ...robotstxt.Category) Option {
	return optionFunc(func(c *config) error {
		if mode != UsageEnforce && mode != UsageReport {
			return &ConfigError{Option: "WithUsage", Value: mode, Reason: "unknown mode"}
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

// ErrUsageBlocked is the error returned, wrapped in a [*UsageBlockedError],
// when a robots.txt usage preference of "n" for a use declared with
// [WithUsage] keeps the transport from fetching a URL. Through
// [http.Client] it arrives inside a [*url.Error], so test for it with
// [errors.Is]. It is not [ErrRobotsBlocked]: robots.txt lets the URL be
// fetched, but not for that use.
var ErrUsageBlocked = errors.New("polite: blocked by a usage preference in robots.txt")

// UsageBlockedError says why a request was refused for its use. It
// matches [ErrUsageBlocked] with [errors.Is].
type UsageBlockedError struct {
	// URL is the request's URL.
	URL string
	// Agent is the product token that chose the robots.txt group.
	Agent string
	// RobotsURL is the robots.txt that states the preference.
	RobotsURL string
	// Uses are the declared uses that the preference disallows, as
	// "train-ai".
	Uses []robotstxt.Category
	// Usage is every preference that robots.txt states for the URL.
	Usage robotstxt.Usage
	// Rules are the lines that disallow those uses, as
	// "Content-Usage: / train-ai=n".
	Rules []string
}

// Error implements the error interface.
func (e *UsageBlockedError) Error() string {
	uses := make([]string, len(e.Uses))
	for i, u := range e.Uses {
		uses[i] = string(u) + "=n"
	}
	msg := fmt.Sprintf("polite: %s blocked by %s for %q: %s", e.URL, e.RobotsURL, e.Agent, strings.Join(uses, ", "))
	if len(e.Rules) > 0 {
		msg += " (" + strings.Join(e.Rules, "; ") + ")"
	}
	return msg
}

// Is reports whether target is [ErrUsageBlocked].
func (e *UsageBlockedError) Is(target error) bool { return target == ErrUsageBlocked }

// RetryableError reports false: the request never reached the server,
// and a retry would be refused the same way.
func (e *UsageBlockedError) RetryableError() bool { return false }

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
// verdict v, to the uses declared: in UsageEnforce mode it returns the
// error that refuses it, in UsageReport mode it counts it. A path the
// engine does not decide states no preference.
func (t *PoliteTransport) checkUsage(v verdict, tg target, u *url.URL) error {
	pref, blocked, _ := t.usageOf(v, u)
	if blocked == (robotstxt.Usage{}) {
		return nil
	}
	var rules []string
	if t.usage.mode == UsageEnforce || t.events.on() {
		path, _ := robotstxt.RequestPath(u)
		matched, _ := v.binding.UsageRules(path)
		for _, r := range matched {
			if r.Usage.Disallowed(t.usage.uses...) != (robotstxt.Usage{}) {
				rules = append(rules, r.String())
			}
		}
	}
	if t.usage.mode == UsageReport {
		v.robots.counts.usageWouldRefuse.Add(1)
		if t.events.on() {
			t.events.emit(Event{Kind: EventUsageWouldRefuse, Key: tg.pacingKey, URL: u.String(), Disallowed: blocked, Rule: strings.Join(rules, "; ")})
		}
		return nil
	}
	v.robots.counts.usageRefused.Add(1)
	err := &UsageBlockedError{URL: u.String(), Agent: tg.token, RobotsURL: v.robots.url, Usage: pref, Rules: rules}
	for c := range blocked.All() {
		err.Uses = append(err.Uses, c)
	}
	if t.events.on() {
		t.events.emit(Event{Kind: EventUsageRefused, Key: tg.pacingKey, URL: err.URL, Disallowed: blocked, Rule: strings.Join(rules, "; ")})
	}
	return err
}

// HeaderUsage returns the usage preferences that a response's header
// states for its content: its Content-Usage field
// (draft-ietf-aipref-attach-05 §2) and its Content-Signal field, each
// read as [robotstxt.ParseContentUsage] and [robotstxt.ParseContentSignal]
// read them, their field lines joined, and combined. A field that does not
// parse states nothing, and HeaderUsage returns the other's preferences
// with an error that matches [robotstxt.ErrBadUsage].
func HeaderUsage(h http.Header) (robotstxt.Usage, error) {
	var pref robotstxt.Usage
	var errs []error
	for _, f := range []struct {
		name  string
		parse func(string) (robotstxt.Usage, error)
	}{{"Content-Usage", robotstxt.ParseContentUsage}, {"Content-Signal", robotstxt.ParseContentSignal}} {
		lines := h.Values(f.name)
		if len(lines) == 0 {
			continue
		}
		u, err := f.parse(strings.Join(lines, ", "))
		if err != nil {
			errs = append(errs, err)
		}
		pref = pref.Combine(u)
	}
	return pref, errors.Join(errs...)
}

// ResponseUsage returns the usage preferences that hold for resp's
// content: those its header states ([HeaderUsage]), combined with those
// that the robots.txt of resp.Request's origin states for its URL, in the
// group that binds its User-Agent, as [WithUsage] reads them. The most
// restrictive wins for each use: "n" in either is "n". A header field that
// does not parse states nothing; HeaderUsage says why.
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
	pref, _ := HeaderUsage(resp.Header)
	req := resp.Request
	tg, err := t.queryTarget("ResponseUsage", req)
	if err != nil {
		return robotstxt.Usage{}, err
	}
	v, err := t.decide(req.Context(), &tg, req.URL)
	if err != nil {
		return robotstxt.Usage{}, err
	}
	robots, _, _ := t.usageOf(v, req.URL) // a path the engine does not decide states nothing
	return pref.Combine(robots), nil
}
