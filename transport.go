// Package polite makes any Go HTTP client a good citizen of the web. Its
// [PoliteTransport] is an [http.RoundTripper] that wraps another one, the
// base, and before passing a request on it obeys the site's robots.txt and
// waits for the host's turn:
//
//	client := &http.Client{Transport: polite.New(nil, polite.WithUserAgent("MyBot/1.0 (+https://example.com/bot)"))}
//
// # robots.txt
//
// The transport fetches an origin's robots.txt (RFC 9309) lazily, on the
// first request to that origin, once however many requests arrive together;
// an origin is a scheme, host and port, so http and https are apart and
// "http://Example.com/" is "http://example.com:80/". The fetch goes through
// the base transport, carries the configured User-Agent and no header of the
// request that caused it, is paced like any request to its host (the page
// waits its turn after it), and each of its requests is bounded by
// [WithRobotsTimeout]; a caller that stops waiting does not cancel it for
// the others. What it finds:
//
//   - 2xx: the first 500 KiB are parsed and the rest ignored (§2.5). Lines
//     that cannot be read are skipped; the others still bind (§2.3.1.5).
//   - 3xx: up to 5 redirects are followed, to any http or https URL; the
//     rules found apply to the original origin (§2.3.1.2). A sixth redirect
//     means unavailable.
//   - 4xx other than 429: unavailable; every URL is allowed (§2.3.1.3).
//   - 429, 5xx, a network error or a timeout: unreachable. The host is backed
//     off as for any such answer, the failure is kept for the smaller of the
//     TTL and 5 minutes, and a previous good copy stays in force meanwhile.
//     With no good copy, [FailOpen] (the default) allows every URL and
//     [FailClosed] refuses every URL, as §2.3.1.4 asks.
//
// A file is used for [WithRobotsTTL], 24 hours by default (§2.4). The group
// that binds a request is the one naming the product token of its
// User-Agent ("MyBot" for "MyBot/1.0 (+https://example.com/bot)"), compared
// exactly and without regard to case; groups naming the same token are
// combined; with none, the "*" group binds; with no "*" group, nothing is
// disallowed (§2.2.1). A URL's escaped path and query are matched, with
// percent-encoding normalised on both sides; the longest matching rule
// wins, and Allow wins a tie (§2.2.2). /robots.txt itself is always allowed.
// A refused request never reaches the network: RoundTrip returns a
// [*RobotsBlockedError], which matches [ErrRobotsBlocked].
//
// # Pacing
//
// Requests are paced per host name, lower-cased, whatever the scheme and
// port. A request starts no sooner than
//
//	max(lastStart + pace·(1 + Jitter·U), blockedUntil)
//	pace = max(min(max(BaseDelay, 2·latency)·2^level, MaxDelay), min(CrawlDelay, MaxCrawlDelay))
//
// where U is uniform in [0,1) and drawn once per start, latency is a
// smoothed time to response headers (it rises at once and decays by
// halves), CrawlDelay is the robots.txt Crawl-delay of the request's group
// and level is the backoff level. At most [WithMaxInFlight] requests per
// host are in flight (one by default, until response headers arrive), and
// waiting requests start in the order they came.
//
// A 429, a 5xx other than 501 and 505, a timeout or a reset connection
// raises the level by one (once per incident: requests that started before
// the last rise do not raise it again, up to level 8) and pauses the whole
// host for 5s·2^(level−1), at most 10 minutes, jittered upward. A
// Retry-After header, in seconds or as an HTTP date measured against the
// response's Date header, is a floor on that pause, never a ceiling, and
// is capped at one hour. Five successes started after the last rise lower
// the level by one; 30 minutes without a signal forget it.
//
// Defaults: BaseDelay 1s, Jitter 0.5, MaxDelay 60s, MaxCrawlDelay 60s,
// MaxInFlight 1.
//
// # Errors and cancellation
//
// Waiting counts against the request's context, and so against
// [http.Client.Timeout]: a cancelled context returns its error at once,
// and a deadline that falls before the earliest allowed start fails at
// once with a [*DeadlineError], which matches [context.DeadlineExceeded].
// Responses, 429 and 503 included, are returned untouched and never
// retried; an error from the base transport is returned as it is.
// Through [http.Client], errors arrive wrapped in a [*url.Error], so test
// them with [errors.Is] and [errors.As].
//
// # Memory
//
// Pacing state is kept for at most [WithMaxHosts] hosts and robots.txt for
// as many origins; past that, idle hosts and old files are dropped, but
// never a host that is backed off, waited on or busy.
//
// URLs whose scheme is neither http nor https pass through untouched.
package polite

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// PoliteTransport is an [http.RoundTripper] that obeys robots.txt and paces
// requests per host, as the package documentation describes. Build it with
// [New]. It is safe for concurrent use by multiple goroutines; share one
// per program, since its state is what keeps the program polite.
type PoliteTransport struct {
	base         http.RoundTripper
	cfg          config
	defaultToken string // product token of cfg.userAgent, or of Go's default User-Agent
	robots       robotsStore
	pacer        pacer
}

// goUserAgent is the product token net/http sends when a request has no
// User-Agent.
const goUserAgent = "go-http-client"

// New returns a PoliteTransport that sends requests through base, or through
// [http.DefaultTransport] when base is nil. It panics when an option is
// given an invalid value.
func New(base http.RoundTripper, opts ...Option) *PoliteTransport {
	if base == nil {
		base = http.DefaultTransport
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if l := cfg.logger; l != nil {
		cfg.pace.log = func(msg string, args ...any) { l.Info(msg, args...) }
	}
	t := &PoliteTransport{base: base, cfg: cfg, defaultToken: goUserAgent}
	if tok := productToken(cfg.userAgent); tok != "" {
		t.defaultToken = tok
	}
	t.pacer = newMemoryPacer(cfg.pace)
	t.robots = newRobotsCache(t.fetchRobots, cfg.robotsTTL, cfg.pace.maxHosts)
	return t
}

// RoundTrip implements [http.RoundTripper]. It refuses URLs that robots.txt
// disallows with a [*RobotsBlockedError], waits for the host's turn, and
// passes the request to the base transport. It never changes req; when it
// adds a User-Agent, it does so on a copy. It closes the request body on
// every path, as the RoundTripper contract asks.
func (t *PoliteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		closeRequestBody(req)
		return nil, fmt.Errorf("polite: nil Request.URL")
	}
	origin, ok := originOf(req.URL)
	if !ok {
		return t.base.RoundTrip(req)
	}
	ctx := req.Context()

	token, addUA := t.agentOf(req.Header)

	var floor time.Duration
	if !isRobotsPath(req.URL) { // always allowed (RFC 9309 §2.2.2)
		rules, agent, err := t.lookup(ctx, origin, token)
		if err == nil {
			err = check(req.URL, rules, agent)
		}
		if err != nil {
			closeRequestBody(req)
			return nil, err
		}
		floor = agent.crawlDelay
	}

	out := req
	if addUA { // only now: a refused request needs no copy
		out = req.Clone(ctx)
		if out.Header == nil {
			out.Header = make(http.Header)
		}
		out.Header.Set("User-Agent", t.cfg.userAgent)
	}
	// Nothing may come between the start and the call: what did would
	// count as the server's latency, and a wait there would bring the
	// next start closer than the pace to this one.
	tk, err := t.admit(ctx, origin.host, floor) // the origin's host is the pacing key
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	resp, err := t.base.RoundTrip(out)
	t.pacer.observe(tk, classify(resp, err, ctx.Err()))
	if err != nil && resp != nil {
		closeBody(resp.Body)
		resp = nil
	}
	return resp, err
}

// agentOf returns the product token that chooses the robots.txt group for
// a request with header h, and whether the transport adds its User-Agent.
// A request that has a User-Agent header, even an empty one, keeps it.
func (t *PoliteTransport) agentOf(h http.Header) (token string, addUA bool) {
	ua, ok := h["User-Agent"]
	switch {
	case !ok:
		return t.defaultToken, t.cfg.userAgent != ""
	case len(ua) > 0 && ua[0] == t.cfg.userAgent:
		return t.defaultToken, false
	case len(ua) > 0:
		return productToken(ua[0]), false
	}
	return "", false
}

// lookup returns the robots.txt of origin, fetching it if needed, and its
// matcher for token. It fails only when ctx ends first.
func (t *PoliteTransport) lookup(ctx context.Context, origin originKey, token string) (*robotsRules, *agentRules, error) {
	rules, err := t.robots.rules(ctx, origin)
	if err != nil {
		return nil, nil, err
	}
	return rules, rules.forAgent(token), nil
}

// check returns a *RobotsBlockedError when rules do not let agent fetch u,
// and counts it.
func check(u *url.URL, rules *robotsRules, agent *agentRules) error {
	if rules.disallow {
		rules.blocked.Add(1)
		return &RobotsBlockedError{URL: u.String(), Agent: agent.token, RobotsURL: rules.url, Reason: rules.reason()}
	}
	if agent.group == nil {
		return nil // no rule applies: spare building the path
	}
	path := normalizeTarget(u.RequestURI())
	if agent.allowed(path) {
		return nil
	}
	rules.blocked.Add(1)
	return &RobotsBlockedError{URL: u.String(), Agent: agent.token, RobotsURL: rules.url, Rule: agent.explain(path, false)}
}

// admit waits for the global limiter, if any, then for the host's turn.
func (t *PoliteTransport) admit(ctx context.Context, key string, floor time.Duration) (ticket, error) {
	if l := t.cfg.global; l != nil {
		if err := l.Wait(ctx); err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ticket{}, ctxErr
			}
			if _, ok := ctx.Deadline(); ok {
				// x/time/rate's "would exceed context deadline" does not
				// match context.DeadlineExceeded (golang/go#54541); make it.
				return ticket{}, fmt.Errorf("polite: global limiter: %v: %w", err, context.DeadlineExceeded)
			}
			return ticket{}, fmt.Errorf("polite: global limiter: %w", err)
		}
	}
	return t.pacer.acquire(ctx, key, floor)
}

// CloseIdleConnections calls CloseIdleConnections on the base transport, if
// it has that method.
func (t *PoliteTransport) CloseIdleConnections() {
	type closeIdler interface{ CloseIdleConnections() }
	if ci, ok := t.base.(closeIdler); ok {
		ci.CloseIdleConnections()
	}
}

// isRobotsPath reports whether u's escaped path is "/robots.txt". Only a
// URL whose Path is "/robots.txt" can have that escaped path, so the others
// are told apart without escaping theirs.
func isRobotsPath(u *url.URL) bool {
	return u.Path == "/robots.txt" && u.EscapedPath() == "/robots.txt"
}

// hostKey returns u's pacing key: its host name, lower-cased, as in its
// originKey.
func hostKey(u *url.URL) string {
	return strings.ToLower(u.Hostname())
}

func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
