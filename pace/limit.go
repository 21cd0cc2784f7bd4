package pace

import "time"

// This file learns a rate limit that a server does not state but keeps,
// refusing with 429 the requests that come faster: the shape of TCP's
// slow-start threshold, searched for rather than guessed. A 429 says that
// the gap between its request's start and the one before was too short
// (bad). Until a gap is known to be taken (good), the pace is at least half
// again the longest bad gap; once one is, the pace tries halfway between
// the two, and each trial that confirmAfter fresh successes pass becomes
// the new good gap, while a 429 makes it the new bad one. The search ends
// when the two are within an eighth of each other, and the pace then stays
// at the good gap. After probeAfter successes there, it probes an eighth
// faster: a 429 keeps the good gap and doubles the successes before the
// next probe, up to 2^maxMissed times probeAfter, and confirmProbe
// successes resume the search below it. So a limit that stays put costs one
// 429 for each probe, fewer and fewer of them: at one request each 3
// seconds, probes 5, 10, 20 and then 40 minutes apart. The confirmations
// outnumber what a burst lets through: a server that keeps a limit of one
// request every L with a burst of b takes about b·L/(L−g) requests at a gap
// g below L before it refuses one, about 9 at a probe an eighth faster with
// a burst of 1 (nginx's limit_req with nodelay; bench/nginx), so
// confirmAfter takes a trial gap as good only when it is within a tenth of
// L for such a burst, and confirmProbe a probe only when the limit did
// move. So a steady limit costs a handful of 429s, found in a few steps,
// and not one per recovery from backoff; a limit that moves is followed,
// tighter at the next 429, looser at the next probe; and what was learned
// is forgotten with the backoff level, forgetAfter after the last 429.

// The fixed part of the search.
const (
	confirmAfter = 10  // fresh successes at a trial gap that make it good
	confirmProbe = 20  // fresh successes at a probe's gap that make it good
	probeAfter   = 100 // fresh successes at the found gap before a faster probe
	maxMissed    = 3   // probes refused in a row that double probeAfter
)

// rateLimit is what the 429s of a key taught of a rate limit the server
// does not state. Its zero value has learned nothing.
type rateLimit struct {
	bad     time.Duration // the longest gap between starts known to draw a 429; 0: none
	good    time.Duration // a gap known to be taken, longer than bad; 0: none yet
	probe   bool          // the search ended, and a faster gap is tried
	missed  int           // probes refused since one was last taken, at most maxMissed
	streak  int           // fresh successes since the gap last changed
	lastHit instant       // when the last 429 came
}

// gap is the least gap between two starts that r allows at now: 0 when
// nothing was learned, or it was forgotten.
func (r *rateLimit) gap(now instant) time.Duration {
	switch {
	case r.bad == 0 || time.Duration(now-r.lastHit) >= forgetAfter:
		return 0
	case r.good == 0:
		return r.bad + r.bad/2
	case r.probe:
		return r.good - r.good/8
	case r.found():
		return r.good
	}
	return (r.bad + r.good) / 2
}

// found reports whether the search has ended: good is within an eighth of
// bad.
func (r *rateLimit) found() bool { return r.good > 0 && r.good-r.bad <= r.good/8 }

// refused learns from a 429 to a request that started gap after the start
// before it, at now.
func (r *rateLimit) refused(gap time.Duration, now instant) {
	if r.bad > 0 && time.Duration(now-r.lastHit) >= forgetAfter {
		*r = rateLimit{} // forgotten: the limit may have moved
	}
	switch {
	case r.probe && gap < r.good:
		// The limit is where it was: back to the good gap, found again,
		// and the next probe later.
		r.bad = max(r.bad, r.good-r.good/8)
		r.missed = min(r.missed+1, maxMissed)
	default:
		r.bad = min(max(r.bad, gap), MaxPause)
		if r.good <= r.bad {
			r.good = 0 // the limit moved tighter: search again
		}
	}
	r.probe, r.streak, r.lastHit = false, 0, now
}

// took learns from a fresh success, one that started after the last 429,
// gap after the start before it: confirmAfter of them at the gap tried
// (confirmProbe at a probe's), or within an eighth above it, make it good,
// and probeAfter of them at the found gap, doubled for each probe missed,
// start a probe. A success at a longer gap proves nothing of the
// gap tried.
func (r *rateLimit) took(gap time.Duration, now instant) {
	trial := r.gap(now)
	if trial == 0 || gap > trial+trial/8 {
		return
	}
	r.streak++
	switch {
	case r.probe && r.streak >= confirmProbe:
		// The limit loosened: search below the probe's gap.
		r.good, r.bad, r.probe, r.streak, r.missed = trial, r.bad/2, false, 0, 0
	case !r.probe && !r.found() && r.streak >= confirmAfter:
		r.good, r.streak = trial, 0
	case !r.probe && r.found() && r.streak >= probeAfter<<r.missed:
		r.probe, r.streak = true, 0
	}
}
