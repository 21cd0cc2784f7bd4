package polite

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/pace"
)

// minRobotsTTL is the shortest lifetime a Cache-Control max-age gives a
// robots.txt.
const minRobotsTTL = time.Minute

// robotsCache keeps a transport's parsed robots.txt per origin and fetches
// it on a miss, once however many requests ask at the same time; with a
// RobotsStore, the fetch goes through it (robots_share.go). A fetch is
// called off when the last request waiting for it gives up before its
// first request has started: fetch then returns nil. Origins are kept in
// shards by host (shard.go).
//
// Lock order: evictMu, then a shard's mu.
type robotsCache struct {
	fetch   func(ctx context.Context, k originKey, prev *robotsRecord) *robotsRecord
	tooLate func(ctx context.Context, k originKey) error // an error when a fetch for k could not end before ctx's deadline; nil: none
	ttl     time.Duration                                // lifetime of a fetched file
	failTTL time.Duration                                // lifetime of a failure: the next fetch comes this soon
	max     int                                          // soft bound on size
	budget  int64                                        // soft bound on bytes
	shards  [shardCount]robotsShard
	size    atomic.Int64 // entries in all shards; changed under the shard's mu
	bytes   atomic.Int64 // the cost of the records in all shards; changed likewise
	evictMu sync.Mutex   // serialises evictions
	evictAt atomic.Int64 // inserting into a cache this large first evicts; stored under evictMu
	bytesAt atomic.Int64 // inserting into a cache whose records cost more first evicts; stored under evictMu
	ended   atomic.Int64 // fetches ended since the last eviction
	evicts  atomic.Int64 // evictions that scanned the cache, for tests
	running atomic.Int64 // fetches whose goroutine runs, for tests
}

// robotsShard holds the origins whose hosts hash to it.
type robotsShard struct {
	mu      sync.Mutex // guards entries and every entry's fields
	entries map[originKey]*robotsEntry
	_       cacheLinePad
}

// robotsEntry is one origin's cache slot. Its fields are guarded by its
// shard's mu.
type robotsEntry struct {
	rules    *robotsRecord    // the rules in force; nil until the first fetch ends
	expires  time.Time        // when to fetch again
	fetching *robotsFetchCall // the fetch under way; nil when none is
}

// robotsFetchCall is one fetch of an origin's robots.txt that requests wait
// for.
type robotsFetchCall struct {
	done    chan struct{}      // closed when the fetch ends
	r       *robotsRecord      // what it gave, nil if called off; set before done closes
	waiters int                // requests waiting for it; guarded by the shard's mu
	callOff context.CancelFunc // cancels the fetch's context, which bounds only the wait for its first turn
}

// newRobotsCache returns a cache of at most max origins, a soft bound.
func newRobotsCache(fetch func(context.Context, originKey, *robotsRecord) *robotsRecord, tooLate func(context.Context, originKey) error, ttl time.Duration, max int, budget int64) *robotsCache {
	c := &robotsCache{
		budget:  budget,
		fetch:   fetch,
		tooLate: tooLate,
		ttl:     ttl,
		failTTL: min(ttl, 5*time.Minute),
		max:     max,
	}
	for i := range c.shards {
		c.shards[i].entries = make(map[originKey]*robotsEntry)
	}
	c.evictAt.Store(int64(max))
	c.bytesAt.Store(budget)
	return c
}

// shard returns the shard that holds k.
func (c *robotsCache) shard(k originKey) *robotsShard {
	return &c.shards[shardIndex(k.host)]
}

// get returns the origin's robots.txt, fetching it when it is missing or
// expired. When the file is not fresh here, it fails before adding an
// entry or starting a fetch with ctx's error if ctx has ended, and with
// tooLate's if the fetch could not end before ctx's deadline. It fails
// with ctx's error when the caller gives up waiting: the fetch goes on
// for the other waiters, and is called off when none is left. Or it fails
// with a RobotsStore's error. tr, when not nil, hears that the caller
// waits for a fetch. k is a pointer, so that the arguments stay in
// registers.
func (c *robotsCache) get(ctx context.Context, pk *originKey, tr *pace.Trace) (*robotsRecord, error) {
	k := *pk
	s := c.shard(k)
	evicted, checked := false, c.tooLate == nil
	for {
		s.mu.Lock()
		e := s.entries[k]
		if e != nil && e.rules != nil && time.Until(e.expires) > 0 { // the monotonic clock alone
			r := e.rules
			s.mu.Unlock()
			return r, nil
		}
		// A caller that cannot wait adds no entry, and starts no fetch.
		if err := ctx.Err(); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		if !checked {
			s.mu.Unlock() // tooLate takes the pacer's locks
			if err := c.tooLate(ctx, k); err != nil {
				return nil, err
			}
			checked = true
			continue
		}
		if e == nil && !evicted && c.evictDue() {
			s.mu.Unlock() // eviction takes every shard's lock in turn
			c.evict()
			evicted = true
			continue
		}
		if e == nil {
			e = &robotsEntry{}
			s.entries[k] = e
			c.size.Add(1)
		}
		call := e.fetching
		if call == nil {
			fetchCtx, callOff := context.WithCancel(withRequester(ctx))
			call = &robotsFetchCall{done: make(chan struct{}), callOff: callOff}
			e.fetching = call
			c.running.Add(1)
			go c.run(fetchCtx, s, k, e, e.rules)
		}
		call.waiters++
		s.mu.Unlock()

		if tr != nil && tr.Wait != nil {
			tr.Wait(pace.CauseRobots)
		}
		r, err := c.wait(ctx, s, call)
		if r == nil && err == nil {
			continue // called off by waiters who gave up before this one came
		}
		return r, err
	}
}

// requesterKey is the key of the context value that holds, in a fetch's
// context, the context of the request whose turn started it.
type requesterKey struct{}

// withRequester returns a context of its own for a fetch that the request
// of ctx starts, with none of ctx's values, deadline or cancellation but
// ctx itself, which requesterOf returns.
func withRequester(ctx context.Context) context.Context {
	return context.WithValue(context.Background(), requesterKey{}, ctx)
}

// requesterOf returns the context of the request that started the fetch
// of ctx, or nil.
func requesterOf(ctx context.Context) context.Context {
	r, _ := ctx.Value(requesterKey{}).(context.Context)
	return r
}

// wait waits for call, a fetch in shard s, as one of its waiters, and
// returns what it gave: a nil record and no error when it was called off.
// When ctx ends first, wait calls the fetch off if nobody else waits for
// it.
func (c *robotsCache) wait(ctx context.Context, s *robotsShard, call *robotsFetchCall) (*robotsRecord, error) {
	select {
	case <-call.done:
		if r := call.r; r != nil && r.storeErr != nil {
			return nil, r.storeErr
		}
		return call.r, nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	if call.waiters--; call.waiters == 0 {
		call.callOff() // a fetch already sent goes on, and is kept
	}
	s.mu.Unlock()
	return nil, ctx.Err()
}

// peek returns the origin's robots.txt if it is cached and fresh, and nil
// otherwise; it fetches nothing.
func (c *robotsCache) peek(k originKey) *robotsRecord {
	s := c.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.entries[k]; e != nil && e.rules != nil && time.Until(e.expires) > 0 {
		return e.rules
	}
	return nil
}

// each calls fn for every origin with rules in force. fn must not call
// back into the cache.
func (c *robotsCache) each(fn func(originKey, *robotsRecord)) {
	type kv struct {
		k originKey
		r *robotsRecord
	}
	var all []kv
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for k, e := range s.entries {
			if e.rules != nil {
				all = append(all, kv{k, e.rules})
			}
		}
		s.mu.Unlock()
	}
	for _, x := range all { // outside the lock: fn may take its time
		fn(x.k, x.r)
	}
}

// run fetches k's robots.txt on ctx, a context of its own, so that no
// caller's cancellation fails the others, and stores the result in e, an
// entry of shard s. A record that a RobotsStore failed to give is handed
// to the waiters and not kept. A fetch called off leaves e as it was,
// and drops it if it holds no rules.
func (c *robotsCache) run(ctx context.Context, s *robotsShard, k originKey, e *robotsEntry, prev *robotsRecord) {
	defer c.running.Add(-1)
	r := c.fetch(ctx, k, prev)
	s.mu.Lock()
	call := e.fetching
	call.callOff() // releases ctx
	switch {
	case r == nil:
		if e.rules == nil {
			delete(s.entries, k) // a fetch under way is never evicted, so e is k's entry
			c.size.Add(-1)
		}
	case r.storeErr == nil:
		if e.rules != nil {
			c.bytes.Add(-e.rules.cost)
		}
		c.bytes.Add(r.cost)
		e.rules, e.expires = r, r.expires
		if e.expires.IsZero() {
			e.expires = time.Now().Add(c.lifetime(r))
		}
	}
	call.r = r
	e.fetching = nil
	s.mu.Unlock()
	close(call.done)
	if r != nil {
		c.ended.Add(1)
	}
}

// lifetime returns how long r stays in force: the cache's TTL, which the
// file's Cache-Control may shorten but never stretch, or a shorter one for
// a file that was unreachable, so that it is soon tried again.
func (c *robotsCache) lifetime(r *robotsRecord) time.Duration {
	switch {
	case r.err != nil:
		return c.failTTL
	case r.lifetime > 0:
		return min(c.ttl, r.lifetime)
	}
	return c.ttl
}

// evictDue reports whether inserting an entry should first evict: when the
// cache holds evictAt entries, or when it is full and enough fetches have
// ended since the last eviction, a quarter of its size, to pay for a scan,
// or when its records cost more than its budget (and, when an eviction
// could not get under it because the files were being fetched again, a
// quarter of the budget more), so that no insert rescans a cache it
// cannot shrink.
// Entries being fetched cannot be dropped, so a cache full of them is not
// scanned again on every insert.
func (c *robotsCache) evictDue() bool {
	n := c.size.Load()
	return n >= c.evictAt.Load() || n >= int64(c.max) && c.ended.Load() >= max(n/4, 1) ||
		c.bytes.Load() > c.bytesAt.Load()
}

// evict makes room for one more entry when the cache is full, in entries
// or in bytes: it drops expired entries, then, if that was not enough,
// others at random until a quarter of the room is free in both. Entries
// being fetched are kept. It does nothing if another eviction made room
// meanwhile. The caller holds no lock.
func (c *robotsCache) evict() {
	c.evictMu.Lock()
	defer c.evictMu.Unlock()
	if !c.evictDue() {
		return
	}
	c.evicts.Add(1)
	c.ended.Store(0)
	now := time.Now()
	c.dropLocked(func(e *robotsEntry) bool { return !now.Before(e.expires) })
	c.dropLocked(func(*robotsEntry) bool {
		return c.size.Load() >= int64(c.max-c.max/4) || c.bytes.Load() > c.budget-c.budget/4
	})
	c.evictAt.Store(max(int64(c.max), 2*c.size.Load()))
	c.bytesAt.Store(max(c.budget, c.bytes.Load()+c.budget/4))
}

// dropLocked visits the shards in turn, from a random one, and drops the
// entries not being fetched for which drop returns true. The caller holds
// evictMu.
func (c *robotsCache) dropLocked(drop func(*robotsEntry) bool) {
	first := rand.IntN(shardCount)
	for i := range shardCount {
		s := &c.shards[(first+i)%shardCount]
		s.mu.Lock()
		for k, e := range s.entries { // map order is random
			if e.fetching == nil && drop(e) {
				delete(s.entries, k)
				c.size.Add(-1)
				if e.rules != nil {
					c.bytes.Add(-e.rules.cost)
				}
			}
		}
		s.mu.Unlock()
	}
}
