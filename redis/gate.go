package politeredis

import (
	"context"
	"slices"
	"sync"
	"time"
)

// A gate keeps the Next calls of one process from asking Redis together
// when nothing is due: a call that learns that no host can start before
// an instant hushes the others until then, and they wait in the process,
// in the order they came, for the instant, or for a change that this
// process made (a URL added, a turn ended), either of which wakes one of
// them. A call that takes a URL wakes the next, since another host may be
// due as well, so that k hosts due at once cost about k+1 calls.
type gate struct {
	mu      sync.Mutex      // guards the fields below
	quiet   time.Time       // no call asks before this unless woken; zero or past: all may ask
	waiters []chan struct{} // calls waiting, first come first; each is woken once
	alarm   *time.Timer     // wakes a waiter at quiet; nil until needed
}

// wait returns when the caller may ask Redis: at once when no call has
// learned that nothing is due; otherwise when the instant it learned
// comes, or a change wakes the caller. It returns false when ctx ends
// first.
func (g *gate) wait(ctx context.Context) bool {
	g.mu.Lock()
	if !time.Now().Before(g.quiet) {
		g.mu.Unlock()
		return true
	}
	w := make(chan struct{}, 1)
	g.waiters = append(g.waiters, w)
	g.armLocked()
	g.mu.Unlock()
	select {
	case <-w:
		return true
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if i := slices.Index(g.waiters, w); i >= 0 {
		g.waiters = slices.Delete(g.waiters, i, i+1)
	} else {
		g.wakeLocked(1) // woken meanwhile: wake another in its place
	}
	return false
}

// hush records that nothing is due before at, as a call just learned.
func (g *gate) hush(at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.quiet = at
	g.armLocked()
}

// open wakes n waiting calls (all when n < 0) and lets every call ask:
// something changed.
func (g *gate) open(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.quiet = time.Time{}
	g.wakeLocked(n)
}

// learn takes in a reply's news: that a host is due at due (now or
// earlier: one call may ask now; later: the calls hushed until after it
// are hushed until then), or that the frontier holds nothing, for which
// every waiting call asks, to return ErrEmpty.
func (g *gate) learn(due time.Time, empty bool) {
	switch {
	case empty:
		g.open(-1)
	case !due.After(time.Now()):
		g.open(1)
	default:
		g.mu.Lock()
		defer g.mu.Unlock()
		if due.Before(g.quiet) {
			g.quiet = due
			g.armLocked()
		}
	}
}

// wakeLocked wakes n waiters, first come first; all when n < 0.
func (g *gate) wakeLocked(n int) {
	if n < 0 || n > len(g.waiters) {
		n = len(g.waiters)
	}
	for _, w := range g.waiters[:n] {
		w <- struct{}{}
	}
	g.waiters = slices.Delete(g.waiters, 0, n)
}

// armLocked sets the alarm for quiet, when calls wait.
func (g *gate) armLocked() {
	if len(g.waiters) == 0 {
		return
	}
	d := time.Until(g.quiet)
	if g.alarm == nil {
		g.alarm = time.AfterFunc(d, g.ring)
		return
	}
	g.alarm.Reset(d)
}

// ring is the alarm's: quiet has come, or was set again.
func (g *gate) ring() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if time.Now().Before(g.quiet) {
		g.armLocked()
		return
	}
	g.wakeLocked(1)
}

// stop stops the alarm, for the end of the frontier.
func (g *gate) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.alarm != nil {
		g.alarm.Stop()
	}
}
