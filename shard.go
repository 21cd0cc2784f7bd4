package polite

import "hash/maphash"

// The pacer's hosts and the robots.txt cache's origins are each kept in
// shards: maps picked by a hash of the host name, each behind a mutex of its
// own, so that requests to different hosts seldom take the same lock. The
// bounds on hosts and origins stay bounds on the whole: a lookup locks one
// shard, and only an insert into a full pacer or cache visits them all,
// one at a time.

// shardCount is the number of shards, a power of two.
const shardCount = 64

// shardSeed is the seed of every shard hash; it differs between processes.
var shardSeed = maphash.MakeSeed()

// shardIndex returns the shard of host, in [0, shardCount).
func shardIndex(host string) int {
	return int(maphash.String(shardSeed, host) & (shardCount - 1))
}

// cacheLinePad separates shards in memory, so that two cores locking two
// shards do not contend for one cache line.
type cacheLinePad [64]byte
