package polite

import (
	"math"
	"math/rand/v2"
	"time"
)

// This file is the adaptive per-host delay policy: plain functions over a
// host's plain state (paceState), so that any store of that state runs the
// same policy. The in-memory pacer (pacer.go) keeps the state and the queue
// of each host; the package documentation states the policy in prose.

// The fixed part of the policy.
const (
	maxRetryAfter = time.Hour        // cap on a server's Retry-After, and on a rate limit's reset
	maxLevel      = 8                // cap on the backoff level: pace × 2^8 at most
	recoverAfter  = 5                // fresh successes per level step down
	forgetAfter   = 30 * time.Minute // without a signal for this long, the level is forgotten
)

// delayPolicy is the configurable part of the policy. The options
// (options.go) validate every field.
type delayPolicy struct {
	baseDelay     time.Duration  // least gap between starts; 0 allowed
	jitter        float64        // upward-only jitter factor J, >= 0
	latencyFactor float64        // pace >= latencyFactor × latency estimate; 0 turns latency off
	maxDelay      time.Duration  // cap on the adaptive part; baseDelay stays a minimum above it
	maxCrawlDelay time.Duration  // a Crawl-delay is honoured up to this
	backoffBase   time.Duration  // pause after the first signal; 0 allowed
	maxBackoff    time.Duration  // cap on computed pauses
	rand          func() float64 // U[0,1), safe for concurrent use; nil means math/rand/v2.Float64
}

// paceState is what the policy knows of one host. Its zero value is a host
// never seen. A store keeps one per pacing key and guards it; the policy's
// functions neither lock nor keep it.
type paceState struct {
	started        bool          // lastStart and u are set
	lastStart      instant       // start of the last admitted request
	u              float64       // jitter draw for lastStart, in [0, 1]
	floor          time.Duration // Crawl-delay of the last admitted request, not clamped
	est            time.Duration // latency estimate: time from start to headers
	level          int           // backoff level, 0..maxLevel; see levelAt
	streak         int           // fresh successes since the level last changed
	blockedUntil   instant       // no start before this
	lastEscalation instant       // when the level last went up
	lastSignal     instant       // when the last signal was observed
	known          time.Duration // the largest Crawl-delay the key has shown, by a start or a robots.txt file
	unread         int           // robots.txt fetches started on the key whose file is not read yet
	spread         time.Duration // least gap that spreads a low rate-limit quota over its window
	spreadUntil    instant       // when that window ends
	requests       uint64        // starts, for statistics
	backoffs       uint64        // escalations, for statistics
	retryAfters    uint64        // signals that carried a Retry-After, for statistics
}

// pace is the least gap between two starts to s at now, before jitter: the
// larger of paceWithoutSpread and a low quota's spread while its window
// lasts.
func (p *delayPolicy) pace(s *paceState, now instant, floor time.Duration) time.Duration {
	d := p.paceWithoutSpread(s, now, floor)
	if now < s.spreadUntil {
		d = max(d, s.spread)
	}
	return d
}

// paceWithoutSpread is the pace of the package documentation's formula,
// where floor is the Crawl-delay of the request about to start. baseDelay
// bounds it below even when maxDelay is smaller.
func (p *delayPolicy) paceWithoutSpread(s *paceState, now instant, floor time.Duration) time.Duration {
	d := max(p.baseDelay, time.Duration(p.latencyFactor*float64(s.est)))
	for range s.levelAt(now) {
		if d >= p.maxDelay {
			break // and do not overflow
		}
		d *= 2
	}
	return max(min(d, p.maxDelay), p.baseDelay, min(floor, p.maxCrawlDelay))
}

// nextAllowed is the earliest start to s that the pace and any backoff
// allow, for a request with Crawl-delay floor. The gap after a request is
// at least its own Crawl-delay too, so that a request that knows none, a
// robots.txt fetch or the first request to another origin of the host,
// still waits the Crawl-delay the host's last request knew. The jitter
// never carries a quota's spread past the end of its window.
func (p *delayPolicy) nextAllowed(s *paceState, now instant, floor time.Duration) instant {
	t := s.blockedUntil
	if s.started {
		t = max(t, s.lastStart.add(p.jittered(p.paceWithoutSpread(s, now, max(floor, s.floor)), s.u)))
		if now < s.spreadUntil {
			t = max(t, min(s.lastStart.add(p.jittered(s.spread, s.u)), s.spreadUntil))
		}
	}
	return t
}

// earliest is a lower bound on the start of a request with Crawl-delay
// floor that has ahead requests to s before it, if those start: each gap
// is at least the base delay, and the request's own at least its
// Crawl-delay.
func (p *delayPolicy) earliest(s *paceState, now instant, floor time.Duration, ahead int) instant {
	if ahead == 0 {
		return p.nextAllowed(s, now, floor)
	}
	t := p.nextAllowed(s, now, 0)
	if ahead > 1 {
		t = t.add(time.Duration(ahead-1) * p.baseDelay)
	}
	return t.add(max(p.baseDelay, min(floor, p.maxCrawlDelay)))
}

// wakeAt is when a request waiting for next, the result of nextAllowed,
// should look again: next, or sooner when the backoff level is forgotten
// first, which may bring next forward.
func (p *delayPolicy) wakeAt(s *paceState, now, next instant) instant {
	if s.levelAt(now) > 0 {
		return min(next, s.lastSignal.add(forgetAfter))
	}
	return next
}

// start records a request with Crawl-delay floor starting at now. The
// caller has checked that nextAllowed has come.
func (p *delayPolicy) start(s *paceState, now instant, floor time.Duration) {
	s.started, s.lastStart, s.u, s.floor = true, now, p.draw(), floor
	s.known = max(s.known, floor)
	s.requests++
}

// fetchingRobots records that a robots.txt fetch started on s, whose file
// may ask for a Crawl-delay the key has not shown yet.
func (p *delayPolicy) fetchingRobots(s *paceState) { s.unread++ }

// fetchedRobots records that a fetch recorded by fetchingRobots ended with
// a file whose largest Crawl-delay is crawlDelay (0 for none, or no file).
func (p *delayPolicy) fetchedRobots(s *paceState, crawlDelay time.Duration) {
	s.unread = max(s.unread-1, 0)
	s.known = max(s.known, crawlDelay)
}

// A levelChange is how learn changed the backoff level.
type levelChange int

const (
	levelKept    levelChange = iota
	levelRaised              // by a signal
	levelCleared             // back to 0, by successes or a quiet spell
)

// learn updates s with the Outcome of a request that started at start and
// ended at now, and says how the backoff level changed.
func (p *delayPolicy) learn(s *paceState, start, now instant, o Outcome) levelChange {
	if o.Class == OutcomeIgnore {
		return levelKept
	}
	change := levelKept
	if s.level > 0 && s.levelAt(now) == 0 {
		s.level, s.streak = 0, 0
		change = levelCleared // forgotten
	}
	lat := max(time.Duration(now-start), 0)
	switch {
	case o.TimedOut: // the time it took is the timeout's, not the server's
	case o.Class == OutcomeSuccess:
		s.est = max(lat, (s.est+lat)/2) // up at once, down by halves
	default:
		s.est = max(s.est, lat) // fast errors must not speed us up
	}

	p.learnQuota(s, now, o.Quota)

	// Only requests started after the last escalation tell us something new:
	// the others were sent into the trouble that caused it.
	fresh := start > s.lastEscalation
	switch o.Class {
	case OutcomeSignal:
		s.lastSignal = now
		if fresh {
			s.level = min(s.level+1, maxLevel)
			s.streak = 0
			s.lastEscalation = now
			s.backoffs++
			pause := p.backoffBase // doubled per level, without overflowing
			for i := 1; i < s.level && pause < p.maxBackoff; i++ {
				pause *= 2
			}
			pause = p.jittered(min(pause, p.maxBackoff), p.draw())
			s.blockedUntil = max(s.blockedUntil, now.add(pause))
		}
		if o.RetryAfter > 0 { // a floor on the pause, never a ceiling
			s.retryAfters++
			s.blockedUntil = max(s.blockedUntil, now.add(min(o.RetryAfter, maxRetryAfter)))
		}
		if fresh {
			return levelRaised
		}
	case OutcomeSuccess:
		if fresh && s.level > 0 {
			s.streak++
			if s.streak >= recoverAfter {
				s.level--
				s.streak = 0
				if s.level == 0 {
					change = levelCleared
				}
			}
		}
	}
	return change
}

// learnQuota applies what a response said of the client's rate-limit
// quota: none left pauses the host until the quota resets; a low one, a
// quarter of the limit or less, is spread over the time until then. Both
// are capped at maxRetryAfter. A response without the fields changes
// nothing.
func (p *delayPolicy) learnQuota(s *paceState, now instant, q Quota) {
	if !q.Known {
		return
	}
	reset := min(q.Reset, maxRetryAfter)
	switch {
	case q.Remaining == 0:
		s.blockedUntil = max(s.blockedUntil, now.add(reset))
		s.spread = 0
	case q.Limit > 0 && q.Remaining <= q.Limit/4:
		s.spread, s.spreadUntil = reset/time.Duration(q.Remaining), now.add(reset)
	default:
		s.spread = 0
	}
}

// idle reports whether forgetting s at now would let no request start
// earlier than keeping it: its next start allowed, to a request with any
// Crawl-delay the key may ask for, and its level forgotten. A store
// forgets only idle hosts with nothing in flight.
func (p *delayPolicy) idle(s *paceState, now instant) bool {
	return p.startable(s, now) && now >= s.lastSignal.add(forgetAfter)
}

// startable reports whether a request to s, with any Crawl-delay the key
// may ask for, could start at now: the largest the key has shown, or the
// largest honoured while a robots.txt fetch has not been read.
func (p *delayPolicy) startable(s *paceState, now instant) bool {
	return now >= p.nextAllowed(s, now, p.forgetFloor(s))
}

// forgetFloor is the largest Crawl-delay a request to s may ask for, as
// far as the key has shown: a store must not forget s before it has
// passed since the last start.
func (p *delayPolicy) forgetFloor(s *paceState) time.Duration {
	if s.unread > 0 {
		return p.maxCrawlDelay
	}
	return s.known
}

// levelAt is s's backoff level at now: forgotten forgetAfter after the last
// signal.
func (s *paceState) levelAt(now instant) int {
	if s.level > 0 && time.Duration(now-s.lastSignal) >= forgetAfter {
		return 0
	}
	return s.level
}

// jittered stretches d by the factor 1 + jitter·u: jitter only ever adds.
func (p *delayPolicy) jittered(d time.Duration, u float64) time.Duration {
	extra := math.Round(float64(d) * p.jitter * u)
	if extra >= float64(math.MaxInt64-d) {
		return math.MaxInt64
	}
	return d + time.Duration(extra)
}

// draw returns a jitter draw clamped to [0, 1], or 0 without drawing when
// jitter is off.
func (p *delayPolicy) draw() float64 {
	if p.jitter == 0 {
		return 0
	}
	r := p.rand
	if r == nil {
		r = rand.Float64
	}
	u := r()
	if !(u > 0) { // NaN too
		return 0
	}
	return min(u, 1)
}
