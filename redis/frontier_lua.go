package politeredis

import (
	"strconv"
	"strings"
	"time"

	"github.com/polite-go/polite"
	"github.com/redis/go-redis/v9"
)

// The frontier's scripts. Each is the head of its Frontier (scriptHead,
// with polite's default policy and the turn lease; then the key prefixes
// and the poll interval), stateLua, frontierLua, and its own part: the
// frontier reads a host's pacing state through stateLua's load,
// nextAllowed and live, and never writes it, so that what the pacer adds
// to its state stays the pacer's business.
//
// A host k has three keys, all tagged {k} like its pacing state, so that
// they and the state share a Cluster slot: FP{k}, a hash of the host's
// frontier (o, the origin of its first URL; l, x and u, the lease of the
// URL out, when it expires, and that URL; a, d, r and e, counts of URLs
// added, done, refused by robots.txt and handed out again after a lease
// ran out; p, the host's own policy, when the transport said it has one;
// b and c, the level of its seen filter and the URLs in that level);
// FP{k}:q, a list of its queued URLs, each written after its host's
// origin when it has it; and FP{k}:s, its seen filter.
//
// A shard is a sorted set of hosts, each scored by when to look at it
// next: the instant its pace allows a start, when its URL out's lease
// ends, or +inf when it holds no URL; and a hash of counts (q queued, l
// leased, d done, r refused, e handed out again, a added, h hosts, v a
// version raised at each change of the set or the counts). On a server that is not a
// Cluster there is one shard, FPsched and FPn; on a Cluster, one per slot
// that holds hosts, tagged with a string of that slot (slotTag), so that
// a host's keys, its pacing state and its shard are one slot.
//
// Replies end with the shard's earliest score (-1 when no host of it holds
// a URL), its version, its URLs queued or leased, and the script's now.
const frontierLua = `
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
-- hostKeys returns the keys of host k: its pacing state, its hash, its
-- queue and its seen filter.
local function hostKeys(k)
  local f = FP .. '{' .. k .. '}'
  return PP .. '{' .. k .. '}', f, f .. ':q', f .. ':s'
end
-- earliest returns the first score of shard s, -1 when none is finite.
local function earliest(s)
  local e = redis.call('ZRANGE', s, 0, 0, 'WITHSCORES')
  if #e == 0 or e[2] == 'inf' then return -1 end
  return tonumber(e[2])
end
-- schedule scores host k at at in shard s, and raises its version.
local function schedule(s, n, k, at)
  redis.call('ZADD', s, at, k)
  redis.call('HINCRBY', n, 'v', 1)
end
-- tail ends a reply with what the shard holds, and the script's now.
local function tail(r, s, n)
  local c = redis.call('HMGET', n, 'v', 'q', 'l')
  r[#r + 1] = earliest(s)
  r[#r + 1] = tonumber(c[1]) or 0
  r[#r + 1] = (tonumber(c[2]) or 0) + (tonumber(c[3]) or 0)
  r[#r + 1] = now
  return r
end
-- count adds d to the shard's count f, and raises its version.
local function count(n, f, d)
  redis.call('HINCRBY', n, f, d)
  redis.call('HINCRBY', n, 'v', 1)
end
-- originOf returns the part of URL u before its path, query or fragment.
local function originOf(u)
  local i = string.find(u, '//', 1, true)
  if not i then return '' end
  local j = string.find(u, '[/?#]', i + 2)
  if j then return string.sub(u, 1, j - 1) end
  return u
end
-- encode returns u as its host's queue keeps it: what follows origin o
-- when u is of that origin, else u.
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
-- The seen filter: a scalable Bloom filter in one string, level after
-- level, each of 64-octet blocks. Level j holds SEEN0 * 2^j URLs at
-- SEENB + 1.5j bits each, SEENK + j bits a URL in one block, so that each
-- level's false positives are about half the level before's. A URL's
-- block is w1 modulo the level's blocks; its bits w2 + i*w3 modulo 512.
local SEEN0, SEENB, SEENK = 32, 20, 14
local function level(j)
  local n = SEEN0 * 2 ^ j
  return n, math.ceil(n * (SEENB + 1.5 * j) / 512), SEENK + j
end
local function inBlock(b, w2, w3, k)
  for i = 0, k - 1 do
    local p = (w2 + i * w3) % 512
    local c = string.byte(b, math.floor(p / 8) + 1) or 0
    if bit.band(c, bit.lshift(1, p % 8)) == 0 then return false end
  end
  return true
end
-- seen reports whether the filter s, of levels 0 to top, holds the URL
-- of w1, w2, w3; mark adds it to level top, which starts at octet off.
local function seen(s, top, w1, w2, w3)
  local off = 0
  for j = 0, top do
    local _, blocks, k = level(j)
    local at = off + (w1 % blocks) * 64
    if inBlock(redis.call('GETRANGE', s, at, at + 63), w2, w3, k) then return true end
    off = off + blocks * 64
  end
  return false
end
local function mark(s, top, w1, w2, w3)
  local off = 0
  for j = 0, top - 1 do
    local _, blocks = level(j)
    off = off + blocks * 64
  end
  local _, blocks, k = level(top)
  local at = off + (w1 % blocks) * 64
  local b = {string.byte(redis.call('GETRANGE', s, at, at + 63), 1, -1)}
  for i = #b + 1, 64 do b[i] = 0 end
  for i = 0, k - 1 do
    local p = (w2 + i * w3) % 512
    local x = math.floor(p / 8) + 1
    b[x] = bit.bor(b[x], bit.lshift(1, p % 8))
  end
  redis.call('SETRANGE', s, at, string.char(unpack(b)))
end
-- take hands out the next URL of host k in shard s (counts n) with lease
-- id, when its host can start now. It returns the URL and when its lease
-- ends, or false and when to look at the host again ('+inf': never, it
-- holds nothing). A lease that ran out gives its URL back first.
local function take(s, n, k, id)
  local P, M, QK = hostKeys(k)
  local f = redis.call('HMGET', M, 'l', 'x', 'u', 'o', 'p')
  if f[1] then
    local x = tonumber(f[2])
    if x > now then return false, x end
    redis.call('LPUSH', QK, f[3])
    redis.call('HDEL', M, 'l', 'x', 'u')
    redis.call('HINCRBY', M, 'e', 1)
    count(n, 'l', -1); count(n, 'q', 1); count(n, 'e', 1)
  end
  if redis.call('LLEN', QK) == 0 then return false, '+inf' end
  local at = startAt(P, f[5])
  if at > now then return false, at end
  local e = redis.call('LPOP', QK)
  local x = now + LEASE
  redis.call('HSET', M, 'l', id, 'x', x, 'u', e)
  count(n, 'q', -1); count(n, 'l', 1)
  return decode(e, f[4]), x
end
`

// frontierAddLua queues a URL of a host.
//
// KEYS: 1 the host's pacing state, 2 its hash, 3 its queue, 4 its seen
// filter, 5 its shard, 6 the shard's counts. ARGV after the first: 2 the
// host, 3 the URL, 4 "1" to queue it only if unseen, 5 the most URLs the
// host may hold, 6 the most URLs the shard may hold (0: no bound), 7 to 9
// the URL's hash words.
//
// It returns {status, ...tail}: 0 queued, 1 seen before, 2 the shard is
// full, 3 the host is full.
const frontierAddLua = `
local S, N, k, u = KEYS[5], KEYS[6], ARGV[2], ARGV[3]
local f = redis.call('HMGET', KEYS[2], 'l', 'o', 'b', 'c', 'p')
local nq = redis.call('LLEN', KEYS[3])
if arg(6) > 0 then
  local c = redis.call('HMGET', N, 'q', 'l')
  if (tonumber(c[1]) or 0) + (tonumber(c[2]) or 0) >= arg(6) then return tail({2}, S, N) end
end
if nq + (f[1] and 1 or 0) >= arg(5) then return tail({3}, S, N) end
if ARGV[4] == '1' then
  local top, c = tonumber(f[3]) or 0, tonumber(f[4]) or 0
  if seen(KEYS[4], top, arg(7), arg(8), arg(9)) then return tail({1}, S, N) end
  if c >= level(top) then top, c = top + 1, 0 end
  mark(KEYS[4], top, arg(7), arg(8), arg(9))
  redis.call('HSET', KEYS[2], 'b', top, 'c', c + 1)
end
local o = f[2]
if not o then
  o = originOf(u)
  redis.call('HSET', KEYS[2], 'o', o)
end
redis.call('RPUSH', KEYS[3], encode(u, o))
redis.call('HINCRBY', KEYS[2], 'a', 1)
count(N, 'q', 1); count(N, 'a', 1)
if nq == 0 and not f[1] then
  if not redis.call('ZSCORE', S, k) then count(N, 'h', 1) end
  schedule(S, N, k, startAt(KEYS[1], f[5]))
end
return tail({0}, S, N)
`

// frontierNextLua hands out the next URL of a shard whose host can start
// now, looking at its hosts that are due, at most MAXLOOK of them.
//
// KEYS: 1 the shard, 2 its counts. ARGV after the first: 2 the lease id.
//
// It returns {1, host, URL, lease end, ...tail} or {0, ”, ”, 0, ...tail}.
const frontierNextLua = `
local S, N = KEYS[1], KEYS[2]
for _ = 1, MAXLOOK do
  local due = redis.call('ZRANGEBYSCORE', S, '-inf', now, 'LIMIT', 0, 1)
  if #due == 0 then break end
  local k = due[1]
  local u, at = take(S, N, k, ARGV[2])
  schedule(S, N, k, at)
  if u then return tail({1, k, u, at}, S, N) end
end
return tail({0, '', '', 0}, S, N)
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
local M, QK, S, N, k = KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[2]
local f = redis.call('HMGET', M, 'l', 'u', 'p')
if f[1] ~= ARGV[3] then return tail({0}, S, N) end
redis.call('HDEL', M, 'l', 'x', 'u')
count(N, 'l', -1)
local how = ARGV[4]
if how == 'd' or how == 'r' then
  redis.call('HINCRBY', M, how, 1)
  count(N, how, 1)
else
  redis.call('LPUSH', QK, f[2])
  count(N, 'q', 1)
end
local p = f[3]
if ARGV[5] == '=' and p then
  redis.call('HDEL', M, 'p')
  p = false
elseif ARGV[5] ~= '' and ARGV[5] ~= '=' and ARGV[5] ~= p then
  redis.call('HSET', M, 'p', ARGV[5])
  p = ARGV[5]
end
local at = '+inf'
if redis.call('LLEN', QK) > 0 then at = startAt(KEYS[1], p) end
schedule(S, N, k, at)
return tail({1}, S, N)
`

// frontierRenewLua extends the lease of a turn whose worker still runs.
//
// KEYS: 1 the host's hash, 2 its shard, 3 the shard's counts. ARGV after
// the first: 2 the host, 3 the lease id. It returns {1} when it renewed
// the lease, {0} when the turn had ended or its lease had run out.
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
local r = {}
for _, v in ipairs(redis.call('HMGET', KEYS[2], 'q', 'l', 'd', 'r', 'e', 'a', 'h', 'v')) do r[#r + 1] = tonumber(v) or 0 end
local e = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local first = -1
if #e > 0 and e[2] ~= 'inf' then first = tonumber(e[2]) end
return {r[1], r[2], r[3], r[4], r[5], r[6], r[7], first, r[8], r[1] + r[2], 0}
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
// at again after poll.
func newFrontierScripts(pacerPrefix, frontierPrefix string, lease, poll time.Duration) frontierScripts {
	head := scriptHead(polite.PacingPolicy{}.Effective(), lease) +
		"local PP, FP, POLL, MAXLOOK = " + luaString(pacerPrefix) + ", " + luaString(frontierPrefix) + ", " +
		us(poll) + ", " + strconv.Itoa(maxLook) + "\n" + stateLua + frontierLua
	script := func(body string) *redis.Script { return redis.NewScript(head + body) }
	return frontierScripts{add: script(frontierAddLua), next: script(frontierNextLua), end: script(frontierEndLua),
		renew: script(frontierRenewLua), peek: redis.NewScript(frontierPeekLua)}
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
