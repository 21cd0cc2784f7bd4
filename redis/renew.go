package politeredis

import (
	"sync"
	"time"
)

// maxRenew bounds how long a renewer keeps one lease alive: a request
// whose headers have not come, or a turn not ended, after an hour has
// been forgotten by its caller, and its lease is left to expire.
const maxRenew = time.Hour

// A renewer keeps the leases of this process alive while their requests
// or turns run, so that a lease can be short: when the process dies, its
// leases run out within one lease duration, rather than holding a host
// for the longest a request may take. Every interval it renews every lease
// it holds in one batch (renew sends one pipeline to each server), until
// none is left; its goroutine starts with the first lease and ends with
// the last.
type renewer[T comparable] struct {
	every time.Duration   // between two batches: a third of the lease, so that one lost batch costs no lease
	renew func(batch []T) // renews the leases of batch, on one goroutine at a time
	mu    sync.Mutex      // guards live and quit
	live  map[T]time.Time // the leases held, each with when it stops being renewed
	quit  chan struct{}   // closed when the goroutine should end; nil when none runs
}

// newRenewer returns a renewer of leases that expire lease after each
// renewal.
func newRenewer[T comparable](lease time.Duration, renew func(batch []T)) *renewer[T] {
	return &renewer[T]{every: lease / 3, renew: renew}
}

// add starts renewing x.
func (r *renewer[T]) add(x T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == nil {
		r.live = make(map[T]time.Time)
	}
	r.live[x] = time.Now().Add(maxRenew)
	if r.quit == nil {
		r.quit = make(chan struct{})
		go r.loop(r.quit)
	}
}

// drop stops renewing x, and the goroutine with the last lease.
func (r *renewer[T]) drop(x T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.live, x)
	if len(r.live) == 0 && r.quit != nil {
		close(r.quit)
		r.quit = nil
	}
}

// close stops renewing every lease.
func (r *renewer[T]) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.live)
	if r.quit != nil {
		close(r.quit)
		r.quit = nil
	}
}

// loop renews the leases every interval until quit is closed, or no
// lease is left to renew.
func (r *renewer[T]) loop(quit chan struct{}) {
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
		}
		r.mu.Lock()
		now := time.Now()
		var batch []T
		for x, until := range r.live {
			if now.After(until) {
				delete(r.live, x)
				continue
			}
			batch = append(batch, x)
		}
		if len(batch) == 0 {
			if r.quit == quit {
				r.quit = nil
			}
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		r.renew(batch)
	}
}
