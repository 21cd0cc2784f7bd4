package pace

import "hash/maphash"

// The in-memory Pacer keeps its keys in shards: maps picked by a hash of
// the key, each behind a mutex of its own, so that requests to different
// keys seldom take the same lock. The bound on keys stays a bound on the
// whole: a lookup locks one shard, and only an insert into a full Pacer
// visits them all, one at a time.

// shardCount is the number of shards, a power of two.
const shardCount = 64

// shardSeed is the seed of every shard hash; it differs between processes.
var shardSeed = maphash.MakeSeed()

// shardIndex returns the shard of key, in [0, shardCount).
func shardIndex(key string) int {
	return int(maphash.String(shardSeed, key) & (shardCount - 1))
}

// cacheLinePad separates shards in memory, so that two cores locking two
// shards do not contend for one cache line.
type cacheLinePad [64]byte
