package politeredis

import (
	"strconv"
	"strings"
	"time"

	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// The frontier's scripts. Each is the head of its Frontier (scriptHead,
// with polite's default policy and the turn lease; then the key prefixes,
// the poll interval, and whether the shards are a Cluster's), stateLua,
// frontierLua, and its own part: the frontier reads a host's pacing state
// through stateLua's load, nextAllowed and live, and never writes it, so
// that what the pacer adds to its state stays the pacer's business.
//
// A host k has three keys, all tagged {k} like its pacing state, so that
// they and the state share a Cluster slot: FP{k}, a hash of the host's
// frontier (o, the origin of its first URL; n, its URLs queued; l, x and
// u, the lease id of the URL out, when the lease ends, and that URL, l
// empty when none is out; a, d, r and e, counts of URLs added, done,
// refused by robots.txt and handed out again after a lease ran out; p,
// the host's own policy, when the transport said it has one; b and c, the
// top level of its seen filter and the URLs in that level); FP{k}:q, a
// list of its queued URLs, each written after its host's origin when it
// has it; and FP{k}:s, its seen filter.
//
// A shard is a sorted set of hosts, each scored by when to look at it
// next: the instant its pace allows a start, when its URL out's lease
// ends, or +inf when it holds no URL; and its counts, one string of
// MessagePack values: a version raised by every script that writes, then
// the URLs queued, leased, done, refused and handed out again, the URLs
// added, and the hosts. On a server that is not a Cluster there is one
// shard, FPsched and FPn; on a Cluster, one per slot that holds hosts,
// tagged with a string of that slot (slotTag), so that a host's keys, its
// pacing state and its shard are one slot.
//
// Replies end with a score, the shard's version, its URLs queued or
// leased, and the script's now. The score is the shard's first (-1 when
// no host of it holds a URL) on a Cluster, and in the reply of a Next
// that took nothing; elsewhere it is the score the script gave its host,
// which is all that can have come sooner.
const frontierLua = `
-- hostKeys returns the keys of host k: its pacing state, its hash, its
-- queue and its seen filter.
local function hostKeys(k)
  local f = FP .. '{' .. k .. '}'
  return PP .. '{' .. k .. '}', f, f .. ':q', f .. ':s'
end
-- The shard's counts.
local V, CQ, CL, CD, CR, CE, CA, CH = 0, 0, 0, 0, 0, 0, 0, 0
local function loadCounts(n)
  local s = redis.call('GET', n)
  if s then
    local ok, v, q, l, d, r, e, a, h = pcall(cmsgpack.unpack, s)
    if ok and tonumber(h) then V, CQ, CL, CD, CR, CE, CA, CH = v, q, l, d, r, e, a, h end
  end
end
local function saveCounts(n)
  V = V + 1
  redis.call('SET', n, cmsgpack.pack(V, CQ, CL, CD, CR, CE, CA, CH))
end
-- first returns the first score of shard s, -1 when none is finite.
local function first(s)
  local e = redis.call('ZRANGE', s, 0, 0, 'WITHSCORES')
  if #e == 0 or e[2] == 'inf' then return -1 end
  return tonumber(e[2])
end
-- tail ends reply r of a script on shard s: score is the score it gave
-- its host ('+inf' or a number), or nil for the shard's first.
local function tail(r, s, score)
  if score == nil or SHARDED then
    score = first(s)
  elseif score == '+inf' then
    score = -1
  end
  r[#r + 1] = score
  r[#r + 1] = V
  r[#r + 1] = CQ + CL
  r[#r + 1] = now
  return r
end
`

// readyLua finds when a host can start, by its pacing state: after
// stateLua, whose load, nextAllowed and live it uses.
const readyLua = `
local D = {BASE, J, LF, MAXD, MAXCD, BOB, MAXB, MAXIN, RECOVER}
-- usePolicy sets the policy's locals to a host's own, its nine values as
-- text, or to the head's when p is false or ''.
local function usePolicy(p)
  local v = D
  if p and p ~= '' then
    v = {}
    for x in string.gmatch(p, '%S+') do v[#v + 1] = tonumber(x) end
    if #v ~= 9 then v = D end
  end
  BASE, J, LF, MAXD, MAXCD, BOB, MAXB, MAXIN, RECOVER = v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]
end
-- startAt returns when a request to the host whose pacing state is at
-- pkey, of policy p, may start: now when it may start now, or has no
-- state, or a state the pacer will repair; when its pace or a pause
-- allows; or after a poll when its slots are all taken by requests that
-- are not the frontier's.
local function startAt(pkey, p)
  usePolicy(p)
  KEYS[1] = pkey
  if not pcall(load) then return now end
  if ls == 0 and bu == 0 and not Q then return now end
  local at = nextAllowed(now, 0, '')
  if at > now then return at end
  local K = live()
  if K and #K / 2 >= MAXIN then return now + POLL end
  return now
end
`

// urlLua writes and reads the URLs of a host's queue.
const urlLua = `
-- originOf returns the part of URL u before its path, query or fragment.
local function originOf(u)
  local i = string.find(u, '//', 1, true)
  if not i then return '' end
  local j = string.find(u, '[/?#]', i + 2)
  if j then return string.sub(u, 1, j - 1) end
  return u
end
-- encode returns u as its host's queue keeps it: what follows origin o
-- when u is of that origin, else u; decode undoes it.
local function encode(u, o)
  if o ~= '' and string.sub(u, 1, #o) == o then
    local c = string.sub(u, #o + 1, #o + 1)
    if c == '' or c == '/' or c == '?' or c == '#' then return string.sub(u, #o + 1) end
  end
  return u
end
local function decode(e, o)
  local c = string.sub(e, 1, 1)
  if c == '' or c == '/' or c == '?' or c == '#' then return (o or '') .. e end
  return e
end
`

// seenLua is the seen filter.
const seenLua = `
-- The seen filter: a scalable Bloom filter in one string, level after
-- level, each of 64-octet blocks. Level j holds SEEN0 * 2^j URLs at
-- SEENB + j/2 bits each (the bits of a level grow by half a bit a URL,
-- so that the levels' false positives, which add up, grow slowly), and a
-- URL sets k of them in one block, k the bits a URL times ln 2. A URL's
-- digest d, 64 octets, names its block, its first four octets modulo the
-- level's blocks, and its bits, each two octets after them modulo 512.
local SEEN0, SEENB = 16, 20
local function level(j)
  local n, b = SEEN0 * 2 ^ j, SEENB + j / 2
  return n, math.ceil(n * b / 512), math.floor(0.693 * b + 0.5)
end
local function blockOf(d)
  local a, b, c, e = string.byte(d, 1, 4)
  return ((a * 256 + b) * 256 + c) * 256 + e
end
local function inBlock(b, d, k)
  for i = 0, k - 1 do
    local h, l = string.byte(d, 5 + 2 * i, 6 + 2 * i)
    local p = (h * 256 + l) % 512
    local c = string.byte(b, math.floor(p / 8) + 1) or 0
    if bit.band(c, bit.lshift(1, p % 8)) == 0 then return false end
  end
  return true
end
-- seen reports whether the filter s, of levels 0 to top, holds the URL
-- of digest d; mark adds it to level top.
local function seen(s, top, d)
  local off, w = 0, blockOf(d)
  for j = 0, top do
    local _, blocks, k = level(j)
    local at = off + (w % blocks) * 64
    if inBlock(redis.call('GETRANGE', s, at, at + 63), d, k) then return true end
    off = off + blocks * 64
  end
  return false
end
local function mark(s, top, d)
  local off = 0
  for j = 0, top - 1 do
    local _, blocks = level(j)
    off = off + blocks * 64
  end
  local _, blocks, k = level(top)
  local at = off + (blockOf(d) % blocks) * 64
  local b = {string.byte(redis.call('GETRANGE', s, at, at + 63), 1, -1)}
  for i = #b + 1, 64 do b[i] = 0 end
  for i = 0, k - 1 do
    local h, l = string.byte(d, 5 + 2 * i, 6 + 2 * i)
    local p = (h * 256 + l) % 512
    local x = math.floor(p / 8) + 1
    b[x] = bit.bor(b[x], bit.lshift(1, p % 8))
  end
  redis.call('SETRANGE', s, at, string.char(unpack(b)))
end
`

// takeLua hands out a URL of a host.
const takeLua = `
-- take hands out the next URL of host k with lease id. It returns the
-- URL and when its lease ends, or false and when to look at the host
-- again ('+inf': never, it holds nothing). A lease that ran out gives its
-- URL back first, to be handed out at once. It trusts the host's score:
-- the scripts that set it from the host's pacing state (an Add that
-- starts the host, the end of a turn) follow every request the frontier
-- makes, so that take needs no stateLua.
local function take(k, id)
  local P, M, QK = hostKeys(k)
  local f = redis.call('HMGET', M, 'l', 'x', 'u', 'o', 'n', 'e')
  local n, e = tonumber(f[5]) or 0, tonumber(f[6]) or 0
  local u = false
  if f[1] and f[1] ~= '' then
    local x = tonumber(f[2])
    if x > now then return false, x end
    u, e, CL, CE = f[3], e + 1, CL - 1, CE + 1
  end
  if not u then
    if n == 0 then return false, '+inf' end
    u = redis.call('LPOP', QK)
    if not u then
      redis.call('HSET', M, 'n', 0)
      return false, '+inf'
    end
    n, CQ = n - 1, CQ - 1
  end
  local x = now + LEASE
  redis.call('HSET', M, 'l', id, 'x', x, 'u', u, 'n', n, 'e', e)
  CL = CL + 1
  return decode(u, f[4]), x
end
`

// frontierAddLua queues a URL of a host.
//
// KEYS: 1 the host's pacing state, 2 its hash, 3 its queue, 4 its seen
// filter, 5 its shard, 6 the shard's counts. ARGV after the first: 2 the
// host, 3 the URL, 4 "1" to queue it only if unseen, 5 the most URLs the
// host may hold, 6 the most URLs the shard may hold (0: no bound), 7 the
// URL's digest (SHA-512).
//
// It returns {status, ...tail}: 0 queued, 1 seen before, 2 the shard is
// full, 3 the host is full.
const frontierAddLua = `
local S, N, k, u = KEYS[5], KEYS[6], ARGV[2], ARGV[3]
local f = redis.call('HMGET', KEYS[2], 'l', 'o', 'b', 'c', 'p', 'n', 'a')
local n, out = tonumber(f[6]) or 0, f[1] and f[1] ~= ''
loadCounts(N)
if arg(6) > 0 and CQ + CL >= arg(6) then return tail({2}, S, '+inf') end
if n + (out and 1 or 0) >= arg(5) then return tail({3}, S, '+inf') end
local h = {'n', n + 1, 'a', (tonumber(f[7]) or 0) + 1}
if ARGV[4] == '1' then
  local top, c = tonumber(f[3]) or 0, tonumber(f[4]) or 0
  if seen(KEYS[4], top, ARGV[7]) then return tail({1}, S, '+inf') end
  if c >= level(top) then top, c = top + 1, 0 end
  mark(KEYS[4], top, ARGV[7])
  h[#h + 1], h[#h + 2], h[#h + 3], h[#h + 4] = 'b', top, 'c', c + 1
end
local o = f[2]
if not o then
  o = originOf(u)
  h[#h + 1], h[#h + 2] = 'o', o
  CH = CH + 1
end
redis.call('RPUSH', KEYS[3], encode(u, o))
redis.call('HSET', KEYS[2], unpack(h))
CQ, CA = CQ + 1, CA + 1
local at = '+inf'
if n == 0 and not out then
  at = startAt(KEYS[1], f[5])
  redis.call('ZADD', S, at, k)
end
saveCounts(N)
return tail({0}, S, at)
`

// frontierNextLua hands out the next URL of a shard whose host can start
// now, looking at its hosts that are due, at most MAXLOOK of them.
//
// KEYS: 1 the shard, 2 its counts. ARGV after the first: 2 the lease id.
//
// It returns {1, host, URL, lease end, ...tail} or {0, ”, ”, 0, ...tail}.
const frontierNextLua = `
local S, N = KEYS[1], KEYS[2]
loadCounts(N)
local wrote = false
for _ = 1, MAXLOOK do
  local due = redis.call('ZRANGEBYSCORE', S, '-inf', now, 'LIMIT', 0, 1)
  if #due == 0 then break end
  local k = due[1]
  local u, at = take(k, ARGV[2])
  redis.call('ZADD', S, at, k)
  wrote = true
  if u then
    saveCounts(N)
    return tail({1, k, u, at}, S, at)
  end
end
if wrote then saveCounts(N) end
return tail({0, '', '', 0}, S)
`

// frontierEndLua ends a turn.
//
// KEYS: 1 the host's pacing state, 2 its hash, 3 its queue, 4 its shard,
// 5 the shard's counts. ARGV after the first: 2 the host, 3 the lease id,
// 4 how: d done, r refused by robots.txt, q requeued, g given back
// uncounted; 5 the host's policy as the transport gave it, '=' when it
// is the head's, ” when not known.
//
// It returns {1, ...tail}, or {0, ...tail} when the turn had ended, or its
// lease had run out.
const frontierEndLua = `
local M, QK, S, N, k, how = KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[2], ARGV[4]
local f = redis.call('HMGET', M, 'l', 'u', 'p', 'n', 'd', 'r')
loadCounts(N)
if f[1] ~= ARGV[3] then return tail({0}, S, '+inf') end
local n, p = tonumber(f[4]) or 0, f[3]
local h = {'l', '', 'x', 0, 'u', ''}
CL = CL - 1
if how == 'd' then
  h[#h + 1], h[#h + 2], CD = 'd', (tonumber(f[5]) or 0) + 1, CD + 1
elseif how == 'r' then
  h[#h + 1], h[#h + 2], CR = 'r', (tonumber(f[6]) or 0) + 1, CR + 1
else
  redis.call('LPUSH', QK, f[2])
  n, CQ = n + 1, CQ + 1
  h[#h + 1], h[#h + 2] = 'n', n
end
if ARGV[5] == '=' and p and p ~= '' then
  h[#h + 1], h[#h + 2], p = 'p', '', false
elseif ARGV[5] ~= '' and ARGV[5] ~= '=' and ARGV[5] ~= p then
  h[#h + 1], h[#h + 2], p = 'p', ARGV[5], ARGV[5]
end
redis.call('HSET', M, unpack(h))
local at = '+inf'
if n > 0 then at = startAt(KEYS[1], p) end
redis.call('ZADD', S, at, k)
saveCounts(N)
return tail({1}, S, at)
`

// frontierRenewLua extends the lease of a turn whose worker still runs.
//
// KEYS: 1 the host's hash, 2 its shard. ARGV after the first: 2 the
// host, 3 the lease id. It returns {1} when it renewed the lease, {0}
// when the turn had ended or its lease had run out.
const frontierRenewLua = `
local f = redis.call('HMGET', KEYS[1], 'l', 'x')
if f[1] ~= ARGV[3] or tonumber(f[2]) <= now then return {0} end
redis.call('HSET', KEYS[1], 'x', now + LEASE)
redis.call('ZADD', KEYS[2], 'XX', now + LEASE, ARGV[2])
return {1}
`

// frontierPeekLua reads a shard, alone: it runs without the head and
// stateLua, as a repair runs it on every slot. KEYS: 1 the shard, 2 its
// counts. It returns {q, l, d, r, e, a, h, first score or -1, version,
// q + l, 0}.
const frontierPeekLua = `
local v, q, l, d, r, e, a, h = 0, 0, 0, 0, 0, 0, 0, 0
local s = redis.call('GET', KEYS[2])
if s then
  local ok, v1, q1, l1, d1, r1, e1, a1, h1 = pcall(cmsgpack.unpack, s)
  if ok and tonumber(h1) then v, q, l, d, r, e, a, h = v1, q1, l1, d1, r1, e1, a1, h1 end
end
local x = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local first = -1
if #x > 0 and x[2] ~= 'inf' then first = tonumber(x[2]) end
return {q, l, d, r, e, a, h, first, v, q + l, 0}
`

// frontierScripts are the scripts of a Frontier.
type frontierScripts struct {
	add, next, end, renew, peek *redis.Script
}

// maxLook bounds the due hosts that one call of frontierNextLua looks at,
// so that a call takes a bounded time however many hosts are due and
// cannot start.
const maxLook = 16

// newFrontierScripts returns the scripts of a Frontier whose pacing
// states are at pacerPrefix{k} and whose own keys at frontierPrefix{k},
// with turns leased for lease and hosts whose slots are all taken looked
// at again after poll; sharded for a Cluster's.
func newFrontierScripts(pacerPrefix, frontierPrefix string, lease, poll time.Duration, sharded bool) frontierScripts {
	head := scriptHead(pace.Policy{}.Effective(), lease) +
		"local PP, FP, POLL, MAXLOOK, SHARDED = " + luaString(pacerPrefix) + ", " + luaString(frontierPrefix) + ", " +
		us(poll) + ", " + strconv.Itoa(maxLook) + ", " + strconv.FormatBool(sharded) + "\n"
	script := func(parts ...string) *redis.Script { return redis.NewScript(head + strings.Join(parts, "")) }
	return frontierScripts{
		add:   script(stateLua, readyLua, frontierLua, urlLua, seenLua, frontierAddLua),
		next:  script(nowLua, frontierLua, urlLua, takeLua, frontierNextLua),
		end:   script(stateLua, readyLua, frontierLua, frontierEndLua),
		renew: script(nowLua, frontierRenewLua),
		peek:  redis.NewScript(frontierPeekLua)}
}

// luaString returns s as a Lua string literal: each octet a decimal
// escape, so that no prefix can end the literal.
func luaString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := range len(s) {
		b.WriteByte('\\')
		b.WriteString(strconv.Itoa(int(s[i])))
	}
	b.WriteByte('\'')
	return b.String()
}
