package politeredis

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// FrontierStats is the state of a fleet's frontier, as Redis holds it:
// the same in every process.
type FrontierStats struct {
	// Queued counts the URLs queued; Leased the URLs out, in turns.
	Queued, Leased int64
	// Done counts the turns ended by Done; Refused the URLs that
	// robots.txt refused, dropped before they took a turn.
	Done, Refused int64
	// Redelivered counts the URLs handed out again after their lease ran
	// out, as when their process died: at most the fleet's duplicates.
	Redelivered int64
	// Added counts the URLs that Add queued, in all.
	Added int64
	// Hosts counts the hosts that were ever added to.
	Hosts int64
	// ByHost is the state of the hosts whose next URL is due first, at
	// most as many as Stats was asked for: those with URLs queued or out,
	// then the others.
	ByHost []FrontierHost
}

// FrontierHost is one host's part of the frontier.
type FrontierHost struct {
	// Key is the host's pacing key.
	Key string
	// Queued, Leased (0 or 1), Done, Refused, Redelivered and Added count
	// the host's URLs as FrontierStats counts the fleet's.
	Queued, Leased, Done, Refused, Redelivered, Added int64
	// Next is when the frontier looks at the host next: when its pace
	// allows a start, or its URL out's lease ends; zero when it holds no
	// URL.
	Next time.Time
}

// Stats returns the state of the fleet's frontier, with the hosts due
// first, at most hosts of them. It reads each shard's counts in one
// pipeline to each server, its first hosts in another, then those hosts
// in a third: three round trips, and for a Cluster a fourth, to the top,
// to find the shards.
func (f *Frontier) Stats(ctx context.Context, hosts int) (FrontierStats, error) {
	cctx, cancel := context.WithTimeout(ctx, f.o.timeout)
	defer cancel()
	tags := []string{""}
	if f.top != nil {
		var err error
		if tags, err = f.client.HKeys(cctx, f.top.keys[1]).Result(); err != nil {
			return FrontierStats{}, fmt.Errorf("%w: %w", ErrUnreachable, err)
		}
	}
	calls := make([]*call, len(tags))
	for i, tag := range tags {
		set, counts, _ := f.shardKeys(tag)
		calls[i] = &call{script: f.scripts.peek, keys: []string{set, counts}, args: []any{}, server: f.servers.of(cctx, set).node}
	}
	runAll(cctx, f.client, calls)
	ranges := make([]*redis.ZSliceCmd, len(tags))
	_, err := f.client.Pipelined(cctx, func(p redis.Pipeliner) error {
		for i, tag := range tags {
			set, _, _ := f.shardKeys(tag)
			ranges[i] = p.ZRangeWithScores(cctx, set, 0, int64(hosts)-1)
		}
		return nil
	})
	if err != nil && err != redis.Nil {
		return FrontierStats{}, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	var s FrontierStats
	var due []redis.Z
	var now int64
	for i, c := range calls {
		r, err := c.cmd.Slice()
		if err == nil && len(r) < 7 {
			err = fmt.Errorf("politeredis: frontier reply %q", r)
		}
		if err != nil {
			return FrontierStats{}, fmt.Errorf("%w: %w", ErrUnreachable, err)
		}
		n := func(j int) int64 { x, _ := r[j].(int64); return x }
		s.Queued, s.Leased, s.Done, s.Refused = s.Queued+n(0), s.Leased+n(1), s.Done+n(2), s.Refused+n(3)
		s.Redelivered, s.Added, s.Hosts = s.Redelivered+n(4), s.Added+n(5), s.Hosts+n(6)
		due = append(due, ranges[i].Val()...)
	}
	slices.SortStableFunc(due, func(a, b redis.Z) int {
		switch {
		case a.Score < b.Score:
			return -1
		case a.Score > b.Score:
			return 1
		}
		return 0
	})
	due = due[:min(len(due), hosts)]
	if len(due) == 0 {
		return s, nil
	}
	fields := make([]*redis.SliceCmd, len(due))
	var clock *redis.TimeCmd
	_, err = f.client.Pipelined(cctx, func(p redis.Pipeliner) error {
		for i, z := range due {
			key, _ := z.Member.(string)
			_, hash, _, _ := f.hostKeys(key)
			fields[i] = p.HMGet(cctx, hash, "n", "l", "d", "r", "e", "a")
		}
		if f.o.clock == nil {
			clock = p.Time(cctx)
		}
		return nil
	})
	if err != nil && err != redis.Nil {
		return FrontierStats{}, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	if clock != nil {
		now = clock.Val().UnixMicro()
	} else {
		now = f.o.clock().UnixMicro()
	}
	for i, z := range due {
		v := fields[i].Val()
		if len(v) < 6 {
			return FrontierStats{}, fmt.Errorf("%w: %w", ErrUnreachable, fields[i].Err())
		}
		n := func(j int) int64 {
			x, _ := v[j].(string)
			y, _ := strconv.ParseInt(x, 10, 64)
			return y
		}
		key, _ := z.Member.(string)
		h := FrontierHost{Key: key, Queued: n(0), Done: n(2), Refused: n(3), Redelivered: n(4), Added: n(5)}
		if l, _ := v[1].(string); l != "" {
			h.Leased = 1
		}
		if !math.IsInf(z.Score, 1) {
			h.Next = time.Now().Add(time.Duration(int64(z.Score)-now) * time.Microsecond)
		}
		s.ByHost = append(s.ByHost, h)
	}
	return s, nil
}
