package politeredis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/polite-go/polite"
	"github.com/redis/go-redis/v9"
)

// robotsKeep is how long a copy stays in Redis once it has expired: as the
// copy a fetch revalidates, or keeps when the file is unreachable. An
// origin that no process asks for within it leaves Redis.
const robotsKeep = 24 * time.Hour

// NewRobotsStore returns a [polite.RobotsStore] that shares robots.txt
// through client among every process that uses the same key prefix, for
// [polite.WithRobotsStore]:
//
//	t := polite.New(nil,
//		polite.WithPacer(politeredis.NewPacer(client)),
//		polite.WithRobotsStore(politeredis.NewRobotsStore(client)))
//
// An origin's file is fetched by one process at a time, which holds a
// claim on it in Redis while it fetches; the others wait for the result,
// looking again at the poll interval, doubled at each look up to a second.
// A claim lapses [WithFetchClaim] after its process stops renewing it, as
// when the process dies, and another process then fetches.
//
// When Redis is unreachable, each process fetches robots.txt itself until
// Redis answers again, and says so once; with [FailWhenUnreachable], Load
// fails with an error naming Redis instead. An invalid option makes it
// panic with a [*polite.ConfigError].
func NewRobotsStore(client redis.UniversalClient, opts ...RobotsOption) polite.RobotsStore {
	o := apply(opts, RobotsOption.applyRobots)
	s := &robotsStore{client: client, o: o,
		health: &health{logger: o.logger, probe: o.probe, down: reloader(client), dials: watchDials(client),
			fallback: "fetching robots.txt in this process", resumed: "sharing robots.txt in redis"}}
	return s
}

// robotsStore is the RobotsStore that NewRobotsStore makes.
type robotsStore struct {
	client redis.UniversalClient
	o      options
	health *health
}

// Load implements [polite.RobotsStore].
func (s *robotsStore) Load(ctx context.Context, origin string, fetch func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch) (*polite.RobotsFetch, error) {
	if !s.o.failClose && s.health.skip() {
		return s.alone(ctx, fetch)
	}
	keys := s.keys(origin)
	claim := strconv.FormatUint(rand.Uint64(), 36)
	wait := s.o.poll
	// A caller that waits for another's fetch takes the copy that fetch
	// stores, even one that is already expired: seen is the copy there was
	// when it began to wait.
	var seen *polite.RobotsFetch
	waiting := false
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		state, prev, err := s.look(ctx, keys, claim)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return s.unreachable(ctx, fetch, fmt.Errorf("politeredis: robots.txt of %s: %w", origin, err))
		}
		s.health.answered()
		landed := waiting && prev != nil && (seen == nil || !prev.FetchedAt.Equal(seen.FetchedAt))
		switch {
		case state == robotsFresh:
			return prev, nil
		case state == robotsClaimed && landed:
			s.unclaim(keys, claim)
			return prev, nil
		case state == robotsClaimed:
			return s.fetch(ctx, keys, claim, prev, fetch)
		case landed:
			return prev, nil
		}
		// Another process is fetching: look again.
		if !waiting {
			waiting, seen = true, prev
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-timer.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		wait = min(2*wait, time.Second)
	}
}

// keys returns the Redis keys of origin's copy and of its claim. They are
// hash-tagged by host, as the Pacer's keys are, so that a script touches
// one Cluster slot, and a host's robots.txt lives in the slot of its
// pacing state.
func (s *robotsStore) keys(origin string) []string {
	host := origin
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		host = host[:i]
	}
	k := s.o.prefix + ":robots:{" + host + "}" + origin
	return []string{k, k + ":claim"}
}

// What a look at an origin's copy finds.
const (
	robotsFresh   = 1 // a copy that has not expired
	robotsClaimed = 2 // none fresh, and the caller now holds the claim to fetch
	robotsBusy    = 3 // none fresh, and another process holds the claim
)

// look runs loadScript: it returns what it found, and the copy in Redis,
// fresh or not, with its Expires on this process's clock; nil when there
// is none.
func (s *robotsStore) look(ctx context.Context, keys []string, claim string) (int, *polite.RobotsFetch, error) {
	ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	cmd, err := within(ctx, func(ctx context.Context) *redis.Cmd {
		return loadScript.Run(ctx, s.client, keys, claim, s.o.claim.Milliseconds())
	})
	var v []any
	if err == nil {
		v, err = cmd.Slice()
	}
	if err != nil {
		return 0, nil, err
	}
	if len(v) != 3 {
		return 0, nil, fmt.Errorf("script reply %q", v)
	}
	state, _ := v[0].(int64)
	blob, _ := v[1].(string)
	left, _ := v[2].(int64)
	if state < robotsFresh || state > robotsBusy {
		return 0, nil, fmt.Errorf("script reply %q", v)
	}
	if blob == "" {
		if state == robotsFresh {
			return 0, nil, errors.New("a fresh copy with no content")
		}
		return int(state), nil, nil
	}
	f, err := decodeRobots([]byte(blob))
	if err != nil {
		return 0, nil, err
	}
	f.Expires = time.Now().Add(time.Duration(left) * time.Microsecond)
	return int(state), f, nil
}

// fetch runs fetch for the claim, renewing the claim until it ends, and
// shares the result. The fetch runs on a goroutine of its own, so that the
// caller may give up without ending it.
func (s *robotsStore) fetch(ctx context.Context, keys []string, claim string, prev *polite.RobotsFetch, fetch func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch) (*polite.RobotsFetch, error) {
	done := make(chan *polite.RobotsFetch, 1)
	go func() {
		ctx := context.WithoutCancel(ctx)
		stop := make(chan struct{})
		renewed := make(chan struct{})
		go s.renew(ctx, keys, claim, stop, renewed)
		f := fetch(ctx, prev)
		close(stop)
		<-renewed
		s.share(ctx, keys, claim, f)
		done <- f
	}()
	select {
	case f := <-done:
		return f, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// renew extends the claim every third of its life until stop closes, then
// closes renewed.
func (s *robotsStore) renew(ctx context.Context, keys []string, claim string, stop <-chan struct{}, renewed chan<- struct{}) {
	defer close(renewed)
	tick := time.NewTicker(s.o.claim / 3)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
			renewScript.Run(ctx, s.client, keys, claim, s.o.claim.Milliseconds()) // a failure lets the claim lapse: another process fetches
			cancel()
		}
	}
}

// share stores f under keys for the fleet and gives up the claim. When
// Redis fails, the others fetch again once the claim lapses.
func (s *robotsStore) share(ctx context.Context, keys []string, claim string, f *polite.RobotsFetch) {
	ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	fresh := max(time.Until(f.Expires), 0)
	err := storeScript.Run(ctx, s.client, keys, claim, encodeRobots(f),
		fresh.Microseconds(), (fresh + robotsKeep).Milliseconds()).Err()
	if err != nil && !s.o.failClose {
		s.health.failed(fmt.Errorf("politeredis: sharing %s: %w", f.URL, err))
	}
}

// unclaim gives up a claim that the caller took and no longer needs. When
// Redis fails, the claim lapses by itself.
func (s *robotsStore) unclaim(keys []string, claim string) {
	ctx, cancel := context.WithTimeout(context.Background(), s.o.timeout)
	defer cancel()
	unclaimScript.Run(ctx, s.client, keys, claim)
}

// unreachable handles a Load that found Redis unreachable with err: it
// fails with err under FailWhenUnreachable, and fetches in this process
// otherwise.
func (s *robotsStore) unreachable(ctx context.Context, fetch func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch, err error) (*polite.RobotsFetch, error) {
	if s.o.failClose {
		return nil, fmt.Errorf("%w (redis unreachable)", s.health.cause(err))
	}
	s.health.failed(err)
	return s.alone(ctx, fetch)
}

// alone fetches in this process, sharing nothing.
func (s *robotsStore) alone(ctx context.Context, fetch func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch) (*polite.RobotsFetch, error) {
	done := make(chan *polite.RobotsFetch, 1)
	go func() { done <- fetch(context.WithoutCancel(ctx), nil) }()
	select {
	case f := <-done:
		return f, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// loadScript looks at an origin's copy. KEYS: the copy, the claim. ARGV:
// the caller's claim, the claim's life in ms. It returns {state, copy or
// "", µs the copy has left to live, negative once expired}; when no copy
// is fresh and no one holds the claim, the caller takes it.
var loadScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local v = redis.call('HMGET', KEYS[1], 'v', 'until')
local left = 0
if v[2] then left = tonumber(v[2]) - now end
local copy = v[1] or ''
if v[1] and left > 0 then return {1, copy, left} end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {2, copy, left} end
return {3, copy, left}
`)

// storeScript stores a copy and gives up the caller's claim. KEYS: the
// copy, the claim. ARGV: the claim, the copy, µs it is fresh for, ms it
// stays in Redis.
var storeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'until', now + tonumber(ARGV[3]))
redis.call('PEXPIRE', KEYS[1], math.max(tonumber(ARGV[4]), 1))
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1
`)

// renewScript extends the caller's claim. KEYS: the copy, the claim.
// ARGV: the claim, its life in ms.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
return 0
`)

// unclaimScript gives up the caller's claim. KEYS: the copy, the claim.
// ARGV: the claim.
var unclaimScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) == ARGV[1] then return redis.call('DEL', KEYS[2]) end
return 0
`)
