package pace

import (
	"context"
	"slices"
	"strings"
	"time"
)

// This file is what the in-memory Pacer says of its keys: Ready and Stats.

// Ready implements [ReadyPacer]. Next counts the requests queued on the
// key ahead of a newcomer: each of them starts at least a base delay
// after the one before (Policy.earliest). A key the Pacer does not hold
// has a zero Next and the pace of a new one.
func (p *Memory) Ready(ctx context.Context, r Request) (KeyState, error) {
	if err := ctx.Err(); err != nil {
		return KeyState{}, err
	}
	h := p.lookup(r.Key)
	if h == nil {
		pol := p.policyOf(r.Key)
		return KeyState{Key: r.Key, Pace: pol.pace(&paceState{}, p.clock.now(), r.CrawlDelay), Policy: *pol}, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := p.clock.now()
	ks := p.stateLocked(h, now, r.CrawlDelay, r.Partition)
	ks.Next = p.clock.timeOf(h.pol.earliest(&h.pace, now, r.CrawlDelay, r.Partition, h.queued))
	return ks, nil
}

// lookup returns key's state, or nil when the pacer does not hold it.
func (p *Memory) lookup(key string) *hostState {
	s := p.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hosts[key]
}

// Stats implements [StatsPacer]. Keys come sorted.
func (p *Memory) Stats(ctx context.Context) ([]KeyState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p.snapshot(), nil
}

// snapshot returns the state of every key the pacer holds, sorted by key,
// each with its own last Crawl-delay.
func (p *Memory) snapshot() []KeyState {
	var hosts []*hostState
	for i := range p.shards {
		s := &p.shards[i]
		s.mu.Lock()
		for _, h := range s.hosts {
			hosts = append(hosts, h)
		}
		s.mu.Unlock()
	}

	out := make([]KeyState, 0, len(hosts))
	for _, h := range hosts {
		h.mu.Lock()
		now := p.clock.now()
		ks := p.stateLocked(h, now, h.pace.floor, "")
		ks.Next = p.clock.timeOf(h.pol.nextAllowed(&h.pace, now, h.pace.floor, ""))
		out = append(out, ks)
		h.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b KeyState) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// stateLocked returns h's state at now, with the pace of a request of
// partition with Crawl-delay floor; all but Next. h.mu must be held.
func (p *Memory) stateLocked(h *hostState, now instant, floor time.Duration, partition string) KeyState {
	s := &h.pace
	return KeyState{
		Key:         h.key,
		Busy:        h.full() || h.queued > 0,
		Pace:        max(h.pol.pace(s, now, floor), s.limit.gap(now), s.quotaSpread(now, partition)),
		Level:       s.levelAt(now),
		PausedUntil: p.clock.timeOf(max(s.blockedUntil, s.quotaUntil(partition))),
		Latency:     s.est,
		LastStart:   p.clock.timeOf(s.lastStart),
		InFlight:    h.inFlight,
		Waiting:     int(h.users.Load()),
		Requests:    s.requests,
		Backoffs:    s.backoffs,
		RetryAfters: s.retryAfters,
		Policy:      *h.pol,
	}
}
