package politeredis

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// On a Cluster, a Frontier keeps a shard per slot that holds hosts (see
// frontierLua), and the shards in a schedule of their own: the top, a
// sorted set FP{top} of the shards' tags, each scored by its shard's
// first score, with FP{top}v, a hash of the version of each shard that
// the top last took in, and FP{top}n, a hash of the URLs each shard holds
// and, in the field "", their sum: one slot. Each call to a shard is followed by an update
// of the top, which takes it in only if its version is newer than what
// it holds, so that updates that cross on their way leave the newest.
//
// A shard's script and the update of the top are two calls: a process
// that dies between them leaves the top behind the shard. An update that
// would raise a shard's score (a URL taken) is sent with the process's
// next call to the top, since a score left too early costs only a look
// that finds nothing; one that would lower it (a URL added, a turn ended)
// is sent at once, since a score left too late would hold the shard's
// hosts back. What a death loses is made good by a repair that reads
// every shard of the 16,384 slots, in one pipeline to each primary, and
// brings the top up to date: one process of the fleet runs it every
// repairEvery, and every process before it returns ErrEmpty.

// topLua updates the top and, when asked, names a shard that is due.
//
// KEYS: 1 the top, 2 its versions, 3 its counts. ARGV: 1 the instant for
// tests or "", 2 "pick" to name a shard, then for each update a shard's
// tag, its first score (-1: it holds nothing), its version and the URLs
// it holds.
//
// It returns {tag of a shard due or ”, the top's first score or -1, the
// URLs the shards hold, now}.
const topLua = nowLua + `
local i = 3
while i + 3 <= #ARGV do
  local tag, e, v, h = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
  if v > (tonumber(redis.call('HGET', KEYS[2], tag)) or -1) then
    redis.call('HSET', KEYS[2], tag, v)
    if e < 0 then e = '+inf' end
    redis.call('ZADD', KEYS[1], e, tag)
    local was = tonumber(redis.call('HGET', KEYS[3], tag)) or 0
    redis.call('HSET', KEYS[3], tag, h)
    redis.call('HINCRBY', KEYS[3], '', h - was)
  end
  i = i + 4
end
local due = ''
if ARGV[2] == 'pick' then
  local d = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 1)
  if #d > 0 then due = d[1] end
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local e = -1
if #first > 0 and first[2] ~= 'inf' then e = tonumber(first[2]) end
return {due, e, tonumber(redis.call('HGET', KEYS[3], '')) or 0, now}
`

// repairEvery is how often one process of a fleet on a Cluster reads
// every shard to bring the top up to date.
const repairEvery = 30 * time.Second

// A top is a Frontier's view of the schedule of shards on a Cluster.
type top struct {
	f      *Frontier
	client *redis.ClusterClient
	script *redis.Script
	keys   []string // the top, its versions, its counts

	mu      sync.Mutex            // guards the fields below
	pending map[string]shardReply // updates that raise a shard's score, sent with the next call
	held    map[string]int64      // the URLs of each shard, as this process last heard
	total   int64                 // the URLs of all shards, as the top last said
	repair  time.Time             // when this process last asked to repair

	repairMu sync.Mutex // guards repaired, and is held by the repair under way
	repaired time.Time  // when the last repair of this process ended
}

func newTop(f *Frontier, c *redis.ClusterClient) *top {
	p := f.o.prefix + ":f:{top}"
	return &top{f: f, client: c, script: redis.NewScript(topLua), keys: []string{p, p + "v", p + "n"},
		pending: make(map[string]shardReply), held: make(map[string]int64)}
}

// call runs topLua with this process's pending updates and those of
// updates, naming a shard that is due when pick is set.
func (t *top) call(ctx context.Context, pick bool, updates map[string]shardReply) (due string, first, total, now int64, err error) {
	t.mu.Lock()
	args := t.f.argv("")
	if pick {
		args[1] = "pick"
	}
	send := make(map[string]shardReply, len(t.pending)+len(updates))
	for tag, r := range t.pending {
		send[tag] = r
	}
	for tag, r := range updates {
		if p, ok := send[tag]; !ok || r.version > p.version {
			send[tag] = r
		}
	}
	clear(t.pending)
	t.mu.Unlock()
	for tag, r := range send {
		args = append(args, tag, strconv.FormatInt(r.earliest, 10), strconv.FormatInt(r.version, 10), strconv.FormatInt(r.held, 10))
	}
	reply, err := t.f.run(ctx, t.script, t.keys, args, nil)
	if err == nil && len(reply) < 4 {
		err = fmt.Errorf("politeredis: frontier reply %q", reply)
	}
	if err != nil {
		t.keep(send) // sent again with the next call
		return "", 0, 0, 0, err
	}
	due, _ = reply[0].(string)
	first, _ = reply[1].(int64)
	total, _ = reply[2].(int64)
	now, _ = reply[3].(int64)
	t.mu.Lock()
	t.total = total
	t.mu.Unlock()
	return due, first, total, now, nil
}

// keep keeps updates that were not sent, for the next call.
func (t *top) keep(updates map[string]shardReply) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for tag, r := range updates {
		if p, ok := t.pending[tag]; !ok || r.version > p.version {
			t.pending[tag] = r
		}
	}
}

// pick names a shard whose first host is due, or tells the gate when one
// will be and reports whether the frontier holds nothing: after a repair,
// when the top says so.
func (t *top) pick(ctx context.Context) (tag string, ok, empty bool, err error) {
	asked := time.Now()
	due, first, total, now, err := t.call(ctx, true, nil)
	if err != nil {
		return "", false, false, err
	}
	if due != "" {
		return due, true, false, nil
	}
	if first < 0 && total <= 0 {
		if err := t.repairAll(ctx, asked); err != nil {
			return "", false, false, err
		}
		if due, first, total, now, err = t.call(ctx, true, nil); err != nil {
			return "", false, false, err
		}
		if due != "" {
			return due, true, false, nil
		}
		if first < 0 && total <= 0 {
			return "", false, true, nil
		}
	}
	t.maybeRepair()
	at := time.Now().Add(t.f.o.poll)
	if first >= 0 {
		at = earlier(at, time.Now().Add(time.Duration(first-now)*time.Microsecond))
	}
	t.f.gate.hush(at)
	return "", false, false, nil
}

// learn takes in a shard's reply r: an update of the top, sent at once
// when it may lower the shard's score, with the next call otherwise; then
// the gate learns when a host is next due.
func (t *top) learn(tag string, r shardReply) {
	t.mu.Lock()
	t.held[tag] = r.held
	t.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), t.f.o.timeout)
	defer cancel()
	_, first, total, now, err := t.call(ctx, false, map[string]shardReply{tag: r})
	if err != nil {
		return
	}
	due := time.Now().Add(time.Duration(first-now) * time.Microsecond)
	t.f.gate.learn(due, first < 0 && total <= 0)
}

// raised keeps r, the reply of a take, for the next call to the top.
func (t *top) raised(tag string, r shardReply) {
	t.keep(map[string]shardReply{tag: r})
}

// allowance returns the most URLs that the shard of tag may hold for the
// fleet to stay within max, as this process last heard of the others.
func (t *top) allowance(tag string, max int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return max - int(t.total-t.held[tag])
}

// maybeRepair starts a repair in the background when this process has
// not asked to repair for repairEvery, and no other process of the fleet
// has claimed it for that long.
func (t *top) maybeRepair() {
	t.mu.Lock()
	if time.Since(t.repair) < repairEvery {
		t.mu.Unlock()
		return
	}
	t.repair = time.Now()
	t.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*t.f.o.timeout)
		defer cancel()
		claim := t.f.o.prefix + ":f:repair"
		if ok, err := t.client.SetNX(ctx, claim, "1", repairEvery).Result(); err != nil || !ok {
			return
		}
		t.repairAll(ctx, time.Now())
	}()
}

// repairAll reads the shard of every slot, in one pipeline to each
// primary, and brings the top up to date, unless a repair that this
// process started after since has ended: the Next calls that find the
// frontier empty at once share one.
func (t *top) repairAll(ctx context.Context, since time.Time) error {
	t.repairMu.Lock()
	defer t.repairMu.Unlock()
	if t.repaired.After(since) {
		return nil
	}
	calls := make([]*call, 0, slots)
	for s := range slots {
		set, counts, _ := t.f.shardKeys(slotTag(s))
		h := t.f.servers.of(ctx, set)
		calls = append(calls, &call{script: t.f.scripts.peek, keys: []string{set, counts}, args: []any{}, server: h.node})
	}
	runAll(ctx, t.client, calls)
	updates := make(map[string]shardReply)
	for s, c := range calls {
		r, err := c.cmd.Slice()
		if err != nil {
			return err
		}
		if tail := tailOf(r); tail.version > 0 {
			updates[slotTag(s)] = tail
		}
	}
	if _, _, _, _, err := t.call(ctx, false, updates); err != nil {
		return err
	}
	t.repaired = time.Now()
	return nil
}

// slots is the number of a Cluster's hash slots.
const slots = 16384

// keySlot returns the hash slot of a Redis key, as a Cluster finds it:
// the CRC16 of its hash tag, the part between its first { and the first
// } after it when that part is not empty, or of the whole key.
func keySlot(key string) int {
	for i := 0; i < len(key); i++ {
		if key[i] == '{' {
			for j := i + 1; j < len(key); j++ {
				if key[j] == '}' {
					if j > i+1 {
						key = key[i+1 : j]
					}
					return int(crc16(key)) % slots
				}
			}
			break
		}
	}
	return int(crc16(key)) % slots
}

// crc16 is the CRC16 of a Cluster's key slots: CCITT, XMODEM.
func crc16(s string) uint16 {
	var c uint16
	for i := 0; i < len(s); i++ {
		c ^= uint16(s[i]) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
	}
	return c
}

// slotTags are, for each slot, the shortest decimal number whose hash tag
// is of that slot; made on first use.
var slotTags = sync.OnceValue(func() []string {
	tags := make([]string, slots)
	left := slots
	for n := 0; left > 0; n++ {
		s := strconv.Itoa(n)
		if slot := int(crc16(s)) % slots; tags[slot] == "" {
			tags[slot] = s
			left--
		}
	}
	return tags
})

// slotTag returns a hash tag of slot s.
func slotTag(s int) string { return slotTags()[s] }
