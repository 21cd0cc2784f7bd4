package polite

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/robotstxt"
)

// fetchShared gets k's robots.txt through the RobotsStore: the store's copy
// while it is fresh, else a fetch by fetchRobots, made by this transport or
// by another that shares the store. prev is the copy in force here, if
// any; the record keeps its counters. It returns nil when ctx ends first:
// the cache has called it off.
func (t *PoliteTransport) fetchShared(ctx context.Context, k originKey, prev *robotsRecord) *robotsRecord {
	// What this transport fetched, if it did, and what it gave the store;
	// atomic, since a store may run fetch on a goroutine of its own.
	var mine atomic.Pointer[robotsRecord]
	var sent atomic.Pointer[RobotsFetch]
	requester := requesterOf(ctx)
	f, err := t.store.Load(ctx, k.String(), func(ctx context.Context, shared *RobotsFetch) *RobotsFetch {
		if requesterOf(ctx) == nil { // a context of the store's own
			ctx = context.WithValue(ctx, requesterKey{}, requester)
		}
		from := prev
		if shared != nil {
			from = t.sharedRecord(shared, prev) // its validators, and the copy to keep if need be
		}
		r, body := t.fetchRobots(ctx, k, from)
		if r == nil { // the store's ctx ended before the fetch could start
			r = &robotsRecord{url: k.fetchURL(), fetchedAt: time.Now(), err: ctx.Err(), counts: countsOf(from)}
		}
		if body == nil && r.file != nil && shared != nil {
			body = shared.Body // the copy r keeps, revalidated or stale
		}
		r.expires = r.fetchedAt.Add(t.robots.lifetime(r))
		f := &RobotsFetch{URL: r.url, Status: r.status, Err: r.err, Stale: r.stale, FetchedAt: r.fetchedAt, Duration: r.duration,
			Body: body, ETag: r.etag, LastModified: r.modified, Expires: r.expires}
		mine.Store(r)
		sent.Store(f)
		return f
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return nil // called off: nobody waits for it
	case err != nil:
		return &robotsRecord{url: k.fetchURL(), err: err, storeErr: err,
			counts: countsOf(prev)}
	case f == sent.Load():
		return mine.Load() // fetched here: parsed already
	}
	return t.sharedRecord(f, prev)
}

// sharedRecord makes the record of a copy that a RobotsStore gave, parsing
// its file; it keeps prev's counters.
func (t *PoliteTransport) sharedRecord(f *RobotsFetch, prev *robotsRecord) *robotsRecord {
	r := &robotsRecord{url: f.URL, status: f.Status, fetchedAt: f.FetchedAt, duration: f.Duration,
		err: f.Err, stale: f.Stale, etag: f.ETag, modified: f.LastModified, expires: f.Expires,
		counts: countsOf(prev)}
	if f.Body != nil {
		r.file = robotstxt.Parse(f.Body)
		r.cost = robotsCost(r.file)
	}
	r.disallow = t.closed(r)
	return r
}
