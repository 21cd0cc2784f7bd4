package polite

import (
	"sync"
	"time"

	"github.com/polite-go/polite/pace"
)

// A waitLog records what holds one request up before it is sent, as
// [Event].Waits shows it: the stretches its Trace hears of, each from the
// call that began it to the next call, or to end. RoundTrip takes one only
// when some hook listens, and puts it back when it returns (but for a
// panic of the base, which leaves it to the collector); the Trace is
// called on RoundTrip's goroutine alone, and never after Acquire returns
// (pace.Trace), so the log needs no lock, and serves request after
// request.
type waitLog struct {
	tr    pace.Trace
	waits []pace.Wait
	open  bool // the last of waits has not ended
}

// waitLogs keeps the logs of requests that have returned, for the next:
// a log and its Trace's hook are made once.
var waitLogs = sync.Pool{New: func() any {
	w := new(waitLog)
	w.tr.Wait = w.wait
	return w
}}

// getWaitLog returns an empty log.
func getWaitLog() *waitLog { return waitLogs.Get().(*waitLog) }

// put gives w back for another request. Its waits, which an event may
// hold, are left to the event.
func (w *waitLog) put() {
	w.waits, w.open = nil, false
	waitLogs.Put(w)
}

// list returns the stretches w recorded, or nil for a nil w.
func (w *waitLog) list() []pace.Wait {
	if w == nil {
		return nil
	}
	return w.waits
}

// trace returns the Trace that records into w, or nil for a nil w.
func (w *waitLog) trace() *pace.Trace {
	if w == nil {
		return nil
	}
	return &w.tr
}

// wait begins a stretch held by c, ending the one before, unless that one
// is c's too and goes on.
func (w *waitLog) wait(c pace.Cause) {
	if n := len(w.waits); w.open && w.waits[n-1].Cause == c {
		return
	}
	now := time.Now()
	w.end(now)
	w.waits = append(w.waits, pace.Wait{Cause: c, Start: now})
	w.open = true
}

// end ends the stretch under way, if any, at now.
func (w *waitLog) end(now time.Time) {
	if w.open {
		last := &w.waits[len(w.waits)-1]
		last.Duration = now.Sub(last.Start)
		w.open = false
	}
}
