package polite

import (
	"net/http"
	"time"
)

// Readiness says when a request could start, as things stand; see
// [PoliteTransport.Ready].
type Readiness struct {
	// At is the earliest start that the key's pace and backoff allow,
	// counting the requests queued ahead; a time not after now means the
	// key is ready. The zero time means a key the transport knows nothing
	// of, ready at once, or a Pacer that is not a [ReadyPacer].
	At time.Time
	// Busy reports that the host has all its requests in flight, or
	// requests waiting for their turn: a request would queue behind them,
	// however early At is.
	Busy bool
	// RobotsKnown reports that the origin's robots.txt is cached and
	// fresh, or not needed (robots.txt is off for the request): otherwise
	// the request would first wait for a fetch.
	RobotsKnown bool
	// Policy is the pacing policy in force for the request's key,
	// Effective: the transport's, or the one a rule or [WithPacingFunc]
	// gives the key.
	Policy PacingPolicy
}

// Ready reports when a request like req could start, as things stand: the
// host's next allowed start, counting its backoff and, when the origin's
// robots.txt is cached, its Crawl-delay; whether the host is busy; and
// whether robots.txt is known. It sends, fetches and reserves nothing (a
// [ReadyPacer] that a fleet shares reads its state, one call), so
// a crawler's frontier can hand its workers hosts that are ready instead
// of parking a worker on a busy one; a request sent later may still wait,
// if others got there first.
func (t *PoliteTransport) Ready(req *http.Request) (Readiness, error) {
	tg, err := t.queryTarget("Ready", req)
	if err != nil {
		return Readiness{}, err
	}
	var floor time.Duration
	known := tg.mode == RobotsOff || tg.robotsPath
	if !known {
		if r := t.robots.peek(tg.origin); r != nil {
			known = true
			floor = r.crawlDelay(tg.token)
		}
	}
	r := Readiness{RobotsKnown: known, Policy: t.policyOf(tg)}
	if rp := t.pacer.ready; rp != nil {
		ks, err := rp.Ready(req.Context(), tg.pacingKey, tg.partition, floor)
		if err != nil {
			return Readiness{}, err
		}
		r.At, r.Busy = ks.Next, ks.Busy
	}
	return r, nil
}
