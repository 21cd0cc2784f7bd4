package politeredis

import (
	"context"
	"crypto/sha512"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/pace"
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
		policy:  strings.Join(policyValues(pace.Policy{}.Effective()), " "),
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
