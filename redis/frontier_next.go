package politeredis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// Next implements [frontier.Queue]: it returns the next URL of a host that
// can take a request now, by the pacing state the fleet shares, in a Turn
// that the caller ends by Done or Requeue; no other process hands out a
// URL of that host until then, or until the Turn's lease runs out (see
// [WithTurnLease]), which this process renews while the Turn runs. It
// decides each URL by the transport's Check first, and drops one that
// robots.txt refuses. It waits until a host is due, within ctx, and through
// an outage of Redis, trying it again every second; when ctx ends
// it returns ctx's error, joined in an outage by one that matches
// [ErrUnreachable]. It returns [frontier.ErrEmpty] when the fleet's
// frontier holds no URL, queued or leased, and no Add of this process is
// under way.
func (f *Frontier) Next(ctx context.Context) (frontier.Turn, error) {
	var outage error // the last call's failure, while Redis does not answer
	for {
		if err := ended(ctx); err != nil {
			return frontier.Turn{}, errors.Join(err, outage)
		}
		if !f.gate.wait(ctx) {
			return frontier.Turn{}, errors.Join(ended(ctx), outage)
		}
		ref := &turnRef{id: strconv.FormatUint(rand.Uint64(), 36)}
		u, empty, err := f.take(ctx, ref)
		switch {
		case err != nil && ctx.Err() != nil:
			return frontier.Turn{}, errors.Join(ctx.Err(), outage)
		case err != nil:
			outage = err
			f.gate.hush(time.Now().Add(f.o.probe))
			continue
		case u == "":
			outage = nil
			if !empty {
				continue
			}
			if f.adding.Load() == 0 {
				f.gate.open(1) // the next waiter returns ErrEmpty too
				return frontier.Turn{}, frontier.ErrEmpty
			}
			f.gate.hush(time.Now().Add(f.o.poll)) // until the Add says what it queued
			continue
		}
		outage = nil
		turn := frontier.Turn{URL: u, Queue: f, Ref: ref}
		if f.allowed(ctx, turn) {
			return turn, nil
		}
		if err := ctx.Err(); err != nil {
			return frontier.Turn{}, err
		}
	}
}

// take runs the Next script for ref's lease: on a server that is not a
// Cluster, one call; on a Cluster, a call to the shards' schedule, then
// one to the shard it names. It returns the URL taken, with ref's key set,
// or "" and whether the frontier holds nothing, having told the gate when
// a host is next due.
func (f *Frontier) take(ctx context.Context, ref *turnRef) (u string, empty bool, err error) {
	tag := ""
	if f.top != nil {
		var ok bool
		if tag, ok, empty, err = f.top.pick(ctx); err != nil || !ok {
			return "", empty, err
		}
	}
	set, counts, _ := f.shardKeys(tag)
	orphan := func(cmd *redis.Cmd) { // the caller stopped waiting: give back what the call took
		if cmd == nil {
			return
		}
		if r, err := cmd.Slice(); err == nil && len(r) >= 8 && r[0] == int64(1) {
			k, _ := r[1].(string)
			f.end(&turnRef{key: k, id: ref.id}, "g")
		}
	}
	r, err := f.run(ctx, f.scripts.next, []string{set, counts}, f.argv(ref.id), orphan)
	if err != nil {
		return "", false, err
	}
	if len(r) < 8 {
		return "", false, fmt.Errorf("politeredis: frontier reply %q", r)
	}
	tail := tailOf(r)
	if f.top != nil {
		f.top.raised(tag, tail) // a take only raises the shard's first score
	}
	if r[0] != int64(1) {
		if f.top != nil {
			return "", false, nil // the next pick takes the shard's news in
		}
		due, empty := tail.due()
		if !empty {
			f.gate.hush(earlier(due, time.Now().Add(f.o.poll)))
		}
		return "", empty, nil
	}
	ref.key, _ = r[1].(string)
	u, _ = r[2].(string)
	lease, _ := r[3].(int64)
	ref.until.Store(time.Now().Add(time.Duration(lease-tail.now) * time.Microsecond).UnixNano())
	f.keep.add(ref)
	f.gate.open(1) // another host may be due
	return u, false, nil
}

// allowed decides turn's URL by the transport's Check, and reports
// whether it may be handed out. A URL that robots.txt refuses is dropped
// and reported to the Refused hook; one whose robots.txt was fetched
// during the Check, a request that took the host's turn, is given back to
// the head of its queue, to be handed out when the host can start again.
// A URL that Check fails for is handed out: its request decides for
// itself.
func (f *Frontier) allowed(ctx context.Context, turn frontier.Turn) bool {
	ref := turn.Ref.(*turnRef)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, turn.URL, nil)
	if err != nil {
		return true // Add parsed it: its request fails on its own
	}
	before := time.Now()
	d, err := f.t.Check(req)
	switch {
	case ctx.Err() != nil:
		f.end(ref, "g")
		return false
	case err != nil:
		return true
	}
	ref.policy = f.policyArg(d.Policy)
	switch {
	case d.Mode == polite.RobotsEnforce && !d.Allowed:
		f.end(ref, "r")
		if f.refused != nil {
			f.refused(turn.URL, d)
		}
		return false
	case !d.Robots.FetchedAt.IsZero() && !d.Robots.FetchedAt.Before(before) && f.fetched.first(ref.key, d.Robots.FetchedAt):
		f.end(ref, "g")
		return false
	}
	return true
}

// earlier returns the earlier of a and b.
func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// fetches are the robots.txt fetches that turns were given back for, by
// pacing key: a fetch ended during a Check took the host's turn, but
// only once, however many Checks see it end (a clock that does not move,
// as in a test, sees it end at every Check).
type fetches struct {
	mu sync.Mutex           // guards at
	at map[string]time.Time // when the fetch ended, until the host's next Check; at most maxFetches
}

// maxFetches bounds the fetches remembered: one per host between a turn
// given back and the host's next Check in this process.
const maxFetches = 10_000

// first reports whether a fetch of key's robots.txt that ended at is new:
// no turn was given back for it yet. It forgets a fetch that it has seen
// twice.
func (f *fetches) first(key string, at time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if prev, ok := f.at[key]; ok && prev.Equal(at) {
		delete(f.at, key)
		return false
	}
	if f.at == nil || len(f.at) >= maxFetches {
		f.at = make(map[string]time.Time)
	}
	f.at[key] = at
	return true
}

// policyArg returns the argument that tells the end of a turn the host's
// policy: "=" for the scripts' default, else its values.
func (f *Frontier) policyArg(p pace.Policy) string {
	s := strings.Join(policyValues(p), " ")
	if s == f.policy {
		return "="
	}
	return s
}
