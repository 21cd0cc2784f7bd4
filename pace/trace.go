package pace

import (
	"context"
	"time"
)

// This file says why a request waits: the causes, the hook a Pacer tells
// them to, and which term of the policy sets a key's next start.

// A Cause is what holds a request back from starting. Its value is the
// word that names it in events and traces, such as "crawl-delay".
type Cause string

// The causes a Pacer reports, each a term of the policy in the package
// documentation, and the two that a transport over the Pacer reports of
// its own (package polite). When two terms would hold a request until the
// same moment, either may be named.
const (
	// CausePace: the pace, from the base delay or the server's latency.
	CausePace Cause = "pace"
	// CauseCrawlDelay: the robots.txt Crawl-delay, which sets the pace.
	CauseCrawlDelay Cause = "crawl-delay"
	// CauseBackoff: the pause after a backoff signal, or the pace doubled
	// by the backoff level.
	CauseBackoff Cause = "backoff"
	// CauseRetryAfter: the pause that a server's Retry-After asked for.
	CauseRetryAfter Cause = "retry-after"
	// CauseQuota: the partition's rate-limit quota is exhausted until its
	// reset.
	CauseQuota Cause = "quota"
	// CauseQuotaSpread: the partition's low quota is spread until its
	// reset.
	CauseQuotaSpread Cause = "quota-spread"
	// CauseRateLimit: the gap that the server's 429s taught, for a rate
	// limit it does not state.
	CauseRateLimit Cause = "rate-limit"
	// CauseInFlight: the key has MaxInFlight requests in flight.
	CauseInFlight Cause = "in-flight"
	// CauseQueue: requests to the key that came first are waiting.
	CauseQueue Cause = "queue"
	// CauseGlobal: the transport's cap on requests to all keys together.
	CauseGlobal Cause = "global-limit"
	// CauseRobots: the transport's fetch of the origin's robots.txt,
	// which the request waits for before it asks for its turn.
	CauseRobots Cause = "robots.txt"
)

// A Trace hears why a request waits, as an [net/http/httptrace.ClientTrace]
// hears how a request connects. A caller sets it on the context it gives
// [Pacer.Acquire] ([WithTrace]); the Pacer looks it up ([ContextTrace])
// only when it is about to make the request wait, and calls its hooks on
// the goroutine that called Acquire, outside its locks, and before
// Acquire returns, never after: the caller may give the same Trace to its
// next request. A nil Trace, or a nil hook, hears nothing.
//
// A Pacer should report every wait, and a transport shows what it reports
// (package polite's events); one that reports nothing still paces
// correctly, and its requests' waits are shown without their cause.
// [github.com/polite-go/polite/politetest.RunPacer] holds a Pacer that
// reports causes to reporting the right ones.
type Trace struct {
	// Wait is called each time the Pacer sets the request to wait, with
	// what holds it: again when the cause changes (a response paused the
	// key, a slot freed and the pace now binds), and possibly with the
	// same cause when the Pacer looks again. Each call ends the wait that
	// the one before began.
	Wait func(Cause)
}

// traceKey is the key of a Trace in a context.
type traceKey struct{}

// WithTrace returns a copy of ctx that carries tr, for the Acquire it is
// given to.
func WithTrace(ctx context.Context, tr *Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, tr)
}

// ContextTrace returns the Trace that ctx carries, or nil.
func ContextTrace(ctx context.Context) *Trace {
	tr, _ := ctx.Value(traceKey{}).(*Trace)
	return tr
}

// wait tells tr, if it hears of waits, that its request waits for c.
func (tr *Trace) wait(c Cause) {
	if tr != nil && tr.Wait != nil {
		tr.Wait(c)
	}
}

// hears reports whether tr hears of waits.
func (tr *Trace) hears() bool { return tr != nil && tr.Wait != nil }

// A Wait is one stretch of a request's wait before it started, with the
// one cause that held it, as a caller records what its [Trace] heard: the
// transport of package polite shows a request's Waits in its events.
type Wait struct {
	// Cause is what held the request.
	Cause Cause
	// Start is when the stretch began.
	Start time.Time
	// Duration is how long it lasted.
	Duration time.Duration
}

// cause is the term of nextAllowed that sets the earliest start of a
// request of partition with Crawl-delay floor, at now.
func (p *Policy) cause(s *paceState, now instant, floor time.Duration, partition string) Cause {
	var t instant
	c := CausePace
	if s.started {
		floor = max(floor, s.floor)
		paced := p.jittered(p.pace(s, now, floor), s.u)
		gap := s.limit.gap(now)
		t = s.lastStart.add(max(paced, gap))
		if gap > paced {
			c = CauseRateLimit
		} else {
			c = p.paceCause(s, now, floor)
		}
	}
	if s.blockedUntil > t {
		t, c = s.blockedUntil, CauseBackoff
		if s.retryAfter {
			c = CauseRetryAfter
		}
	}
	if s.quotas != nil {
		if q, qc := p.quotaCause(s, now, partition); q > t {
			c = qc
		}
	}
	return c
}

// paceCause is the term of the pace, for a request with Crawl-delay floor
// at now, that sets it: the Crawl-delay, when it is longer than the rest;
// else the backoff level, when it doubles the pace; else the pace's own
// terms.
func (p *Policy) paceCause(s *paceState, now instant, floor time.Duration) Cause {
	paced := p.pace(s, now, 0)
	switch {
	case p.pace(s, now, floor) > paced:
		return CauseCrawlDelay
	case paced > p.paceAt(s, 0, 0):
		return CauseBackoff
	}
	return CausePace
}

// quotaCause is quotaNext, with what sets it: an exhausted quota or a low
// one's spread.
func (p *Policy) quotaCause(s *paceState, now instant, partition string) (instant, Cause) {
	var t instant
	c := CauseQuota
	for i := range s.quotas {
		if q := &s.quotas[i]; q.partition == partition {
			if q.until > t {
				t, c = q.until, CauseQuota
			}
			if next := q.next(p, now); next > t {
				t, c = next, CauseQuotaSpread
			}
		}
	}
	return t, c
}
