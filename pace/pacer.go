package pace

import (
	"context"
	"time"
)

// A Pacer decides when requests to a pacing key may start, by the policy
// of the package documentation, and learns from how they ended. A request
// waits in Acquire for its turn, is sent, and gives its [Lease] back to
// Release with its [Outcome] once its response headers or an error have
// come. [NewMemory] returns the Pacer that keeps its state in memory; a
// fleet of processes shares one that keeps it in a store (the nested
// module redis/). A Pacer must be safe for concurrent use.
//
// A Pacer may also be a [ReadyPacer] and a [StatsPacer], which say what it
// knows without reserving anything; a caller finds out by type assertion,
// as net/http finds a ResponseWriter's optional methods.
type Pacer interface {
	// Acquire blocks until r may start, or ctx ends, and returns r's
	// hold on one of its key's in-flight slots. When ctx's deadline falls
	// before r's earliest start, it fails at once with a
	// [*DeadlineError]; when ctx ends while it waits, it returns ctx.Err()
	// and holds nothing. A Pacer whose store fails may fail with the
	// store's error, or pace r by what it knows in memory.
	Acquire(ctx context.Context, r Request) (Lease, error)
	// Release ends the request that l admitted, with its Outcome: it
	// frees l's slot, learns from o (its Quota for l's partition and the
	// resource the Quota names), and says what that changed in the key's
	// backoff. The caller calls it exactly once per Lease, when the
	// response headers or an error have come. A Pacer that cannot learn
	// the outcome (its store is out of reach) returns the zero Change.
	Release(l Lease, o Outcome) Change
	// RobotsRead reports that the robots.txt that l's request fetched (a
	// Request with Robots set) has been read, and the largest
	// Crawl-delay it asks of any crawler: 0 for none, or no file. From
	// the Acquire of such a request until then, the Pacer keeps the key's
	// state for as long as Policy.MaxCrawlDelay may ask, since the file
	// may ask for a Crawl-delay that the key's requests have not shown;
	// from then on, for as long as crawlDelay asks. It may come before or
	// after l's Release, and at most once per Lease.
	RobotsRead(l Lease, crawlDelay time.Duration)
}

// A Request is what a [Pacer] needs to know of a request to pace it.
type Request struct {
	// Key is the pacing key: requests with the same key share one pace,
	// one backoff and one in-flight limit.
	Key string
	// Partition is the request's quota partition within its key: the
	// rate-limit quotas that the responses to requests of the partition
	// reported hold it, and the others do not. "" is a partition too.
	Partition string
	// CrawlDelay is the robots.txt Crawl-delay of the request's group,
	// not clamped; 0 when there is none.
	CrawlDelay time.Duration
	// Robots reports that the request fetches the key's robots.txt,
	// which may ask for a Crawl-delay: see [Pacer.RobotsRead].
	Robots bool
}

// A Lease is a started request's hold on one of its key's in-flight
// slots, which it gives back to the [Pacer] that granted it. It is a small
// value, passed and kept without allocating; the Pacer fills it in
// Acquire, and the caller gives it back untouched.
type Lease struct {
	// Partition is the quota partition of the request admitted.
	Partition string
	// Ref and Seq are the Pacer's own, what it needs to find the hold
	// again (the in-memory Pacer: the key's state and the start's
	// instant). The zero Lease holds nothing.
	Ref any
	Seq int64
}

// A Change is what a [Lease]'s release did to its key's backoff, as the
// key's state stood after it: the shared state, for a Pacer that a fleet
// shares.
type Change struct {
	// Raised reports that the outcome raised the backoff level.
	Raised bool
	// Cleared reports that the level came back to 0, after successes or a
	// quiet spell.
	Cleared bool
	// Level is the backoff level after the release.
	Level int
	// Pause is how long from the release no request of the released
	// request's partition may start (a backoff pause, a Retry-After, an
	// exhausted rate limit of that partition); 0 when it is not paused.
	Pause time.Duration
}

// A ReadyPacer can say when a request could start without reserving
// anything.
type ReadyPacer interface {
	Pacer
	// Ready returns r's key's state as r, made now, would find it:
	// KeyState.Next is its earliest start, counting the requests queued
	// ahead of it, and KeyState.Pace its pace. A key the Pacer knows
	// nothing of has a zero Next. Ready fails only when the Pacer's store
	// does, or ctx ends.
	Ready(ctx context.Context, r Request) (KeyState, error)
}

// A StatsPacer reports the state of the keys it keeps.
type StatsPacer interface {
	Pacer
	// Stats returns the state of every key the Pacer keeps, each with its
	// own last Crawl-delay, ordered by key: for a Pacer that a fleet
	// shares, the keys of the fleet, as far as its documentation says. It
	// fails only when the Pacer's store does, or ctx ends.
	Stats(ctx context.Context) ([]KeyState, error)
}

// KeyState is what a [Pacer] knows of one pacing key.
type KeyState struct {
	// Key is the pacing key.
	Key string
	// Next is the earliest start that the key's pace and backoff allow a
	// request made now, counting the requests queued ahead of it; a time
	// not after now means the key is ready, the zero time that the Pacer
	// knows nothing of it.
	Next time.Time
	// Busy reports that the key has all its requests in flight, or
	// requests waiting for their turn: a request would queue behind them,
	// however early Next is.
	Busy bool
	// Pace is the least gap between two starts now, before jitter; from
	// Ready, at least the spread of the partition's low quota.
	Pace time.Duration
	// Level is the backoff level: the adaptive part of Pace is doubled
	// this many times.
	Level int
	// PausedUntil is the end of the key's pause (backoff, Retry-After, an
	// exhausted rate limit of the partition asked about; from Stats, of
	// the partition ""); zero or past when it is not paused.
	PausedUntil time.Time
	// Latency is the smoothed time to response headers.
	Latency time.Duration
	// LastStart is when the last request started.
	LastStart time.Time
	// InFlight counts requests started whose response headers have not
	// come.
	InFlight int
	// Waiting counts requests waiting for their turn in this process.
	Waiting int
	// Requests counts requests started, robots.txt fetches included.
	Requests uint64
	// Backoffs counts the times the level went up.
	Backoffs uint64
	// RetryAfters counts backoff signals that carried a Retry-After.
	RetryAfters uint64
	// Policy is the policy in force for the key, Effective.
	Policy Policy
}

// Config is what every Pacer is made from: the policies it runs, and the
// bounds and hooks of its memory.
type Config struct {
	// Policy is the policy of every key that Override leaves alone. Its
	// zero fields mean their defaults.
	Policy Policy
	// Override returns the policy of key when it has one of its own,
	// merged over Policy as [Policy.Over] merges, and false when the key
	// keeps Policy; nil: every key keeps Policy. It must be safe for
	// concurrent use, quick, and give a key the same answer each time,
	// since a Pacer may keep a key's policy while it keeps its state.
	Override func(key string) (Policy, bool)
	// MaxKeys bounds the keys whose state a Pacer keeps in this process's
	// memory, a soft bound (see the package documentation); 0: 10,000.
	MaxKeys int
	// Evicted, when not nil, is called with each key whose state the
	// Pacer drops from memory to keep within MaxKeys, outside its locks.
	// A Pacer that keeps its state in a store, where idle keys expire by
	// themselves, calls it for what it keeps in memory.
	Evicted func(key string)
}

// For returns the policy in force for key, Effective: Override's merged
// over Policy, or Policy. When Override gives key a policy that is invalid
// (see [Policy.Validate]), the key runs Policy, and For returns the
// [*PolicyError] too.
func (c *Config) For(key string) (Policy, error) {
	def := c.Policy.Effective()
	if c.Override != nil {
		if p, ok := c.Override(key); ok {
			if err := p.Validate(); err != nil {
				return def, err
			}
			return p.Over(def), nil
		}
	}
	return def, nil
}

// Validate reports a Config that no Pacer can run: an invalid Policy, as
// a [*PolicyError], or a negative MaxKeys.
func (c *Config) Validate() error {
	if err := c.Policy.Validate(); err != nil {
		return err
	}
	if c.MaxKeys < 0 {
		return &PolicyError{Field: "MaxKeys", Value: c.MaxKeys, Reason: "must not be negative"}
	}
	return nil
}
