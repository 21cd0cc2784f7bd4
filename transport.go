package polite

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/time/rate"

	"github.com/polite-go/polite/pace"
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
	pacingKey      func(*url.URL) string      // nil: PacingKeyHost, or the IP key when ips is set
	ips            *resolveCache              // the IP key's addresses; nil: not the IP key
	quotaPartition func(*http.Request) string // nil: every request in the partition ""
	robotsModes    robotsModes                // what robots.txt does to each host's requests
	robotsTimeout  time.Duration
	robotsFailure  FailurePolicy // for an origin whose robots.txt is unreachable
	undecided      FailurePolicy // for a request that robots.txt does not decide
	global         *rate.Limiter // nil: no cap across hosts
	events         emitter       // nil: no hook, no logger
	robots         *robotsCache
	store          RobotsStore     // nil: robots.txt is this transport's alone
	pacer          pace.Pacer      // every request's turn
	ready          pace.ReadyPacer // pacer, when it is one; else nil
	stats          pace.StatsPacer // likewise
	pacing         pace.Config     // what pacer was made from: each key's policy
	checkPolicy    bool            // WithPacingFunc may give a key an invalid policy: check it per request
	bandwidth      *bandwidth      // the byte buckets of keys whose bandwidth is capped; nil when no policy caps it
	fieldNotes     fieldNotes      // unreadable rate-limit fields reported

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
		robotsModes:    cfg.robotsModes,
		robotsTimeout:  cfg.robotsTimeout,
		robotsFailure:  cfg.robotsFailure,
		undecided:      cfg.undecided,
		global:         cfg.global,
		events:         cfg.hooks,
		usage:          cfg.usage,
		checkPolicy:    cfg.policyFunc != nil,
	}
	if cfg.resolver != nil {
		t.ips = newResolveCache(cfg.resolver, cfg.limits.MaxResolved)
	}
	t.pacing = pacingConfig(&cfg, cfg.hooks)
	if mayCapBandwidth(&cfg) {
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
	t.pacer = newPacer(&cfg, t.pacing)
	t.ready, _ = t.pacer.(pace.ReadyPacer)
	t.stats, _ = t.pacer.(pace.StatsPacer)
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
// every path that does not hand it to the base, as the RoundTripper
// contract asks.
func (t *PoliteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	handed := false // the base owns req's body
	if req.Body != nil {
		defer func() {
			if !handed {
				req.Body.Close()
			}
		}()
	}
	if req.URL == nil {
		return nil, errNilURL
	}
	var tg target
	ok, err := t.targetOf(req, &tg)
	if !ok {
		handed = true
		return t.base.RoundTrip(req)
	}
	if err != nil {
		return nil, err
	}
	ctx := req.Context()
	var w *waitLog // what holds the request up; nil when nobody listens
	if t.events.on() {
		w = getWaitLog()
	}
	v, err := t.decide(ctx, &tg, req.URL, true, w.trace())
	if w != nil && w.open {
		w.end(time.Now()) // the robots.txt fetch it waited for
	}
	if err == nil && (!v.allowed || v.undecided != nil || t.usage.on()) {
		err = t.apply(ctx, v, &tg, req.URL, w.list())
	}
	if err != nil {
		if w != nil {
			t.refusedByDeadline(ctx, &tg, req.URL, err, w)
			w.put()
		}
		return nil, err
	}

	out := req
	if tg.addUA { // only now: a refused request needs no copy
		out = t.withUserAgent(req)
	}
	if tg.dial != nil { // the IP key: the dial goes where the key says
		out = out.WithContext(withDialTarget(ctx, tg.dial))
	}
	// Nothing may come between the start and the call: what did would
	// count as the server's latency, and a wait there would bring the
	// next start closer than the pace to this one.
	var asked time.Time
	if w != nil {
		asked = time.Now()
	}
	actx := ctx // Acquire's: with w's Trace when someone listens
	if w != nil {
		actx = pace.WithTrace(ctx, &w.tr)
	}
	l, err := t.admit(actx, pace.Request{Key: tg.pacingKey, Partition: tg.partition, CrawlDelay: v.crawlDelay()})
	if err != nil {
		if w != nil {
			t.refusedByDeadline(ctx, &tg, req.URL, err, w)
			w.put()
		}
		return nil, err
	}
	handed = true
	if w == nil {
		resp, err := t.send(l, &tg, out)
		if tg.bandwidth > 0 && resp != nil {
			t.bandwidth.capBody(ctx, resp, tg.pacingKey, tg.bandwidth)
		}
		return resp, err
	}
	sent := time.Now()
	w.end(sent)
	resp, err := t.send(l, &tg, out)
	if tg.bandwidth > 0 && resp != nil {
		t.bandwidth.capBody(ctx, resp, tg.pacingKey, tg.bandwidth)
	}
	// Reported after the call, which the hook must not delay.
	t.events.emit(Event{Kind: EventSent, Time: sent, Context: ctx, Key: tg.pacingKey, URL: req.URL.String(), Duration: sent.Sub(asked), Waits: w.waits})
	if resp != nil {
		t.reportUnreadable(tg.pacingKey, req.URL, resp.Header)
	}
	w.put()
	return resp, err
}

// withUserAgent returns a copy of req whose Header is a copy of req's
// with the transport's User-Agent set. Unlike req.Clone, it copies only
// what it changes: the copy shares req's URL, body and context, and the
// header's value slices, which a RoundTripper does not change (the
// contract that req itself, passed on when it has a User-Agent, relies
// on), each cut to its length so that an append to it copies rather than
// writes into req's. The request and the User-Agent's value are one
// allocation, the header two.
func (t *PoliteTransport) withUserAgent(req *http.Request) *http.Request {
	out := &uaRequest{req: *req, ua: [1]string{t.userAgent}}
	h := make(http.Header, len(req.Header)+1)
	for k, v := range req.Header {
		h[k] = v[:len(v):len(v)]
	}
	h["User-Agent"] = out.ua[:]
	out.req.Header = h
	return &out.req
}

// uaRequest is a request that withUserAgent made, with the backing array
// of its User-Agent's value.
type uaRequest struct {
	req http.Request
	ua  [1]string
}

// send passes req, admitted with l to the pacing key of tg, to the base
// transport and releases l with the Outcome on every path: when the base
// panics, the key's slot is released before the panic goes on to the
// caller.
func (t *PoliteTransport) send(l pace.Lease, tg *target, req *http.Request) (*http.Response, error) {
	released := false
	defer func() {
		if !released {
			t.release(l, tg.pacingKey, req, pace.Outcome{Class: pace.Neutral}, nil, nil)
		}
	}()
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp == nil {
		err = fmt.Errorf("polite: base RoundTripper %T returned no response and no error", t.base)
	}
	t.release(l, tg.pacingKey, req, classify(resp, err, req.Context().Err()), resp, err)
	released = true
	if err != nil && resp != nil {
		if resp.Body != nil {
			closeBody(resp.Body)
		}
		resp = nil
	}
	return resp, err
}

// release ends l's request req, admitted to key, with o, and reports what
// that changed in the key's backoff, with the response's status or the
// error that caused it, and the context of req, or of the request that
// started the robots.txt fetch req is part of. Events go out after the
// Pacer's release, outside its locks.
func (t *PoliteTransport) release(l pace.Lease, key string, req *http.Request, o pace.Outcome, resp *http.Response, err error) {
	c := t.pacer.Release(l, o)
	if !t.events.on() || !c.Raised && !c.Cleared {
		return
	}
	ctx := req.Context()
	if r := requesterOf(ctx); r != nil {
		ctx = r
	}
	ev := Event{Kind: EventBackoff, Context: ctx, Key: key, URL: req.URL.String(), Level: c.Level}
	if c.Raised {
		ev.Pause, ev.RetryAfter = c.Pause, o.RetryAfter
	}
	if resp != nil {
		ev.Status = resp.StatusCode
	} else {
		ev.Err = err
	}
	t.events.emit(ev)
}

// robotsTooLate returns a *pace.DeadlineError when a robots.txt fetch for
// k, and so the request that waits for it, could not start before ctx's
// deadline: the key is paused or paced, or requests are queued on it. It
// needs a [pace.ReadyPacer]; with another Pacer, or when it cannot tell,
// it returns nil and the request waits as long as ctx lets it.
func (t *PoliteTransport) robotsTooLate(ctx context.Context, k originKey) error {
	deadline, ok := ctx.Deadline()
	if !ok || t.ready == nil {
		return nil
	}
	key, err := t.PacingKeyContext(ctx, k.url())
	if err != nil {
		return nil // the fetch fails with the error, which says so
	}
	ks, err := t.ready.Ready(ctx, pace.Request{Key: key, Robots: true})
	if err != nil {
		return nil // a store that fails fails the fetch, which says so
	}
	if now := time.Now(); ks.Next.After(now) && !ks.Next.Before(deadline) {
		return &pace.DeadlineError{Key: key, Earliest: ks.Next, Deadline: deadline, Now: now, Cause: pace.CauseRobots}
	}
	return nil
}

// admit waits for the global limiter, if any, then for r's turn, telling
// ctx's Trace (pace.WithTrace) when the limiter holds r.
func (t *PoliteTransport) admit(ctx context.Context, r pace.Request) (pace.Lease, error) {
	if l := t.global; l != nil {
		if t.events.on() && l.Limit() != rate.Inf && l.Tokens() < 1 {
			if tr := pace.ContextTrace(ctx); tr != nil && tr.Wait != nil {
				tr.Wait(pace.CauseGlobal)
			}
		}
		if err := l.Wait(ctx); err != nil {
			return pace.Lease{}, globalError(ctx, l, r.Key, err)
		}
	}
	return t.pacer.Acquire(ctx, r)
}

// globalError returns the error of a request to key that the global
// limiter l did not let through with err: ctx's, when it has ended; a
// *pace.DeadlineError, when the limiter's next token comes after ctx's
// deadline (x/time/rate's "would exceed context deadline" does not match
// context.DeadlineExceeded: golang/go#54541); else err, wrapped, matching
// context.DeadlineExceeded when ctx has a deadline.
func globalError(ctx context.Context, l *rate.Limiter, key string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		return fmt.Errorf("polite: global limiter: %w", err)
	}
	now := time.Now()
	if lim, tokens := l.Limit(), l.TokensAt(now); lim > 0 && l.Burst() >= 1 && tokens < 1 {
		wait := time.Duration((1 - tokens) / float64(lim) * float64(time.Second))
		return &pace.DeadlineError{Key: key, Earliest: now.Add(wait), Deadline: deadline, Now: now, Cause: pace.CauseGlobal}
	}
	return fmt.Errorf("polite: global limiter: %v: %w", err, context.DeadlineExceeded)
}

// refusedByDeadline reports a request to u, with target tg and context
// ctx, that RoundTrip refuses with err, when err is a *pace.DeadlineError,
// with what w says held it up until then.
func (t *PoliteTransport) refusedByDeadline(ctx context.Context, tg *target, u *url.URL, err error, w *waitLog) {
	var de *pace.DeadlineError
	if errors.As(err, &de) {
		w.end(time.Now())
		t.events.emit(Event{Kind: EventRefused, Context: ctx, Key: tg.pacingKey, URL: u.String(), Err: err, Waits: w.waits})
	}
}

// CloseIdleConnections calls CloseIdleConnections on the base transport, if
// it has that method.
func (t *PoliteTransport) CloseIdleConnections() {
	type closeIdler interface{ CloseIdleConnections() }
	if ci, ok := t.base.(closeIdler); ok {
		ci.CloseIdleConnections()
	}
}
