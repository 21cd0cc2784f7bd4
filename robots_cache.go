package polite

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"time"
)

// originKey names one robots.txt: RFC 9309 scopes a file to a scheme, host
// and port. The host is lower-cased and the port explicit, so
// "http://Example.com/" and "http://example.com:80/" share a key.
type originKey struct {
	scheme, host, port string
}

// originOf returns u's origin key, and ok=false when u is not an http or
// https URL with a host.
func originOf(u *url.URL) (k originKey, ok bool) {
	switch {
	case u.Scheme == "http" || strings.EqualFold(u.Scheme, "http"):
		k.scheme, k.port = "http", "80"
	case u.Scheme == "https" || strings.EqualFold(u.Scheme, "https"):
		k.scheme, k.port = "https", "443"
	default:
		return k, false
	}
	k.host = strings.ToLower(u.Hostname())
	if p := u.Port(); p != "" {
		k.port = p
	}
	return k, k.host != ""
}

// String returns "scheme://host:port", with IPv6 hosts in brackets.
func (k originKey) String() string {
	host := k.host
	if strings.IndexByte(host, ':') >= 0 {
		host = "[" + host + "]"
	}
	return k.scheme + "://" + host + ":" + k.port
}

// robotsStore keeps robots.txt per origin and fetches it on a miss, once
// however many requests ask at the same time. The in-memory robotsCache is
// the only implementation; the interface is the seam where a store shared by
// a fleet of processes would plug in.
type robotsStore interface {
	// rules returns the origin's robots.txt, fetching it when it is missing
	// or expired. It fails only with ctx's error, when the caller gives up
	// waiting; the fetch itself goes on for the other waiters.
	rules(ctx context.Context, k originKey) (*robotsRules, error)
	// each calls fn for every origin with rules in force. fn must not call
	// back into the store.
	each(fn func(originKey, *robotsRules))
}

// robotsCache is the in-memory robotsStore.
type robotsCache struct {
	fetch   func(ctx context.Context, k originKey, prev *robotsRules) *robotsRules
	ttl     time.Duration // lifetime of a fetched file
	failTTL time.Duration // lifetime of a failure: the next fetch comes this soon
	timeout time.Duration // bound on one fetch
	max     int           // soft bound on len(entries)

	mu      sync.Mutex // guards entries and every entry's fields
	entries map[originKey]*robotsEntry
}

// robotsEntry is one origin's cache slot. Its fields are guarded by
// robotsCache.mu.
type robotsEntry struct {
	rules    *robotsRules  // the rules in force; nil until the first fetch ends
	expires  time.Time     // when to fetch again
	fetching chan struct{} // non-nil while a fetch runs; closed when it ends
}

func newRobotsCache(fetch func(context.Context, originKey, *robotsRules) *robotsRules, ttl, timeout time.Duration, max int) *robotsCache {
	return &robotsCache{
		fetch:   fetch,
		ttl:     ttl,
		failTTL: min(ttl, 5*time.Minute),
		timeout: timeout,
		max:     max,
		entries: make(map[originKey]*robotsEntry),
	}
}

func (c *robotsCache) rules(ctx context.Context, k originKey) (*robotsRules, error) {
	for {
		c.mu.Lock()
		e := c.entries[k]
		if e == nil {
			c.evictLocked()
			e = &robotsEntry{}
			c.entries[k] = e
		}
		if e.rules != nil && time.Now().Before(e.expires) {
			r := e.rules
			c.mu.Unlock()
			return r, nil
		}
		if e.fetching == nil {
			e.fetching = make(chan struct{})
			go c.run(k, e, e.rules)
		}
		done := e.fetching
		c.mu.Unlock()

		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (c *robotsCache) each(fn func(originKey, *robotsRules)) {
	c.mu.Lock()
	type kv struct {
		k originKey
		r *robotsRules
	}
	all := make([]kv, 0, len(c.entries))
	for k, e := range c.entries {
		if e.rules != nil {
			all = append(all, kv{k, e.rules})
		}
	}
	c.mu.Unlock()
	for _, x := range all { // outside the lock: fn may take its time
		fn(x.k, x.r)
	}
}

// run fetches k's robots.txt on a context of its own, so that no caller's
// cancellation fails the others, and stores the result in e.
func (c *robotsCache) run(k originKey, e *robotsEntry, prev *robotsRules) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	r := c.fetch(ctx, k, prev)
	cancel()

	ttl := c.ttl
	if r.err != "" {
		ttl = c.failTTL
	}
	c.mu.Lock()
	e.rules, e.expires = r, time.Now().Add(ttl)
	close(e.fetching)
	e.fetching = nil
	c.mu.Unlock()
}

// evictLocked makes room for one more entry when the cache is full: it drops
// expired entries, then, if that was not enough, others at random until a
// quarter of the room is free. Entries being fetched are kept. The caller
// holds c.mu.
func (c *robotsCache) evictLocked() {
	if len(c.entries) < c.max {
		return
	}
	now := time.Now()
	for k, e := range c.entries {
		if e.fetching == nil && !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
	for k, e := range c.entries { // map order is random
		if len(c.entries) < c.max-c.max/4 {
			break
		}
		if e.fetching == nil {
			delete(c.entries, k)
		}
	}
}
