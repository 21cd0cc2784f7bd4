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
	robotsBase     http.RoundTripper         // robots.txt fetches go through it: the base, or WithRobotsTransport's
	userAgent      string                    // set on requests without one, and on robots.txt fetches
	defaultToken   string                    // product token of userAgent, or of Go's default User-Agent
	pacingKey      PacingKeyFunc             // nil: PacingKeyHost
	robotsMode     RobotsMode                // for requests that robotsModeFunc and the context leave alone
	robotsModeFunc func(*url.URL) RobotsMode // nil: robotsMode
	robotsTimeout  time.Duration
	robotsFailure  FailurePolicy
	global         *rate.Limiter // nil: no cap across hosts
	events         emitter       // nil: no hook, no logger
	robots         *robotsCache
	store          RobotsStore // nil: robots.txt is this transport's alone
	pacer          pacer
	fieldNotes     fieldNotes // unreadable rate-limit fields reported
}

// New returns a PoliteTransport that sends requests through base, or through
// [http.DefaultTransport] when base is nil, configured by opts. Options are
// applied in order, and for every setting the last one wins. New panics
// with a [*ConfigError] when an option is given an invalid value; use
// [Validate] to report it instead.
func New(base http.RoundTripper, opts ...Option) *PoliteTransport {
	if base == nil {
		base = http.DefaultTransport
	}
	cfg, err := configure(opts)
	if err != nil {
		panic(err)
	}
	t := &PoliteTransport{
		base:           base,
		robotsBase:     base,
		userAgent:      cfg.userAgent,
		defaultToken:   goUserAgent,
		pacingKey:      cfg.pacingKey,
		robotsMode:     cfg.robotsMode,
		robotsModeFunc: cfg.robotsModeFunc,
		robotsTimeout:  cfg.robotsTimeout,
		robotsFailure:  cfg.robotsFailure,
		global:         cfg.global,
		events:         cfg.hooks,
	}
	if cfg.robotsTransport != nil {
		t.robotsBase = cfg.robotsTransport
	}
	if tok := robotstxt.ProductToken(cfg.userAgent); tok != "" {
		t.defaultToken = tok
	}
	if cfg.newPacer == nil {
		t.pacer = newMemoryPacer(memoryPacerConfig(cfg.pacing, cfg.limits.MaxKeys, cfg.hooks))
	} else {
		switch p := cfg.newPacer(cfg.pacing.Effective()).(type) {
		case *memoryPacer:
			p.cfg.events = cfg.hooks
			t.pacer = p
		case nil:
			panic(&ConfigError{Option: "WithPacer", Reason: "the function returned a nil Pacer"})
		default:
			t.pacer = leasePacer{p}
		}
	}
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
	tg, ok, err := t.targetOf(req)
	if !ok {
		return t.base.RoundTrip(req)
	}
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	ctx := req.Context()
	v, err := t.decide(ctx, tg, req.URL)
	if err == nil && !v.allowed {
		if tg.mode == RobotsReport {
			t.report(v, tg, req.URL)
		} else {
			err = t.refusal(v, tg, req.URL)
		}
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
	// Nothing may come between the start and the call: what did would
	// count as the server's latency, and a wait there would bring the
	// next start closer than the pace to this one.
	var asked time.Time
	if t.events.on() {
		asked = time.Now()
	}
	tk, err := t.admit(ctx, tg.pacingKey, v.crawlDelay())
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	if !t.events.on() {
		return t.send(tk, out)
	}
	waited := time.Since(asked)
	resp, err := t.send(tk, out)
	// Reported after the call, which the hook must not delay.
	t.events.emit(Event{Kind: EventSent, Key: tg.pacingKey, URL: req.URL.String(), Duration: waited})
	if resp != nil {
		t.reportUnreadable(tg.pacingKey, req.URL, resp.Header)
	}
	return resp, err
}

// send passes req, admitted with tk, to the base transport and reports the
// Outcome to the pacer on every path: when the base panics, the host's slot
// is released before the panic goes on to the caller.
func (t *PoliteTransport) send(tk ticket, req *http.Request) (*http.Response, error) {
	observed := false
	defer func() {
		if !observed {
			t.pacer.observe(tk, Outcome{Class: OutcomeNeutral})
		}
	}()
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp == nil {
		err = fmt.Errorf("polite: base RoundTripper %T returned no response and no error", t.base)
	}
	t.pacer.observe(tk, classify(resp, err, req.Context().Err()))
	observed = true
	if err != nil && resp != nil {
		if resp.Body != nil {
			closeBody(resp.Body)
		}
		resp = nil
	}
	return resp, err
}

// robotsTooLate returns a *DeadlineError when a robots.txt fetch for k
// could not start before ctx's deadline, the host being paused or paced.
func (t *PoliteTransport) robotsTooLate(ctx context.Context, k originKey) error {
	return t.pacer.tooLate(ctx, t.originPacingKey(k))
}

// admit waits for the global limiter, if any, then for the host's turn.
func (t *PoliteTransport) admit(ctx context.Context, key string, floor time.Duration) (ticket, error) {
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
