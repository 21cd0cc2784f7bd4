// Package pace decides when requests to a server may start, so that a
// client never hits one server faster than its pace: a base delay, the
// site's robots.txt Crawl-delay, the server's own latency, and the pauses
// the server asks for (429, 503, Retry-After, rate-limit fields). It is
// the pacing of github.com/polite-go/polite's transport, and serves on its
// own a program that schedules its own requests.
//
// A [Pacer] paces requests per key, by default a host name. A request
// asks it for its turn with [Pacer.Acquire], which waits until the key's
// next allowed start and a free in-flight slot, is sent, and gives its
// [Lease] back with [Pacer.Release] and the [Outcome] once its response
// headers or an error have come:
//
//	l, err := p.Acquire(ctx, pace.Request{Key: "example.com"})
//	if err != nil {
//		return // ctx ended, or its deadline falls before the turn
//	}
//	// resp, err := transport.RoundTrip(req), for https://example.com + path
//	p.Release(l, pace.Outcome{Class: pace.Success})
//
// [NewMemory] keeps each key's state in this process; a fleet of processes
// shares one Pacer that keeps it in a store (the nested module redis/,
// package politeredis), and [github.com/polite-go/polite/politetest]
// holds any Pacer to the same cases as the in-memory one.
//
// # The policy
//
// A request to a key starts no sooner than
//
//	max(lastStart + pace·(1 + Jitter·U), blockedUntil, quota, lastStart + limit)
//	pace = max(min(max(BaseDelay, LatencyFactor·latency)·2^level, MaxDelay), BaseDelay, min(CrawlDelay, MaxCrawlDelay))
//
// The names in capitals are the fields of [Policy]; each field's
// documentation gives its default and why, and [None] turns off the part
// a field documents it for.
//
//   - The pace. U is uniform in [0,1) and drawn once per start; latency
//     is a smoothed time to response headers (it rises at once and decays
//     by halves); level is the backoff level; CrawlDelay is the larger of
//     the Crawl-delays of this request (Request.CrawlDelay) and of the
//     last request to the key (so that a robots.txt fetch, which knows
//     none, still waits it). At most MaxInFlight requests per key are in
//     flight (from Acquire to Release), and waiting requests start in the
//     order they came.
//   - Backoff. An Outcome of class [Signal] raises the level by one (once
//     per incident: requests that started before the last rise do not
//     raise it again, up to level 8) and pauses the key until
//     blockedUntil, BackoffBase·2^(level−1) away, at most MaxBackoff,
//     jittered upward. A timeout is no latency sample. RecoverAfter
//     successes started after the last rise lower the level by one; 30
//     minutes without a signal forget it.
//   - Retry-After. An Outcome's RetryAfter is a floor on the pause, never
//     a ceiling, capped at [MaxPause]; with a small BackoffBase, or None,
//     it is the wait.
//   - Rate-limit quotas. An Outcome's [Quota] slows the key before the
//     server answers 429: quota is the reset when no quota is left, or,
//     with a quarter of the limit or less, an even spread from the
//     partition's last start that never carries a start past the end of
//     its window. A reset is capped at MaxPause. The remaining count is
//     spent: each start takes one, so that requests started together,
//     before the next answer, never start more than the server said were
//     left; an answer's count, less the requests still in flight, replaces
//     it when it is lower or a new window has begun.
//   - A limit the server keeps and does not state. An Outcome that is
//     RateLimited (a 429 with neither a Retry-After nor a quota) says the
//     gap between its start and the one before was too short. The Pacer
//     searches for the least gap the server takes, limit, the way TCP's
//     slow start keeps a threshold: half again the longest gap that drew a
//     429 until a gap is taken, then halfway between the two, each trial
//     taken as good after 10 successes, until the two are within an
//     eighth; there it stays, and after 100 successes it probes a gap an
//     eighth shorter, 20 successes there moving it on, a 429 putting the
//     next probe off twice as long (up to 800 successes). A steady limit
//     costs a handful of 429s, and a limit that moves is followed; what
//     was learned is forgotten with the level, 30 minutes after the last
//     429. KeyState.Pace includes limit.
//   - Quota partitions. A quota belongs to a partition of the key
//     (Request.Partition, and within it the resource that the server named,
//     Quota.Partition) and holds only that partition's requests; a request
//     waits for all of its partition's, since which resource it spends is
//     known only from its answer. A request held by its partition's quota
//     waits apart from the key's queue, so it holds up no request of
//     another partition. Backoff stays the key's: a server in trouble is in
//     trouble for every partition. A key keeps the holds of at most 32
//     partitions; a new one drops the hold that ends first.
//   - A policy per key. [Config].Override gives some keys a policy of
//     their own, merged over the default; a Crawl-delay and a Retry-After
//     remain floors on what it sets.
//
// A request whose context's deadline falls before its earliest start,
// counting the requests queued ahead of it, fails at once with a
// [*DeadlineError], which matches [context.DeadlineExceeded].
//
// # Why a request waits
//
// A [Trace] on the context given to Acquire ([WithTrace]) hears, each time
// Acquire makes the request wait, what holds it: the term of the formula that sets its next start
// ([CausePace], [CauseCrawlDelay], [CauseBackoff], [CauseRetryAfter],
// [CauseQuota], [CauseQuotaSpread], [CauseRateLimit]), the in-flight cap
// ([CauseInFlight]) or the requests queued ahead ([CauseQueue]). A
// request that starts at once hears nothing, and a DeadlineError names
// what would have held it. Reporting is optional: a Pacer that reports
// nothing still paces right, and its requests' waits go without a cause;
// the in-memory Pacer reports every wait.
//
// # Memory
//
// The in-memory Pacer keeps state for at most Config.MaxKeys keys, a soft
// bound. Past it, keys with nothing left to enforce are dropped first,
// then keys whose pause and pace are over (forgetting a remembered backoff
// level), but never a key that is paused, waited on or busy, nor one
// before any Crawl-delay it may ask for has passed (including, while a
// robots.txt fetch is unread, the largest it may ask: [Pacer.RobotsRead]);
// the table comes back under its bound soon after a burst has passed.
// Config.Evicted hears of each key dropped. A key costs about 370 bytes
// (BENCHMARKS.md §4).
//
// # Costs
//
// An Acquire whose key is free takes one lock and allocates nothing; the
// Lease is a value, and the context is not searched for a Trace. A request
// that must wait joins its key's queue and waits on a timer; a Release
// wakes the head of the queue, which looks again, so a 429 delays every
// request already waiting. Keys are kept in 64 shards, so requests to
// different keys seldom share a lock.
package pace
