package pace

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// This file is the adaptive per-key delay policy: methods of Policy over a
// key's plain state (paceState), so that any store of that state runs the
// same policy. The in-memory Pacer (memory.go) keeps the state and the
// queue of each key; the package documentation states the policy in prose.
// Every field of the Policy is read through Value, which reads None.

// The fixed part of the policy.
const (
	maxLevel      = 8                // cap on the backoff level: pace × 2^8 at most
	forgetAfter   = 30 * time.Minute // without a signal for this long, the level is forgotten
	maxPartitions = 32               // quota partitions a key keeps holds for
)

// paceState is what the policy knows of one host. Its zero value is a host
// never seen. A store keeps one per pacing key and guards it; the policy's
// functions neither lock nor keep it.
type paceState struct {
	started        bool          // lastStart and u are set
	retryAfter     bool          // a Retry-After set blockedUntil, rather than a backoff pause
	lastStart      instant       // start of the last admitted request
	prevStart      instant       // start of the one before it; 0 for none
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
	quotas         []quotaHold   // the rate-limit quotas that hold or spread a partition; at most maxPartitions
	limit          rateLimit     // what 429s taught of a rate limit the server does not state (limit.go)
	requests       uint64        // starts, for statistics
	backoffs       uint64        // escalations, for statistics
	retryAfters    uint64        // signals that carried a Retry-After, for statistics
}

// A quotaHold is what a rate-limit quota of one partition of a key holds:
// the requests of that partition only. A partition is named by the
// request (Request.Partition) and by the server (resource: the partition
// its fields named; "" for none). A request waits for the holds of its own
// partition, whatever the resource, since the transport cannot know before
// sending which of the server's resources it spends; a response of one
// resource changes only that resource's hold.
//
// A hold counts what its partition spends: the starts it may still make
// in the server's window are at most what each answer said was left, less
// the partition's other requests in flight then, which the server may not
// have counted yet, and less the starts made since; so requests started
// together before the next answer do not overshoot the quota, however
// their answers come back. When the window ends, the limit, when the
// server told it, refills the count for a window as long as the longest
// reset told.
type quotaHold struct {
	partition, resource string
	until               instant       // no start in the partition before this: its quota is exhausted
	spread              time.Duration // least gap between the partition's starts until spreadUntil
	spreadUntil         instant       // when the window of a low quota ends
	lastStart           instant       // the partition's last start, for the spread
	u                   float64       // the jitter draw of that start
	left                int64         // starts the partition may still make before reset
	inFlight            int           // the partition's requests started since the hold was made and not yet answered
	limit               int64         // the window's quota; 0 when not told
	reset               instant       // when the window ends
	window              time.Duration // the longest reset told: the window's length, as far as it is known
}

// over reports whether q holds nothing at now, nor counts anything the
// next window needs: a window has passed since its reset.
func (q *quotaHold) over(now instant) bool {
	return now >= q.until && now >= q.spreadUntil && now >= q.reset.add(q.window)
}

// spend records a start of q's partition at now, with jitter draw u: it
// spends one of what is left, after refilling it from the limit when the
// window has ended, and holds the partition until the window's end when
// nothing is left.
func (q *quotaHold) spend(now instant, u float64) {
	q.lastStart, q.u = now, u
	q.inFlight++
	if now >= q.reset {
		if q.limit == 0 || q.window <= 0 {
			q.left = math.MaxInt64 // a new window of an untold size: the next answer says
			return
		}
		q.left = q.limit
		q.reset = q.reset.add((time.Duration(now-q.reset)/q.window + 1) * q.window)
	}
	if q.left--; q.left <= 0 {
		q.until = max(q.until, q.reset)
	}
}

// next is the earliest start q allows at now, with the jitter of p. The
// jitter never carries the spread past the end of its window.
func (q *quotaHold) next(p *Policy, now instant) instant {
	t := q.until
	if now < q.spreadUntil {
		t = max(t, min(q.lastStart.add(p.jittered(q.spread, q.u)), q.spreadUntil))
	}
	return t
}

// quotaNext is the earliest start the quotas of partition allow at now.
func (p *Policy) quotaNext(s *paceState, now instant, partition string) instant {
	var t instant
	for i := range s.quotas {
		if q := &s.quotas[i]; q.partition == partition {
			t = max(t, q.next(p, now))
		}
	}
	return t
}

// quotaSpread is the largest spread of partition's quotas at now.
func (s *paceState) quotaSpread(now instant, partition string) time.Duration {
	var d time.Duration
	for i := range s.quotas {
		if q := &s.quotas[i]; q.partition == partition && now < q.spreadUntil {
			d = max(d, q.spread)
		}
	}
	return d
}

// quotaUntil is when partition's exhausted quotas reset; 0 for none.
func (s *paceState) quotaUntil(partition string) instant {
	var t instant
	for i := range s.quotas {
		if q := &s.quotas[i]; q.partition == partition {
			t = max(t, q.until)
		}
	}
	return t
}

// quotasFree is the earliest start that every partition's quotas allow
// at now.
func (p *Policy) quotasFree(s *paceState, now instant) instant {
	var t instant
	for i := range s.quotas {
		t = max(t, s.quotas[i].next(p, now))
	}
	return t
}

// hold returns the hold of partition and resource, adding one when add is
// true (nil when it is not there and add is false). It first drops the
// holds that are over; a key that holds maxPartitions already drops the
// one that ends first.
func (s *paceState) hold(now instant, partition, resource string, add bool) *quotaHold {
	s.quotas = slices.DeleteFunc(s.quotas, func(q quotaHold) bool { return q.over(now) })
	for i := range s.quotas {
		if q := &s.quotas[i]; q.partition == partition && q.resource == resource {
			return q
		}
	}
	if !add {
		if len(s.quotas) == 0 {
			s.quotas = nil
		}
		return nil
	}
	if len(s.quotas) >= maxPartitions {
		first := 0
		for i := range s.quotas {
			if end(&s.quotas[i]) < end(&s.quotas[first]) {
				first = i
			}
		}
		s.quotas = slices.Delete(s.quotas, first, first+1)
	}
	s.quotas = append(s.quotas, quotaHold{partition: partition, resource: resource})
	return &s.quotas[len(s.quotas)-1]
}

// end is when q holds nothing any more.
func end(q *quotaHold) instant { return max(q.until, q.spreadUntil) }

// pace is the least gap between two starts to s at now, before jitter: the
// pace of the package documentation's formula, where floor is the
// Crawl-delay of the request about to start. baseDelay bounds it below even
// when maxDelay is smaller. A quota's spread is not part of it: it holds
// only its partition (quotaNext).
func (p *Policy) pace(s *paceState, now instant, floor time.Duration) time.Duration {
	return p.paceAt(s, s.levelAt(now), floor)
}

// paceAt is the pace at backoff level level.
func (p *Policy) paceAt(s *paceState, level int, floor time.Duration) time.Duration {
	base, maxDelay := Value(p.BaseDelay), Value(p.MaxDelay)
	d := max(base, time.Duration(Value(p.LatencyFactor)*float64(s.est)))
	for range level {
		if d >= maxDelay {
			break // and do not overflow
		}
		d *= 2
	}
	return max(min(d, maxDelay), base, min(floor, Value(p.MaxCrawlDelay)))
}

// nextAllowed is the earliest start to s that the pace, any backoff and
// the quotas of its partition allow, for a request with Crawl-delay floor.
// The gap after a request is at least its own Crawl-delay too, so that a
// request that knows none, a robots.txt fetch or the first request to
// another origin of the host, still waits the Crawl-delay the host's last
// request knew.
func (p *Policy) nextAllowed(s *paceState, now instant, floor time.Duration, partition string) instant {
	// keyNext's, written out: this runs for every request.
	t := s.blockedUntil
	if s.started {
		t = max(t, s.lastStart.add(max(p.jittered(p.pace(s, now, max(floor, s.floor)), s.u), s.limit.gap(now))))
	}
	if s.quotas != nil {
		t = max(t, p.quotaNext(s, now, partition))
	}
	return t
}

// keyNext is nextAllowed without the quotas: what holds every request to
// the key.
func (p *Policy) keyNext(s *paceState, now instant, floor time.Duration) instant {
	t := s.blockedUntil
	if s.started {
		t = max(t, s.lastStart.add(max(p.jittered(p.pace(s, now, max(floor, s.floor)), s.u), s.limit.gap(now))))
	}
	return t
}

// earliest is a lower bound on the start of a request with Crawl-delay
// floor that has ahead requests to s before it, if those start: each gap
// is at least the base delay and a learned limit's, and the request's own
// at least its Crawl-delay.
func (p *Policy) earliest(s *paceState, now instant, floor time.Duration, partition string, ahead int) instant {
	if ahead == 0 {
		return p.nextAllowed(s, now, floor, partition)
	}
	t := p.keyNext(s, now, 0)
	least := max(Value(p.BaseDelay), s.limit.gap(now))
	if ahead > 1 {
		t = t.add(time.Duration(ahead-1) * least)
	}
	t = t.add(max(least, min(floor, Value(p.MaxCrawlDelay))))
	if s.quotas != nil {
		t = max(t, p.quotaNext(s, now, partition))
	}
	return t
}

// wakeAt is when a request waiting for next, the result of nextAllowed,
// should look again: next, or sooner when the backoff level is forgotten
// first, which may bring next forward.
func (p *Policy) wakeAt(s *paceState, now, next instant) instant {
	if s.levelAt(now) > 0 {
		return min(next, s.lastSignal.add(forgetAfter))
	}
	return next
}

// start records a request of partition with Crawl-delay floor starting
// at now, its jitter drawn from rnd. The caller has checked that
// nextAllowed has come.
func (p *Policy) start(s *paceState, now instant, floor time.Duration, partition string, rnd func() float64) {
	if s.started {
		s.prevStart = s.lastStart
	}
	s.started, s.lastStart, s.u, s.floor = true, now, p.draw(rnd), floor
	s.known = max(s.known, floor)
	s.requests++
	if s.quotas != nil {
		for i := range s.quotas {
			if q := &s.quotas[i]; q.partition == partition {
				q.spend(now, s.u)
			}
		}
	}
}

// fetchingRobots records that a robots.txt fetch started on s, whose file
// may ask for a Crawl-delay the key has not shown yet.
func (s *paceState) fetchingRobots() { s.unread++ }

// robotsRead records that a fetch recorded by fetchingRobots ended with a
// file whose largest Crawl-delay is crawlDelay (0 for none, or no file).
func (s *paceState) robotsRead(crawlDelay time.Duration) {
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

// learn updates s with the Outcome of a request of partition that started
// at start and ended at now, and says how the backoff level changed. A
// pause's jitter is drawn from rnd.
func (p *Policy) learn(s *paceState, start, now instant, partition string, o *Outcome, rnd func() float64) levelChange {
	if s.quotas != nil {
		for i := range s.quotas {
			if q := &s.quotas[i]; q.partition == partition {
				q.inFlight = max(q.inFlight-1, 0)
			}
		}
	}
	if o.Class == Ignore {
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
	case o.Class == Success:
		s.est = max(lat, (s.est+lat)/2) // up at once, down by halves
	default:
		s.est = max(s.est, lat) // fast errors must not speed us up
	}

	if o.Quota.Known {
		p.learnQuota(s, start, now, partition, &o.Quota)
	}

	// Only requests started after the last escalation tell us something new:
	// the others were sent into the trouble that caused it.
	fresh := start > s.lastEscalation
	switch o.Class {
	case Signal:
		s.lastSignal = now
		if fresh && o.RateLimited {
			s.limit.refused(p.gapBefore(s, start, now), now)
		}
		if fresh {
			s.level = min(s.level+1, maxLevel)
			s.streak = 0
			s.lastEscalation = now
			s.backoffs++
			pause := Value(p.BackoffBase) // doubled per level, without overflowing
			for i := 1; i < s.level && pause < Value(p.MaxBackoff); i++ {
				pause *= 2
			}
			pause = p.jittered(min(pause, Value(p.MaxBackoff)), p.draw(rnd))
			if end := now.add(pause); end > s.blockedUntil {
				s.blockedUntil, s.retryAfter = end, false
			}
		}
		if o.RetryAfter > 0 { // a floor on the pause, never a ceiling
			s.retryAfters++
			if end := now.add(min(o.RetryAfter, MaxPause)); end >= s.blockedUntil {
				s.blockedUntil, s.retryAfter = end, true
			}
		}
		if fresh {
			return levelRaised
		}
	case Success:
		if fresh && s.limit.bad > 0 {
			s.limit.took(p.gapBefore(s, start, now), now)
		}
		if fresh && s.level > 0 {
			s.streak++
			if Value(p.RecoverAfter) > 0 && s.streak >= Value(p.RecoverAfter) {
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

// gapBefore is the gap between the start of a request that started at
// start and the start before it, as far as s knows it: the pace in force,
// when other requests started since.
func (p *Policy) gapBefore(s *paceState, start, now instant) time.Duration {
	if start == s.lastStart && s.prevStart != 0 {
		return time.Duration(start - s.prevStart)
	}
	return max(p.pace(s, now, s.floor), s.limit.gap(now))
}

// learnQuota applies what the response to a request of partition, started
// at start, said of the client's rate-limit quota, to that partition and
// the resource the server named. What is left is at most what it said,
// less the partition's other requests in flight, which the server may not
// have counted: an answer can only lower the count, but the first of a new
// window, which sets it. None left holds the partition until the quota
// resets, and a low count, a quarter of the limit or less, is spread over
// the time until then, the last start an even share before the reset.
// Resets are capped at MaxPause. A response without the fields changes
// nothing.
func (p *Policy) learnQuota(s *paceState, start, now instant, partition string, q *Quota) {
	if !q.Known {
		return
	}
	reset := min(q.Reset, MaxPause)
	h := s.hold(now, partition, q.Partition, true)
	left := q.Remaining - int64(h.inFlight)
	if now >= h.reset { // the first answer of a window
		h.left = left
		h.until = 0
	} else {
		h.left = min(h.left, left)
	}
	h.reset, h.window = now.add(reset), max(h.window, reset)
	if q.Limit > 0 {
		h.limit = q.Limit
	}
	switch {
	case h.left <= 0:
		h.until = max(h.until, h.reset)
		h.spreadUntil = 0
	case h.limit > 0 && h.left <= h.limit/4:
		h.spread, h.spreadUntil = reset/time.Duration(h.left+1), now.add(reset)
		if start > h.lastStart {
			h.lastStart, h.u = start, 0 // that start's draw, when the key still knows it
			if start == s.lastStart {
				h.u = s.u
			}
		}
	default:
		h.spreadUntil = 0
	}
}

// idle reports whether forgetting s at now would let no request start
// earlier than keeping it: its next start allowed, to a request with any
// Crawl-delay the key may ask for, and its level forgotten. A store
// forgets only idle hosts with nothing in flight.
func (p *Policy) idle(s *paceState, now instant) bool {
	return p.startable(s, now) && now >= s.lastSignal.add(forgetAfter)
}

// startable reports whether a request to s, of any partition and with any
// Crawl-delay the key may ask for, could start at now: the largest the key
// has shown, or the largest honoured while a robots.txt fetch has not been
// read.
func (p *Policy) startable(s *paceState, now instant) bool {
	return now >= p.free(s, now)
}

// free is the earliest start that s allows a request of any partition and
// with any Crawl-delay the key may ask for: a store must not forget s
// before it.
func (p *Policy) free(s *paceState, now instant) instant {
	return max(p.keyNext(s, now, p.forgetFloor(s)), p.quotasFree(s, now))
}

// forgetFloor is the largest Crawl-delay a request to s may ask for, as
// far as the key has shown: a store must not forget s before it has
// passed since the last start.
func (p *Policy) forgetFloor(s *paceState) time.Duration {
	if s.unread > 0 {
		return Value(p.MaxCrawlDelay)
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
func (p *Policy) jittered(d time.Duration, u float64) time.Duration {
	if u == 0 {
		return d // no jitter drawn, or none: spare the float work
	}
	extra := math.Round(float64(d) * Value(p.Jitter) * u)
	if extra >= float64(math.MaxInt64-d) {
		return math.MaxInt64
	}
	return d + time.Duration(extra)
}

// draw returns a jitter draw from rnd (nil: math/rand/v2's), clamped to
// [0, 1], or 0 without drawing when jitter is off.
func (p *Policy) draw(rnd func() float64) float64 {
	if Value(p.Jitter) == 0 {
		return 0
	}
	if rnd == nil {
		rnd = rand.Float64
	}
	u := rnd()
	if !(u > 0) { // NaN too
		return 0
	}
	return min(u, 1)
}
