package politeredis

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// registryEvery is the time between two writes of one process to the
// fleet's index of keys, but for those of a signal.
const registryEvery = time.Second

// registryKeys bounds the keys that the fleet's index holds: the ones
// the fleet used last.
const registryKeys = 10000

// A registry writes the keys that this process starts requests on to the
// fleet's index, prefix:keys, a sorted set of keys by when one of the
// fleet last used each, so that the Stats of any process lists the
// fleet's keys and not only its own. The release of a request writes the
// keys used since the last write when registryEvery has passed since it,
// or when the request drew a signal (its key is paused or backs off),
// in one pipeline: ZADD, a trim of the keys whose state has expired (by
// the transport's MaxCrawlDelay) and of those past registryKeys, and
// PEXPIRE, so that the index of an idle fleet expires with its keys. The
// write is one round trip on the path of that release, and none starts a
// goroutine: a Pacer leaves nothing running after a request, in a test's
// bubble as in a program.
type registry struct {
	p       *pacer
	mu      sync.Mutex       // guards pending and wrote
	pending map[string]int64 // the keys used since the last write, each with when, in µs on the Pacer's clock
	wrote   time.Time        // when the last write started
}

// key returns the Redis key of the fleet's index.
func (r *registry) key() string { return r.p.o.prefix + ":keys" }

// add records that this process started a request on key. It keeps at
// most registryKeys keys waiting to be written; past that, a key is
// written at its next use.
func (r *registry) add(key string) {
	at := r.p.now().UnixMicro()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = make(map[string]int64)
	}
	if _, ok := r.pending[key]; ok || len(r.pending) < registryKeys {
		r.pending[key] = at
	}
}

// due returns the keys to write now, and takes them from those waiting:
// all of them when registryEvery has passed since the last write or now
// is true, else none.
func (r *registry) due(now bool) map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pending) == 0 || !now && time.Since(r.wrote) < registryEvery {
		return nil
	}
	batch := r.pending
	r.pending, r.wrote = nil, time.Now()
	return batch
}

// keep puts back the keys of a batch that could not be written, but
// those used again since.
func (r *registry) keep(batch map[string]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = batch
		return
	}
	for key, at := range batch {
		if _, ok := r.pending[key]; !ok && len(r.pending) < registryKeys {
			r.pending[key] = at
		}
	}
}

// write adds the keys due to the fleet's index, bounded by ctx, the
// context of the request whose release writes, and by the Pacer's
// timeout. It sends nothing while the index's server is in an outage, and
// a batch it cannot write waits for the next.
func (r *registry) write(ctx context.Context, signal bool) {
	batch := r.due(signal)
	if batch == nil {
		return
	}
	k := r.key()
	if h := r.p.servers.of(ctx, k); h.isDown.Load() {
		r.keep(batch)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, r.p.o.timeout)
	defer cancel()
	members := make([]redis.Z, 0, len(batch))
	var last int64
	for key, at := range batch {
		members = append(members, redis.Z{Score: float64(at), Member: key})
		last = max(last, at)
	}
	keep := r.p.policies.Policy.MaxCrawlDelay + forgetAfter // as long as a key's state may live past its last start
	send := func(ctx context.Context) error {
		_, err := r.p.client.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.ZAdd(ctx, k, members...)
			pipe.ZRemRangeByScore(ctx, k, "-inf", "("+strconv.FormatInt(last-keep.Microseconds(), 10))
			pipe.ZRemRangeByRank(ctx, k, 0, -registryKeys-1)
			pipe.PExpire(ctx, k, keep)
			return nil
		})
		return err
	}
	var err error
	if r.p.releases.detach {
		// A Cluster client may hold a call past its context (see batcher).
		var cmd *redis.Cmd
		if cmd, err = within(ctx, func(ctx context.Context) *redis.Cmd {
			cmd := redis.NewCmd(ctx)
			cmd.SetErr(send(ctx))
			return cmd
		}); err == nil {
			err = cmd.Err()
		}
	} else {
		err = send(ctx)
	}
	if err != nil {
		r.keep(batch)
	}
}

// fleet returns the keys the fleet used last, at most n, most recent
// first.
func (r *registry) fleet(ctx context.Context, n int) ([]string, error) {
	return r.p.client.ZRevRange(ctx, r.key(), 0, int64(n-1)).Result()
}
