package pace

import (
	"math"
	"time"
)

// This file keeps the in-memory Pacer within Config.MaxKeys: sweeps that
// forget the keys with nothing left to enforce.

// sweepDue reports whether inserting a host should first sweep.
func (p *Memory) sweepDue() bool {
	n := p.size.Load()
	return n >= p.sweepAt.Load() ||
		n > int64(p.cfg.MaxKeys) && p.clock.now() >= instant(p.retryAt.Load())
}

// sweep evicts the hosts that have nothing left to enforce, shard by
// shard; if that leaves more than maxHosts, it also evicts hosts whose
// pause and pace are over, forgetting only a remembered backoff level.
// Hosts paused, waited on or busy are kept. It sets the size of the next
// sweep so that sweeping costs O(1) per insert, and, when the pacer is
// still over its bound, the time of the next: when a kept host may be
// free, but after at least four times this sweep's length, so that sweeps
// take a fifth of a core at most. It does nothing if another sweep made
// room meanwhile. It returns the keys evicted when anyone listens to
// events. The caller holds no lock.
func (p *Memory) sweep() (evicted []string) {
	p.sweepMu.Lock()
	defer p.sweepMu.Unlock()
	if !p.sweepDue() {
		return nil
	}
	began := p.clock.now()
	evicted = p.evict(evicted, func(h *hostState, now instant) bool { return h.pol.idle(&h.pace, now) })
	if p.size.Load() > int64(p.cfg.MaxKeys) {
		evicted = p.evict(evicted, func(h *hostState, now instant) bool { return h.pol.startable(&h.pace, now) })
	}
	now := p.clock.now()
	p.sweepAt.Store(max(int64(p.cfg.MaxKeys), 2*p.size.Load()))
	next := instant(math.MaxInt64) // within the bound: only sweepAt matters
	if p.size.Load() > int64(p.cfg.MaxKeys) {
		next = max(now.add(4*time.Duration(now-began)), p.freeAt(now))
	}
	p.retryAt.Store(int64(next))
	return evicted
}

// evict drops the hosts with no users and nothing in flight for which
// drop, called with the host's mu held, returns true, and appends their
// keys to evicted when anyone listens to events. The caller holds sweepMu.
func (p *Memory) evict(evicted []string, drop func(h *hostState, now instant) bool) []string {
	for i := range p.shards {
		s := &p.shards[i]
		s.mu.Lock()
		now := p.clock.now()
		for key, h := range s.hosts {
			if h.users.Load() == 0 && p.forgettable(h, now, drop) {
				delete(s.hosts, key)
				p.size.Add(-1)
				if p.cfg.Evicted != nil {
					evicted = append(evicted, key)
				}
			}
		}
		s.mu.Unlock()
	}
	return evicted
}

// freeAt returns the earliest instant at which a host with no users and
// nothing in flight may start again, and so be evicted; hosts busy now are
// counted as free a second from now. The caller holds sweepMu.
func (p *Memory) freeAt(now instant) instant {
	at := now.add(time.Second)
	for i := range p.shards {
		s := &p.shards[i]
		s.mu.Lock()
		for _, h := range s.hosts {
			h.mu.Lock()
			if h.inFlight == 0 && h.users.Load() == 0 {
				at = min(at, h.pol.free(&h.pace, now))
			}
			h.mu.Unlock()
		}
		s.mu.Unlock()
	}
	return at
}

// forgettable reports whether h has nothing in flight and drop says it may
// go.
func (p *Memory) forgettable(h *hostState, now instant, drop func(*hostState, instant) bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inFlight == 0 && drop(h, now)
}
