// Package politeredis paces the requests of a fleet of processes that
// share hosts, by keeping each pacing key's state in Redis, shares their
// robots.txt files, and shares their crawl's frontier: it is a
// [pace.Pacer] for [polite.WithPacer], a [polite.RobotsStore] for
// [polite.WithRobotsStore], and a [frontier.Queue], the [Frontier]. It lives in the
// directory redis/ but is named politeredis rather than redis so that it
// does not clash with go-redis's package redis, which its callers import
// beside it.
//
//	rdb := redis.NewUniversalClient(&redis.UniversalOptions{
//		Addrs:                 []string{"localhost:6379"},
//		ContextTimeoutEnabled: true, // calls end with the request's context
//	})
//	defer rdb.Close()
//
//	client := &http.Client{Transport: polite.New(nil,
//		polite.WithUserAgent("ExampleBot/1.0 (+https://example.com/bot)"),
//		polite.WithPacer(politeredis.NewPacer(rdb)),
//		polite.WithRobotsStore(politeredis.NewRobotsStore(rdb)),
//	)}
//
// Every process then runs the delay policy of package polite as if it
// were one: the pace between starts, Crawl-delay floors, backoff on
// signals and Retry-After, rate-limit quotas and MaxInFlight hold across
// the fleet, not per process, and each origin's robots.txt is fetched
// once for the fleet rather than once by each process.
//
// # Partition or share
//
// A fleet that can route each URL to a process of its choosing needs none
// of this: send every URL to the process that owns its pacing key
// ([polite.PoliteTransport.PacingKey], hashed modulo the fleet's size, or
// by rendezvous hashing so that a process leaving moves only its own
// keys), and keep the in-memory pacer; each host is then paced, and its
// robots.txt fetched, by one process. Sharing never makes a host faster: a
// host paced at d takes at most 1/d requests a second whichever process
// sends them. It only lets any worker take any URL, as serverless workers
// or one shared queue do. With H busy hosts over P processes, hashing
// gives a process about H/P hosts (the busiest about
// H/P + sqrt(2·(H/P)·ln P)), and it needs about (H/P)·latency/d requests in
// flight to keep them busy: 10,000 hosts at d = 1s over 8 processes is
// about 1,250 hosts each (1,322 for the busiest), 1,250 requests a second
// and 250 in flight at 200ms of latency, well within one Go process.
//
// Sharing costs two Redis calls per request, one of them on the latency
// path, and about 180 bytes of the server's memory per host; one primary
// sustained 39,000 to 41,000 polite requests a second on a machine of 2
// vCPUs that ran the clients too (BENCHMARKS.md in the repository, §8,
// gives the method and the rest of the figures).
//
// # Data model
//
// Each pacing key k has one Redis key, prefix:{k} ("polite" is the default
// prefix; see [WithKeyPrefix]). Its hash tag {k} names the Cluster slot,
// so the client may be a single server, a Sentinel failover client or a
// Cluster, and keys spread over a Cluster's primaries by host.
//
// Its value is a sequence of MessagePack values, read and written whole
// by the scripts with Redis's cmsgpack library. They are, in order, ls,
// the last start; u, its jitter draw; fl, its Crawl-delay; est, the
// latency estimate; lvl and stk, the backoff level and the successes
// since it last changed; bu, no start before this; esc and lsig, the last
// escalation and the last signal; n, nb and nra, counts of starts,
// escalations and Retry-Afters; L, the leases of the requests in flight,
// an array of a random id followed by the instant it expires for each;
// T, tombstones, the ids of leases given back before their admissions ran
// (see When Redis is unreachable), each followed by the instant it
// expires; and Q, the quota holds of the key's partitions (see
// [polite.WithQuotaPartition]), seven values each: the request's
// partition, the resource the server named, when an exhausted quota
// resets, the gap that spreads a low one, the end of its window, the
// partition's last start and its jitter draw; at most 32 holds, the one that ends first dropped for a new one.
// Each array is left out when it and those after it are empty. Times are
// integer microseconds, instants since the Unix epoch on the server's
// clock.
//
// The key expires when forgetting it would let no request start earlier:
// 30 minutes (the time after which the policy forgets a backoff level)
// after the next start allowed, or when its last lease expires, or when
// its last quota hold ends, whichever is latest. Idle hosts leave Redis by themselves. A host takes about 180
// bytes of the server's memory.
//
// # Scripts
//
// Lua scripts, each one atomic call that touches one slot, run the policy
// on that state, reading it with one GET and writing it with one SET that
// sets its expiry: admission and release on every request, and three more
// that the sections below tell of (a peek that writes nothing, the giving
// back of a lease, the carrying of what a process did in an outage);
// go-redis sends them by EVALSHA and loads them when the server lacks
// them. The policy and the lease duration are constants
// in their text, so that a call passes only what changes; Pacers with the
// same policy share the scripts. A key with a policy of its own, which
// polite.WithPacingRules or polite.WithPacingFunc gives it, passes that
// policy with each call instead, so that no policy costs a script of its
// own. Their clock is the server's TIME, the one
// clock of the fleet. Jitter draws are made by the caller and passed in,
// so the scripts are deterministic.
//
// Admission either admits the request, dropping the expired leases,
// recording its start and adding its lease, and returns the start, or
// returns how long until the pace or a backoff allows a start (with when
// to look again, sooner when a backoff level is forgotten first), or says
// that every slot is leased and when the first lease expires.
//
// Release removes the request's lease and, unless the request was
// cancelled, learns from its outcome: the latency estimate, a raised or
// lowered backoff level, the pause, Retry-After as a floor on it, and the
// quota. It returns the change of level, the level and the pause.
//
// A value in a host's key that is not a state this package wrote (another
// type, so that GET fails with WRONGTYPE; bytes that are not MessagePack;
// values that are not numbers where numbers go) is no outage: the script
// replaces it with a state whose last start is now, so that no request
// starts sooner than the pace from the repair, and runs on it. The leases
// it held are lost. The Pacer says so once, to its logger, for each value
// it replaces.
//
// # Calls and waits
//
// A request to a host that is ready costs two calls: admission before it
// starts, on the request's latency path, and release when its response
// headers come. Release returns when its call is done, so that the next
// Acquire sees what it changed, or when the request's context (the one
// Acquire was given) ends, whichever is first. A Pacer sends up to four
// admissions at once to each server, each by its caller, and as many
// releases. The calls of either kind made while four are on their way to
// their server queue, then go together in one pipeline, one round trip for
// all of them, sent by a goroutine that the Pacer starts and that ends
// when the queue is empty. With a Cluster client a call sent alone goes by
// such a goroutine too, so that its caller stops waiting when the
// request's context ends even when go-redis holds the call longer, as a
// Cluster client holds every call while it looks up the server's commands,
// under a context of its own of 5s, until a look-up succeeds. Calls to one
// server never wait for calls to another, nor share a pipeline with them,
// so that a primary of a Cluster that does not answer holds up only its
// own keys. A request whose context ends while its admission is queued
// leaves the queue; one whose admission was sent, alone or in a pipeline,
// has the lease it took, or may yet take, given back (see When Redis is
// unreachable). A request that must wait sleeps on a timer, or until a
// request of the same process to the same key is released, then asks
// again: one more call per wake. A slot freed by another process is seen
// at the next poll (see [WithPollInterval]). Fairness among the waiters of
// the fleet is not first come, first served: whichever asks first after a
// start is allowed gets it. When the next allowed start is at or past the
// request's context deadline, Acquire fails at once with a
// [*pace.DeadlineError]; once the deadline has passed by the clock, it
// fails with the context's error and sends nothing, even before the
// context's timer has fired.
//
// A request's slot is leased for 10s (see [WithLeaseDuration]), and the
// Pacer renews the leases of its requests in flight every third of that,
// in one pipeline to each server: a process that dies with requests in
// flight holds their slots until their leases run out, within 10s of its
// death, however long a request may take.
//
// A key's state stays in Redis at least 30 minutes past its last start,
// when a backoff level is forgotten, and at least the policy's
// MaxCrawlDelay past it, so that a Crawl-delay that a robots.txt fetch
// finds is honoured from the fetch's start: [pace.Pacer.RobotsRead] needs
// no call to Redis. Idle keys then expire by themselves, which is no
// eviction; pace.Config.Evicted hears of the keys this process paces in its
// memory during an outage and drops to keep within pace.Config.MaxKeys.
//
// # Reading the shared state
//
// The Pacer is a [pace.ReadyPacer] and a [pace.StatsPacer], so that a
// transport's Ready, Check, Stats and the deadline of a request waiting
// for robots.txt read the fleet's state, not this process's: a pause that
// another process's 429 started shows in every process. Ready (and so
// PoliteTransport.Ready, Check, and the deadline check of a robots.txt
// wait) is one call of a script that reads the key's state and writes
// nothing: the next start allowed, the pace, the level, the pause, the
// latency estimate, the last start, the live leases and the fleet's
// counts; Waiting and Busy count this process's waiting requests, the
// only ones it knows. Stats lists the fleet's keys, not only this
// process's: the 1,000 the fleet used last, which a sorted set,
// prefix:keys, holds by when one of the fleet last started a request on
// each, and the 1,000 this process used last (a set it keeps in its
// memory, touched at each start). It reads the set (one call), then each
// key with the same script as Ready, in one pipeline to each server, the
// pipelines at once: two round trips, and the server's time per key
// (BENCHMARKS.md has the figures). Keys that Redis has let expire are left
// out. Each process writes the keys it started requests on to the set:
// the release of a request writes those used since the last write when a
// second has passed since it, or at once when the request drew a signal,
// so that a pause shows in every process's Stats as soon as it starts. The
// write is one pipeline, one round trip on that release's path, which also
// trims the set to the 10,000 keys used last and to those whose state may
// live (the transport's MaxCrawlDelay plus 30 minutes), and sets it to
// expire as they do. Neither read is on a request's path unless the caller
// puts it there.
//
// # robots.txt
//
// An origin's copy is a hash, prefix:robots:{host}origin, tagged by host
// like the host's pacing state: field v holds the fetch's outcome (status,
// body, error, validators, when and how long), encoded by this package,
// and field until the end of its life in µs on the server's clock. The
// key stays 24 hours past that end, as the copy a fetch revalidates with
// its ETag or keeps when the file is unreachable; then it leaves Redis. A
// copy takes its body's length and about 510 bytes more.
//
// Loading a copy is one call, a script that returns the copy and how long
// it has left to live, so that each process reads the expiry on its own
// clock; when none is fresh, the same call takes the claim to fetch, a
// key beside the copy that expires (see [WithFetchClaim]) unless its
// holder renews it, which it does every third of its life while it
// fetches. The holder fetches on a context that its caller's cancellation
// does not end, stores the result and drops its claim in one more call.
// The others look again, from the poll interval doubling to a second,
// each within its own context. Each process parses the copy itself and
// keeps its parsed file until the copy expires: a copy costs the fleet
// one call per process per lifetime, and its fetch one request to the
// host.
//
// # A frontier for the fleet
//
// A fleet that shares its hosts needs more than a shared pace: each
// worker needs a URL whose host can start now, wherever it was found. A
// process that crawls only the links it found itself starves when it
// wins no seed, and a URL it holds dies with it. [Frontier] is package
// frontier's Frontier for the fleet: every process adds the links it
// finds to it, and takes from it the next URL of any host that can start,
// so that the processes share the work as the workers of one process do.
// The two are a [frontier.Queue], held to the same cases by
// politetest.RunQueue, and a crawler moves from one to the other by the
// line that makes its frontier:
//
//	// One process would write frontier.New(tr, frontier.Options{Dedup: true}).
//	var f frontier.Queue = politeredis.NewFrontier(rdb, tr, frontier.Options{Dedup: true})
//
// A fleet that partitions its hosts (see Partition or share) needs none of
// it: each process keeps its own hosts' URLs in its own frontier.
//
// Each host keeps, in its own slot beside its pacing state, a queue of
// its URLs (each written after its origin), the lease of its URL out, and
// its seen filter; a sorted set holds the hosts by when each can start,
// which the scripts that start a host or end its turn read from its
// pacing state (they read the state through the Pacer's own code, and
// never write it). Next is one call: a script takes the first host due,
// pops its URL and leases it, so that no other process has a URL of that
// host out until the turn ends. The lease lasts 10s (see [WithTurnLease])
// and the process renews it every third of that while the turn runs;
// Done ends it, Requeue gives the URL back to the head of its host's
// queue, and a lease that runs out, as a dead process's does, gives it
// back too, to be handed out again at once, counted in
// FrontierStats.Redelivered. Delivery is at least once: the duplicates
// are at most the URLs out when a process died. Next trusts a host's
// score: a host whose pacing state requests that are not the frontier's
// changed may be handed out early, and its request then waits in the
// transport, which keeps the pace.
//
// Next decides each URL by the transport's Check before it hands it out,
// each process with its own copy of the robots.txt that the robots store
// shares: a URL that robots.txt refuses is dropped and reported to
// Options.Refused; one whose Check fetched robots.txt, a request that took
// its host's turn, goes back to the head of its queue until the host can
// start again. Options.RobotsPrefetch plays no part. Options.Dedup keeps
// the fleet's seen URLs in the same script as the queues, so that no
// process can mark a URL seen and die before queueing it;
// Options.Seen, when set, is asked before the script, and such a death
// can lose a URL it marked. MaxHostURLs holds exactly; MaxURLs holds
// exactly on one server, and on a Cluster against the fleet's count as
// the process last heard it, so that Adds under way at once may pass it.
//
// What it costs, on a server or a Sentinel's primary: Add, Next and Done
// are one call each, and Next's Check one more (the Pacer's Ready, for
// the pace it reports). One primary with a CPU of its own took 18,000 to
// 24,000 Next and Done pairs a second (a median of 21,000), against
// 28,000 to 33,000 requests of the Pacer in the same session
// (BENCHMARKS.md, §8). On a Cluster the
// hosts of a slot share a shard, and the shards are scheduled by a sorted
// set of their own, the top, on one primary: Next is two calls (the top,
// then the shard), Add and Done two (the shard, then the top), and each
// Next of the fleet passes through the top's primary.
//
// Its memory, measured with URLs of 58 to 66 bytes: 27 bytes a queued
// URL beyond a host's first (its bytes after its host's origin, about 30
// here, in a list); about 570 bytes a host, beside the 180 of its pacing
// state; with Dedup, about 160 bytes more a host and 3 to 5 a URL for the
// seen filter. The filter is a scalable Bloom filter a host: levels of
// 16, 32, 64 ... URLs, each at 20 bits a URL and half a bit more than the
// level before, in 64-octet blocks. Of 100,000 URLs of one host, it took
// 82 in 100,000 others for seen (0.082%) and kept 4.2 octets each; its
// false positives stay under 0.1% up to 100,000 URLs a host, and a URL it
// takes for seen is never crawled. A crawl of 100 million URLs costs its
// filters 0.3 to 0.5 GiB: 366 MiB over a million hosts of 100 URLs,
// 470 MiB over 10,000 hosts of 10,000.
//
// When Redis does not answer, Add fails at once (one call, within its
// context and [WithTimeout]) with an error that matches [ErrUnreachable],
// and the caller keeps its URL: politefleet requeues the page whose links
// it could not add. Next waits through the outage, within its context,
// trying Redis again every second, and the crawl resumes when it answers;
// a Done that Redis did not take is tried again in the background until
// its lease has run out. What Redis acknowledged is what it keeps: a
// server stopped and resumed loses nothing; one restarted keeps what its
// append-only file holds (appendfsync always keeps every acknowledged
// call), and without persistence nothing; a Cluster failover loses what
// the dead primary had not replicated: the URLs added, taken and ended in
// its last moment, on its slots. Killing a primary of three under a crawl
// that added 4,391 to 9,820 URLs lost none of them, in four runs
// (TestFrontierFailover).
//
// # When Redis is unreachable
//
// Every call is bounded by the request's context and by [WithTimeout];
// build the client with ContextTimeoutEnabled, so that go-redis ends a
// call to a server that hangs when its context ends, not after its own
// read timeout. When a call fails, the Pacer paces the keys of that server
// in the memory of its process with [pace.NewMemory], says so once
// through its logger (see [WithLogger]; by default it logs nothing), and
// tries the server again at most once a second, going back to it when it
// answers. A call that the request's context cuts short counts as a
// failure only when it was on its way for a tenth of WithTimeout or more:
// one cut sooner, as a call sent a moment before its request's deadline,
// tells nothing of the server, and the lease it may have taken is given
// back by a call that WithTimeout alone bounds, which judges the server
// instead. Health is kept per server: for a Cluster, per primary, found
// by the slot of the key, so that an outage of one primary moves only the
// hosts whose keys it holds, and an answer from one primary brings back
// only its own. [FailWhenUnreachable] makes Acquire fail instead.
//
// The warning carries the call's error. When that says only that the
// call's context ended, as it does when go-redis was still retrying a dial
// that failed, the warning adds the last dial's error ("connect:
// connection refused"), or, when that dial succeeded, that Redis did not
// answer in time; to see the dials, the Pacer and the store each add a
// hook to the client that watches them and changes nothing. A Cluster's or
// Ring's nodes are watched from the Pacer's or store's making on; of
// nodes made before, the warning can tell no more than the error.
//
// An outage leaves leases that no release will give back: an admission
// whose caller stopped waiting (a stopped server runs it when it resumes),
// a release that could not be sent, or one that Release, finding the
// key's server down, did not try. The Pacer gives them back in the
// background, at once and then at each probe interval, until the server
// answers or the lease has expired, with a script that drops the lease,
// or, when its admission has not run yet, leaves a tombstone on which
// that admission, when it runs, admits nothing. The outcome of such a
// request is lost. The goroutine that does this ends when none is left.
//
// What a process did in its memory in an outage is carried into Redis when
// the key's server answers: the last start and the pause, as durations
// before and after the server's now (so that no clocks need agree), each
// taken only if it is later than what Redis holds. A request carries its
// own key's in its admission; the other keys go together in one pipeline
// to each server, at most once a probe interval. A server that comes back
// empty, as one restarted without persistence, so keeps the pace from the
// starts made in memory. A request that still waits for its turn in memory
// when the server answers asks Redis instead: once the process has found
// the server back, it starts nothing more in memory. Requests
// in flight in memory are not carried: for a moment the fleet may have
// more than MaxInFlight requests in flight on such a key. A process that
// has not yet found the server back paces alone until it does; its last
// start in memory and the next start in Redis may be closer than the pace.
//
// A Cluster client reloads its slot map when a call fails: go-redis does
// so by itself only after a MOVED, ASK or READONLY reply, or once the map
// is a minute old, so that after a failover the promoted replica's slots
// would keep going to the dead primary's address. A failover loses what
// the dead primary had not replicated: the starts, leases and pauses
// written in the moment before it died. The hosts of that primary are
// paced in memory from the first failed call until the replica is
// promoted and the map reloaded; then what each process did meanwhile is
// carried into the new primary as above. Run the Cluster with
// cluster-require-full-coverage no, or every primary refuses every call
// while one is down, and every host is paced in memory.
//
// An outcome that cannot be reported is lost. Likewise a robots store
// fetches robots.txt in its own process, says so once, and shares through
// Redis again when it answers; with FailWhenUnreachable, requests fail
// with an error that names Redis. A copy that a process fetched in an
// outage lives its lifetime in that process alone.
package politeredis
