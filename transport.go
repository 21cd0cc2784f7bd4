package polite

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/time/rate"

	"github.com/polite-go/polite/robotstxt"
)

// PoliteTransport is an [http.RoundTripper] that obeys robots.txt and paces
// requests per host, as the package documentation describes. Build it with
// [New]. It is safe for concurrent use by multiple goroutines; share one
// per program, since its state is what keeps the program polite.
type PoliteTransport struct {
	base           http.RoundTripper
	robotsBase     http.RoundTripper          // robots.txt fetches go through it: the base, or WithRobotsTransport's
	robotsAway     http.RoundTripper          // robots.txt redirects to another host go through it; nil: not followed
	userAgent      string                     // set on requests without one, and on robots.txt fetches
	defaultToken   string                     // product token of userAgent, or of Go's default User-Agent
	pacingKey      PacingKeyFunc              // nil: PacingKeyHost, or the IP key when ips is set
	ips            *resolveCache              // the IP key's addresses; nil: not the IP key
	quotaPartition func(*http.Request) string // nil: every request in the partition ""
	robotsMode     RobotsMode                 // for requests that robotsModeFunc and the context leave alone
	robotsModeFunc func(*url.URL) RobotsMode  // nil: robotsMode
	robotsTimeout  time.Duration
	robotsFailure  FailurePolicy
	global         *rate.Limiter // nil: no cap across hosts
	events         emitter       // nil: no hook, no logger
	robots         *robotsCache
	store          RobotsStore // nil: robots.txt is this transport's alone
	pacer          pacing
	policies       policySet  // the policy of each key
	bandwidth      *bandwidth // the byte buckets of keys whose bandwidth is capped; nil when no policy caps it
	fieldNotes     fieldNotes // unreadable rate-limit fields reported

	// usage is the uses declared, and what to do when robots.txt
	// disallows one (usage.go).
	usage usagePolicy
}

// New returns a PoliteTransport that sends requests through base, or through
// [http.DefaultTransport] when base is nil, configured by opts. Options are
// applied in order, and for every setting the last one wins. New panics
// with a [*ConfigError] when an option is given an invalid value; use
// [Validate] to report it instead.
func New(base http.RoundTripper, opts ...Option) *PoliteTransport {
	cfg, err := configure(opts)
	if err != nil {
		panic(err)
	}
	switch {
	case base == nil && cfg.resolver != nil:
		base = ipBase()
	case base == nil:
		base = http.DefaultTransport
	}
	t := &PoliteTransport{
		base:           base,
		robotsBase:     base,
		userAgent:      cfg.userAgent,
		defaultToken:   goUserAgent,
		pacingKey:      cfg.pacingKey,
		quotaPartition: cfg.quotaPartition,
		robotsMode:     cfg.robotsMode,
		robotsModeFunc: cfg.robotsModeFunc,
		robotsTimeout:  cfg.robotsTimeout,
		robotsFailure:  cfg.robotsFailure,
		global:         cfg.global,
		events:         cfg.hooks,
		usage:          cfg.usage,
	}
	if cfg.resolver != nil {
		t.ips = newResolveCache(cfg.resolver, cfg.limits.MaxResolved)
	}
	t.policies = policySet{def: cfg.pacing, rules: cfg.rules.merge(cfg.pacing), fn: cfg.policyFunc}
	if t.policies.mayCap() {
		t.bandwidth = newBandwidth(cfg.limits.MaxKeys)
	}
	if _, plain := base.(*http.Transport); plain {
		t.robotsAway = base // it adds no header of its own
	}
	if cfg.robotsTransport != nil {
		t.robotsBase, t.robotsAway = cfg.robotsTransport, cfg.robotsTransport
	}
	if tok := robotstxt.ProductToken(cfg.userAgent); tok != "" {
		t.defaultToken = tok
	}
	var p Pacer
	if cfg.newPacer == nil {
		p = newMemoryPacer(memoryPacerConfig(t.policies.policies(), cfg.limits.MaxKeys))
	} else if p = cfg.newPacer(t.policies.policies()); p == nil {
		panic(&ConfigError{Option: "WithPacer", Reason: "the function returned a nil Pacer"})
	}
	t.pacer = newPacing(p, cfg.hooks)
	fetch := func(ctx context.Context, k originKey, prev *robotsRecord) *robotsRecord {
		r, _ := t.fetchRobots(ctx, k, prev)
		return r
	}
	if cfg.robotsStore != nil {
		t.store, fetch = cfg.robotsStore, t.fetchShared
	}
	t.robots = newRobotsCache(fetch, t.robotsTooLate, cfg.robotsTTL, cfg.limits.MaxOrigins, cfg.limits.RobotsCacheBytes)
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
		return nil, errNilURL
	}
	var tg target
	ok, err := t.targetOf(req, &tg)
	if !ok {
		return t.base.RoundTrip(req)
	}
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	ctx := req.Context()
	v, err := t.decide(ctx, &tg, req.URL)
	switch {
	case err != nil:
	case !v.allowed && tg.mode == RobotsReport:
		t.report(v, tg, req.URL)
	case !v.allowed:
		err = t.refusal(v, tg, req.URL)
	case v.undecided != nil:
		t.undecided(v, tg, req.URL)
	}
	if err == nil && t.usage.on() {
		err = t.checkUsage(v, tg, req.URL)
	}
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}

	out := req
	if tg.addUA { // only now: a refused request needs no copy
		out = req.Clone(ctx)
		if out.Header == nil {
			out.Header = make(http.Header)
		}
		out.Header.Set("User-Agent", t.userAgent)
	}
	if tg.dial != nil { // the IP key: the dial goes where the key says
		out = out.WithContext(withDialTarget(ctx, tg.dial))
	}
	// Nothing may come between the start and the call: what did would
	// count as the server's latency, and a wait there would bring the
	// next start closer than the pace to this one.
	var asked time.Time
	if t.events.on() {
		asked = time.Now()
	}
	tk, err := t.admit(ctx, tg.pacingKey, tg.partition, v.crawlDelay())
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	if !t.events.on() {
		resp, err := t.send(tk, &tg, out)
		if t.bandwidth != nil && resp != nil {
			t.capBody(ctx, tg.pacingKey, tg.policy, resp)
		}
		return resp, err
	}
	waited := time.Since(asked)
	resp, err := t.send(tk, &tg, out)
	if t.bandwidth != nil && resp != nil {
		t.capBody(ctx, tg.pacingKey, tg.policy, resp)
	}
	// Reported after the call, which the hook must not delay.
	t.events.emit(Event{Kind: EventSent, Key: tg.pacingKey, URL: req.URL.String(), Duration: waited})
	if resp != nil {
		t.reportUnreadable(tg.pacingKey, req.URL, resp.Header)
	}
	return resp, err
}

// send passes req, admitted with tk to the pacing key of tg, to the base
// transport and releases tk with the Outcome on every path: when the base
// panics, the key's slot is released before the panic goes on to the
// caller.
func (t *PoliteTransport) send(tk ticket, tg *target, req *http.Request) (*http.Response, error) {
	released := false
	defer func() {
		if !released {
			t.release(tk, tg.pacingKey, tg.partition, req.URL, Outcome{Class: OutcomeNeutral}, nil, nil)
		}
	}()
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp == nil {
		err = fmt.Errorf("polite: base RoundTripper %T returned no response and no error", t.base)
	}
	t.release(tk, tg.pacingKey, tg.partition, req.URL, classify(resp, err, req.Context().Err()), resp, err)
	released = true
	if err != nil && resp != nil {
		if resp.Body != nil {
			closeBody(resp.Body)
		}
		resp = nil
	}
	return resp, err
}

// capBody has resp's body read through the bucket of key, whose policy
// is pol (nil: the transport's), when that policy caps the key's
// bandwidth. RoundTrip calls it only when some policy may.
func (t *PoliteTransport) capBody(ctx context.Context, key string, pol *PacingPolicy, resp *http.Response) {
	if pol == nil {
		pol = &t.policies.def
	}
	if rate := pol.bandwidth(); rate > 0 {
		t.bandwidth.capBody(ctx, resp, key, rate)
	}
}

// release ends tk's request to u, admitted to key for partition, with o,
// and reports what that changed in the key's backoff, with the response's
// status or the error that caused it. Events go out after the Pacer's
// release, outside its locks.
func (t *PoliteTransport) release(tk ticket, key, partition string, u *url.URL, o Outcome, resp *http.Response, err error) {
	c := t.pacer.observe(tk, partition, o)
	if !t.events.on() || !c.Raised && !c.Cleared {
		return
	}
	ev := Event{Kind: EventBackoffCleared, Key: key, URL: u.String(), Level: c.Level}
	if c.Raised {
		ev.Kind, ev.Pause, ev.RetryAfter = EventBackoff, c.Pause, o.RetryAfter
	}
	if resp != nil {
		ev.Status = resp.StatusCode
	} else {
		ev.Err = err
	}
	t.events.emit(ev)
}

// robotsTooLate returns a *DeadlineError when a robots.txt fetch for k,
// and so the request that waits for it, could not start before ctx's
// deadline: the key is paused or paced, or requests are queued on it. It
// needs a [ReadyPacer]; with another Pacer, or when it cannot tell, it
// returns nil and the request waits as long as ctx lets it.
func (t *PoliteTransport) robotsTooLate(ctx context.Context, k originKey) error {
	deadline, ok := ctx.Deadline()
	if !ok || t.pacer.ready == nil {
		return nil
	}
	key, err := t.PacingKeyContext(ctx, k.url())
	if err != nil {
		return nil // the fetch fails with the error, which says so
	}
	ks, err := t.pacer.ready.Ready(ctx, key, "", 0)
	if err != nil {
		return nil // a store that fails fails the fetch, which says so
	}
	if now := time.Now(); ks.Next.After(now) && !ks.Next.Before(deadline) {
		return &DeadlineError{Key: key, Earliest: ks.Next, Deadline: deadline, now: now}
	}
	return nil
}

// admit waits for the global limiter, if any, then for the turn of a
// request of partition to key.
func (t *PoliteTransport) admit(ctx context.Context, key, partition string, floor time.Duration) (ticket, error) {
	if l := t.global; l != nil {
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
	return t.pacer.acquire(ctx, key, partition, floor)
}

// CloseIdleConnections calls CloseIdleConnections on the base transport, if
// it has that method.
func (t *PoliteTransport) CloseIdleConnections() {
	type closeIdler interface{ CloseIdleConnections() }
	if ci, ok := t.base.(closeIdler); ok {
		ci.CloseIdleConnections()
	}
}
