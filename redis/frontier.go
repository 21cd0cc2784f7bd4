package politeredis

import (
	"context"
	"crypto/sha512"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/redis/go-redis/v9"
)

// A Frontier is a crawler's frontier that a fleet of processes shares in
// Redis: a [frontier.Queue] with the contract of package frontier's own,
// whose queues, leases, seen URLs and schedule every process reads and
// writes. See the package documentation, "A frontier for the fleet".
//
// A Frontier is safe for use by multiple goroutines. Its hooks are called
// outside its locks, and may be called from several goroutines at once.
type Frontier struct {
	client  redis.UniversalClient
	t       frontier.Transport
	o       options
	max     int // Options.MaxURLs
	maxHost int // Options.MaxHostURLs
	dedup   bool
	seen    func(context.Context, string) (bool, error)
	refused func(string, polite.Decision)
	scripts frontierScripts
	policy  string // the values of the scripts' default policy: a host of this policy stores none
	servers *servers
	calls   *batcher
	keep    *renewer[*turnRef]
	gate    gate
	adding  atomic.Int64 // Add calls under way in this process
	top     *top         // the shards' schedule, for a Cluster; nil otherwise
	fetched fetches      // the robots.txt fetches that turns were given back for

	endMu  sync.Mutex // guards ends and ending
	ends   []pendingEnd
	ending bool
}

// A turnRef is a Frontier's part of a [frontier.Turn]: its host, its lease
// and, once robots.txt was read, the host's policy as the transport gave
// it.
type turnRef struct {
	key, id string
	policy  string       // see policyArg; "" when not known
	ended   atomic.Bool  // Done or Requeue was called
	until   atomic.Int64 // the lease's end on this process's clock, ns since the epoch
}

// A pendingEnd is the end of a turn that Redis did not take, tried again
// in the background.
type pendingEnd struct {
	ref *turnRef
	how string
}

// The defaults of a Frontier's options.
const (
	defaultMaxURLs     = 1_000_000
	defaultMaxHostURLs = 100_000
	defaultTurnLease   = 10 * time.Second
)

// NewFrontier returns the Frontier of the fleet that shares client, whose
// URLs each process fetches through t, a [*polite.PoliteTransport] that
// paces with a Pacer of [NewPacer] on the same client and key prefix: the
// Frontier reads the pacing state that the Pacer keeps to know when each
// host can start. o is as for [frontier.New] (see the package
// documentation for where the two differ); opts are the options of the
// Frontier's Redis calls. client is a Client, a Sentinel failover client
// or a Cluster client; NewFrontier panics with a [*polite.ConfigError] for
// a Ring, whose shards no script can span, or for an option that is not
// valid.
func NewFrontier(client redis.UniversalClient, t frontier.Transport, o frontier.Options, opts ...FrontierOption) *Frontier {
	if _, ok := client.(*redis.Ring); ok {
		panic(&polite.ConfigError{Option: "politeredis.NewFrontier", Value: "a *redis.Ring", Reason: "a Ring's shards cannot share a script; use a Client, a FailoverClient or a ClusterClient"})
	}
	op := apply(opts, FrontierOption.applyFrontier)
	f := &Frontier{client: client, t: t, o: op, max: o.MaxURLs, maxHost: o.MaxHostURLs, dedup: o.Dedup,
		seen: o.Seen, refused: o.Refused,
		scripts: newFrontierScripts(op.prefix+":", op.prefix+":f:", op.turnLease, op.poll, isCluster(client)),
		policy:  strings.Join(policyValues(polite.PacingPolicy{}.Effective()), " "),
		calls:   &batcher{client: client, timeout: op.timeout, detach: isCluster(client)}}
	if f.max <= 0 {
		f.max = defaultMaxURLs
	}
	if f.maxHost <= 0 {
		f.maxHost = defaultMaxHostURLs
	}
	d := watchDials(client)
	f.servers = newServers(client, func(node string) *health {
		return &health{logger: op.logger, probe: op.probe, node: node, dials: d,
			fallback: "the frontier waits", resumed: "the frontier goes on"}
	})
	f.keep = newRenewer(op.turnLease, f.renewAll)
	if c, ok := client.(*redis.ClusterClient); ok {
		f.top = newTop(f, c)
	}
	return f
}

// hostKeys returns the keys of the host of pacing key k: its pacing
// state, its hash, its queue and its seen filter.
func (f *Frontier) hostKeys(k string) (pacing, hash, queue, seen string) {
	hash = f.o.prefix + ":f:{" + k + "}"
	return f.o.prefix + ":{" + k + "}", hash, hash + ":q", hash + ":s"
}

// shardOf returns the shard of the host of pacing key k: its sorted set
// and its counts, and its tag, "" on a server that is not a Cluster.
func (f *Frontier) shardOf(k string) (set, counts, tag string) {
	if f.top == nil {
		return f.o.prefix + ":f:sched", f.o.prefix + ":f:n", ""
	}
	_, hash, _, _ := f.hostKeys(k)
	tag = slotTag(keySlot(hash))
	return f.shardKeys(tag)
}

// shardKeys returns the sorted set and the counts of the shard of tag.
func (f *Frontier) shardKeys(tag string) (set, counts, same string) {
	if tag == "" {
		return f.o.prefix + ":f:sched", f.o.prefix + ":f:n", ""
	}
	return f.o.prefix + ":f:sched:{" + tag + "}", f.o.prefix + ":f:n:{" + tag + "}", tag
}

// argv returns the arguments of a script: the instant for tests or "",
// then extra.
func (f *Frontier) argv(extra ...string) []any { return scriptArgs(f.o.clock, 0, extra...) }

// A shardReply is what a script's reply ends with: a score (when to look
// at a host next, -1 for never: see frontierLua), its shard's version and
// URLs queued or leased, and its now, all as the script saw them.
type shardReply struct {
	earliest, version, held, now int64
}

// due returns when the score is due, on this process's clock (far off for
// never), and whether the shard holds nothing.
func (r shardReply) due() (time.Time, bool) {
	if r.earliest < 0 {
		return time.Now().Add(100 * 365 * 24 * time.Hour), r.held <= 0
	}
	return time.Now().Add(time.Duration(r.earliest-r.now) * time.Microsecond), r.held <= 0
}

// run runs script on keys with args, by the batcher, on the server that
// holds keys[0], and returns its reply; orphan is the batcher's. A call
// that fails marks the server as failed; one that is answered, as up.
func (f *Frontier) run(ctx context.Context, script *redis.Script, keys []string, args []any, orphan func(*redis.Cmd)) ([]any, error) {
	h := f.servers.of(ctx, keys[0])
	cmd, err := f.calls.run(ctx, h.node, script, keys, args, orphan)
	if err != nil {
		return nil, err
	}
	r, err := cmd.Slice()
	switch {
	case err == nil:
	case isReply(err):
		return nil, fmt.Errorf("politeredis: %w", err)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	default:
		h.failed(err)
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, h.cause(err))
	}
	h.answered()
	return r, nil
}

// tailOf reads the shardReply that ends r.
func tailOf(r []any) shardReply {
	n := len(r)
	if n < 4 {
		return shardReply{earliest: -1, held: 1}
	}
	i := func(v any) int64 { x, _ := v.(int64); return x }
	return shardReply{earliest: i(r[n-4]), version: i(r[n-3]), held: i(r[n-2]), now: i(r[n-1])}
}

// Add implements [frontier.Queue]: it queues rawURL, an absolute http or
// https URL, at the tail of its pacing key's queue, and reports whether
// it did. With Options.Dedup it queues the URL only if the fleet never
// queued it (see the package documentation for the seen filter's cost and
// error); Options.Seen, when set, is asked first. It fails with
// [frontier.ErrFull] or [frontier.ErrHostFull] past a bound, with the Seen
// hook's error, or when Redis does not answer within ctx and the timeout
// (see [WithTimeout]): then with an error that matches [ErrUnreachable],
// or ctx's. It makes one call and does not try again: a URL it failed to
// queue is not marked seen, unless the call was answered after the
// caller stopped waiting.
func (f *Frontier) Add(ctx context.Context, rawURL string) (bool, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false, err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return false, fmt.Errorf("politeredis: %q is not an absolute http or https URL", rawURL)
	}
	if f.seen != nil {
		if seen, err := f.seen(ctx, rawURL); err != nil || seen {
			return false, err
		}
	}
	key := f.t.PacingKey(u)
	pacing, hash, queue, seen := f.hostKeys(key)
	set, counts, tag := f.shardOf(key)
	dedup := "0"
	if f.dedup {
		dedup = "1"
	}
	digest := sha512.Sum512([]byte(rawURL))
	maxAll := f.max
	if f.top != nil {
		if maxAll = f.top.allowance(tag, f.max); maxAll <= 0 {
			return false, frontier.ErrFull
		}
	}
	f.adding.Add(1)
	defer f.adding.Add(-1)
	r, err := f.run(ctx, f.scripts.add, []string{pacing, hash, queue, seen, set, counts},
		f.argv(key, rawURL, dedup, strconv.Itoa(f.maxHost), strconv.Itoa(maxAll), string(digest[:])), nil)
	if err != nil {
		return false, err
	}
	if len(r) < 5 {
		return false, fmt.Errorf("politeredis: frontier reply %q", r)
	}
	tail := tailOf(r)
	f.news(tag, tail)
	switch r[0] {
	case int64(0):
		return true, nil
	case int64(2):
		return false, frontier.ErrFull
	case int64(3):
		return false, frontier.ErrHostFull
	}
	return false, nil
}

// news takes in what a shard's reply says: for a Cluster, the schedule of
// shards; then the Next calls that wait in this process.
func (f *Frontier) news(tag string, r shardReply) {
	if f.top != nil {
		f.top.learn(tag, r)
		return
	}
	due, empty := r.due()
	f.gate.learn(due, empty)
}

// Next implements [frontier.Queue]: it returns the next URL of a host that
// can take a request now, by the pacing state the fleet shares, in a Turn
// that the caller ends by Done or Requeue; no other process hands out a
// URL of that host until then, or until the Turn's lease runs out (see
// [WithTurnLease]), which this process renews while the Turn runs. It
// decides each URL by the transport's Check first, and drops one that
// robots.txt refuses. It waits until a host is due, within ctx, and through
// an outage of Redis, trying it again every probe interval; when ctx ends
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
func (f *Frontier) policyArg(p polite.PacingPolicy) string {
	s := strings.Join(policyValues(p), " ")
	if s == f.policy {
		return "="
	}
	return s
}

// Done implements [frontier.Queue]: it ends t, and its URL leaves the
// frontier. When Redis does not take the call, this process tries again in
// the background until it does, or t's lease has run out, whose URL is
// then handed out again: a duplicate, which the fleet counts.
func (f *Frontier) Done(t frontier.Turn) { f.endTurn(t, "d") }

// Requeue implements [frontier.Queue]: it ends t, and gives its URL back
// to the head of its host's queue. When Redis does not take the call, the
// URL comes back anyway when its lease runs out.
func (f *Frontier) Requeue(t frontier.Turn) { f.endTurn(t, "q") }

// endTurn ends t, a Turn of f's, once.
func (f *Frontier) endTurn(t frontier.Turn, how string) {
	ref, ok := t.Ref.(*turnRef)
	if !ok || t.Queue != frontier.Queue(f) {
		return
	}
	f.end(ref, how)
}

// end ends the turn of ref, once: how is d done, r refused, q requeued or
// g given back uncounted. A call that Redis does not take is tried again
// in the background.
func (f *Frontier) end(ref *turnRef, how string) {
	if ref.ended.Swap(true) {
		return
	}
	f.keep.drop(ref)
	if !f.endNow(ref, how) {
		f.endLater(ref, how)
	}
}

// endNow makes the call that ends ref's turn, bounded by the timeout, and
// reports whether Redis took it.
func (f *Frontier) endNow(ref *turnRef, how string) bool {
	pacing, hash, queue, _ := f.hostKeys(ref.key)
	set, counts, tag := f.shardOf(ref.key)
	ctx, cancel := context.WithTimeout(context.Background(), f.o.timeout)
	defer cancel()
	r, err := f.run(ctx, f.scripts.end, []string{pacing, hash, queue, set, counts},
		f.argv(ref.key, ref.id, how, ref.policy), nil)
	if err != nil {
		return false
	}
	f.news(tag, tailOf(r))
	return true
}

// endLater tries the end of ref's turn again in the background, every
// probe interval, until Redis takes it or the lease has run out.
func (f *Frontier) endLater(ref *turnRef, how string) {
	f.endMu.Lock()
	defer f.endMu.Unlock()
	f.ends = append(f.ends, pendingEnd{ref, how})
	if !f.ending {
		f.ending = true
		go f.endAll()
	}
}

// endAll is endLater's goroutine.
func (f *Frontier) endAll() {
	t := time.NewTimer(f.o.probe)
	defer t.Stop()
	for {
		<-t.C
		f.endMu.Lock()
		batch := f.ends
		f.ends = nil
		f.endMu.Unlock()
		var left []pendingEnd
		for _, e := range batch {
			if time.Now().UnixNano() < e.ref.until.Load() && !f.endNow(e.ref, e.how) {
				left = append(left, e)
			}
		}
		f.endMu.Lock()
		f.ends = append(f.ends, left...)
		if len(f.ends) == 0 {
			f.ending = false
			f.endMu.Unlock()
			return
		}
		f.endMu.Unlock()
		t.Reset(f.o.probe)
	}
}

// renewAll renews the leases of the turns of batch, in one pipeline to
// each server. A turn whose lease had run out is not brought back: its URL
// may be out again, in another process.
func (f *Frontier) renewAll(batch []*turnRef) {
	ctx, cancel := context.WithTimeout(context.Background(), f.o.timeout)
	defer cancel()
	calls := make([]*call, 0, len(batch))
	hs := make([]*health, 0, len(batch))
	for _, ref := range batch {
		_, hash, _, _ := f.hostKeys(ref.key)
		set, _, _ := f.shardOf(ref.key)
		h := f.servers.of(ctx, hash)
		calls = append(calls, &call{script: f.scripts.renew, keys: []string{hash, set}, args: f.argv(ref.key, ref.id), server: h.node})
		hs = append(hs, h)
	}
	sent := time.Now()
	runAll(ctx, f.client, calls)
	for i, c := range calls {
		r, err := c.cmd.Slice()
		if err != nil {
			if !isReply(err) {
				hs[i].failed(err)
			}
			continue
		}
		hs[i].answered()
		if len(r) > 0 && r[0] == int64(1) {
			batch[i].until.Store(sent.Add(f.o.turnLease).UnixNano())
		}
	}
}

// Close stops what the Frontier runs in the background: the renewal of
// the turns still out, whose leases then run out and whose URLs are handed
// out again, and the alarm of the Next calls that wait. Ends of turns that
// Redis has not taken yet are still tried until their leases run out. A
// Frontier must not be used after Close.
func (f *Frontier) Close() error {
	f.keep.close()
	f.gate.stop()
	return nil
}
