package politeredis

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// Ready implements [pace.ReadyPacer]: one call, peekLua, which reads
// the key's shared state and writes nothing. KeyState.Waiting and Busy
// count the requests of this process that wait on the key; the others'
// are not known. In an outage of the key's server, it reads the state this
// process keeps in its memory.
func (p *pacer) Ready(ctx context.Context, req pace.Request) (pace.KeyState, error) {
	key, partition, crawlDelay := req.Key, req.Partition, req.CrawlDelay
	keys := p.keys(key)
	h := p.servers.of(ctx, keys[0])
	if h.isDown.Load() && !p.o.failClose {
		return p.fallback().Ready(ctx, req)
	}
	cctx, cancel := context.WithTimeout(ctx, p.o.timeout)
	defer cancel()
	cmd, err := within(cctx, func(ctx context.Context) *redis.Cmd {
		return p.peek.Run(ctx, p.client, keys, p.withPolicy(key, p.argv(us(max(crawlDelay, 0)), partition))...)
	})
	var r []int64
	if err == nil {
		r, err = reply(cmd)
	}
	if err != nil {
		if ctx.Err() != nil {
			return pace.KeyState{}, ctx.Err()
		}
		if p.o.failClose {
			return pace.KeyState{}, fmt.Errorf("politeredis: redis unreachable: %w", h.cause(err))
		}
		h.failed(err)
		return p.fallback().Ready(ctx, req)
	}
	h.answered()
	return p.keyState(key, r), nil
}

// Stats implements [pace.StatsPacer]: the keys the fleet used last, at
// most 1,000, as its index lists them (one call), and those this process
// used last, at most 1,000, each read with peekLua, in one pipeline to
// each server, the pipelines at once (one round trip to each server).
// Keys that Redis no longer holds are left out; the keys of a server in an
// outage are read from this process's memory. When the index cannot be
// read, Stats lists this process's keys alone.
func (p *pacer) Stats(ctx context.Context) ([]pace.KeyState, error) {
	recent := p.recent()
	cctx, cancel := context.WithTimeout(ctx, p.o.timeout)
	defer cancel()
	fleet, err := p.reg.fleet(cctx, statsKeys)
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	for _, key := range fleet {
		if _, ok := recent[key]; !ok {
			recent[key] = 0 // peekLua reads the Crawl-delay the key's state holds
		}
	}
	var calls []*call
	var hs []*health // found before the calls, which may make a Cluster reload its map
	var called, fromMemory []string
	for key, floor := range recent {
		c, h := p.call(ctx, p.peek, key, us(floor))
		if !p.o.failClose && h.isDown.Load() {
			fromMemory = append(fromMemory, key)
			continue
		}
		calls = append(calls, c)
		hs = append(hs, h)
		called = append(called, key)
	}
	if len(calls) > 0 {
		runAll(cctx, p.client, calls)
	}
	var out []pace.KeyState
	for i, c := range calls {
		key, h := called[i], hs[i]
		r, err := reply(c.cmd)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if p.o.failClose {
				return nil, fmt.Errorf("politeredis: redis unreachable: %w", h.cause(err))
			}
			h.failed(err)
			fromMemory = append(fromMemory, key)
			continue
		}
		h.answered()
		if r[0] == 1 {
			out = append(out, p.keyState(key, r))
		}
	}
	for _, key := range fromMemory {
		ks, err := p.fallback().Ready(ctx, pace.Request{Key: key, CrawlDelay: recent[key]})
		if err != nil {
			return nil, err
		}
		if !ks.LastStart.IsZero() {
			out = append(out, ks)
		}
	}
	slices.SortFunc(out, func(a, b pace.KeyState) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// keyState returns the state of key that peekLua's reply r reads.
func (p *pacer) keyState(key string, r []int64) pace.KeyState {
	now := p.now()
	µs := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	ks := pace.KeyState{Key: key, Pace: µs(r[3]), Waiting: p.waiting(key)}
	if r[0] == 1 {
		ks.Next = now.Add(µs(r[1]))
		ks.InFlight = int(r[2])
		ks.Level = int(r[4])
		if r[5] > 0 {
			ks.PausedUntil = now.Add(µs(r[5]))
		}
		ks.Latency = µs(r[6])
		ks.LastStart = now.Add(-µs(r[7]))
		ks.Requests, ks.Backoffs, ks.RetryAfters = uint64(r[8]), uint64(r[9]), uint64(r[10])
	}
	ks.Policy = p.policy(key)
	ks.Busy = pace.Value(ks.Policy.MaxInFlight) > 0 && ks.InFlight >= ks.Policy.MaxInFlight || ks.Waiting > 0
	return ks
}
