package politeredis

import "github.com/redis/go-redis/v9"

// The scripts run the delay policy of package polite (its delay.go) on a
// key's state in Redis. Both begin with policyLua, which reads the
// arguments that every call passes and defines the policy's functions over
// a Lua table holding the state hash's fields.
//
// Times are whole microseconds: instants since the Unix epoch on the
// store's clock, durations as differences. A double holds them exactly
// (2^53 µs is 285 years), and every stored number is formatted with
// string.format('%.0f'), never with Lua's default 14 significant digits.
//
// KEYS[1] is the state hash, KEYS[2] the sorted set of leases; both carry
// the pacing key as their hash tag, so each call touches one Cluster slot.
//
// ARGV, common to both scripts:
//
//	1 now          instant for tests, "" to read the server's TIME
//	2 baseDelay    µs
//	3 jitter       factor J
//	4 latencyFactor
//	5 maxDelay     µs
//	6 maxCrawlDelay µs
//	7 backoffBase  µs
//	8 maxBackoff   µs
//	9 maxInFlight
//	10 forgetAfter µs
const policyLua = `
local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local BASE, J, LF = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local MAXD, MAXCD = tonumber(ARGV[5]), tonumber(ARGV[6])
local BOB, MAXB = tonumber(ARGV[7]), tonumber(ARGV[8])
local MAXIN, FORGET = tonumber(ARGV[9]), tonumber(ARGV[10])
local MAXRA, MAXLEVEL, RECOVER = 3600000000, 8, 5

local F = {'ls', 'u', 'fl', 'est', 'lvl', 'stk', 'bu', 'esc', 'lsig', 'spr', 'spru', 'n', 'nb', 'nra'}
local function load()
  local v = redis.call('HMGET', KEYS[1], unpack(F))
  local s, o = {}, {}
  for i, f in ipairs(F) do
    s[f] = tonumber(v[i]) or 0
    o[f] = s[f]
  end
  s.started, s.old = s.ls > 0, o
  return s
end
-- save writes the fields of s that changed since load, and sets the
-- hash's time to live to ttl µs.
local function save(s, ttl)
  local args = {}
  for _, f in ipairs(F) do
    if f ~= 'u' and s[f] ~= s.old[f] then
      args[#args + 1] = f
      args[#args + 1] = string.format('%.0f', s[f])
    end
  end
  if s.ustr then
    args[#args + 1] = 'u'
    args[#args + 1] = s.ustr
  end
  if #args > 0 then redis.call('HSET', KEYS[1], unpack(args)) end
  redis.call('PEXPIRE', KEYS[1], math.ceil(ttl / 1000))
end
local function levelAt(s, t)
  if s.lvl > 0 and t - s.lsig >= FORGET then return 0 end
  return s.lvl
end
local function jittered(d, u)
  return d + math.floor(d * J * u + 0.5)
end
local function pace(s, t, floor)
  local d = math.max(BASE, math.floor(LF * s.est))
  for _ = 1, levelAt(s, t) do
    if d >= MAXD then break end
    d = d * 2
  end
  d = math.max(math.min(d, MAXD), BASE, math.min(floor, MAXCD))
  if t < s.spru then d = math.max(d, s.spr) end
  return d
end
local function nextAllowed(s, t, floor)
  local n = s.bu
  if s.started then
    n = math.max(n, s.ls + jittered(pace(s, t, math.max(floor, s.fl)), s.u))
  end
  return n
end
-- ttl is how long s must stay: until its next start is allowed and its
-- backoff level forgotten.
local function ttl(s)
  return math.max(nextAllowed(s, now, s.fl) - now, 0) + FORGET
end
`

// admitScript admits a request or says how long to wait.
//
// ARGV after the common ten: 11 floor (Crawl-delay, µs), 12 u (the jitter
// draw, in [0, 1]), 13 lease id, 14 lease duration (µs).
//
// When the leases fill every slot, it first drops those that have
// expired. Then it returns
//
//	{1, start}           admitted: the start is recorded, the lease held until start+lease duration
//	{0, next-now, wake-now}  the pace or a backoff forbids a start before next; look again at wake
//	{0, 0, wake-now}     every slot is leased; the first lease expires at wake
var admitScript = redis.NewScript(policyLua + `
local floor, lease = tonumber(ARGV[11]), tonumber(ARGV[14])
local s = load()
local nxt = nextAllowed(s, now, floor)
if now < nxt then
  local wake = nxt
  if levelAt(s, now) > 0 then wake = math.min(nxt, s.lsig + FORGET) end
  return {0, nxt - now, wake - now}
end
if redis.call('ZCARD', KEYS[2]) >= MAXIN and
   (redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('%.0f', now)) == 0 or
    redis.call('ZCARD', KEYS[2]) >= MAXIN) then
  local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  return {0, 0, math.max(tonumber(first[2]) - now, 1)}
end
s.started, s.ls, s.u, s.ustr, s.fl, s.n = true, now, tonumber(ARGV[12]), ARGV[12], floor, s.n + 1
redis.call('ZADD', KEYS[2], string.format('%.0f', now + lease), ARGV[13])
redis.call('PEXPIRE', KEYS[2], math.ceil(lease / 1000) + 1000)
save(s, ttl(s))
return {1, string.format('%.0f', now)}
`)

// releaseScript frees a lease and learns from how its request ended.
//
// ARGV after the common ten: 11 lease id, 12 start (µs, as admitScript
// returned it), 13 class (0 success, 1 neutral, 2 signal, 3 ignore), 14
// timed out (0 or 1), 15 Retry-After (µs), 16 quota known (0 or 1), 17
// remaining, 18 limit, 19 reset (µs), 20 u (a second jitter draw, for the
// pause).
//
// It returns {change, level, blockedUntil-now}, where change is 0 when the
// backoff level was kept, 1 when a signal raised it, 2 when it went back
// to 0.
var releaseScript = redis.NewScript(policyLua + `
redis.call('ZREM', KEYS[2], ARGV[11])
local start, class = tonumber(ARGV[12]), tonumber(ARGV[13])
if class == 3 then return {0, 0, 0} end
local s = load()
if not s.started then return {0, 0, 0} end -- forgotten meanwhile
local change = 0
if s.lvl > 0 and levelAt(s, now) == 0 then
  s.lvl, s.stk, change = 0, 0, 2
end
local lat = math.max(now - start, 0)
if ARGV[14] == '1' then
elseif class == 0 then
  s.est = math.max(lat, math.floor((s.est + lat) / 2))
else
  s.est = math.max(s.est, lat)
end
if ARGV[16] == '1' then
  local rem, lim, reset = tonumber(ARGV[17]), tonumber(ARGV[18]), math.min(tonumber(ARGV[19]), MAXRA)
  if rem == 0 then
    s.bu = math.max(s.bu, now + reset)
    s.spr = 0
  elseif lim > 0 and rem <= math.floor(lim / 4) then
    s.spr, s.spru = math.floor(reset / rem), now + reset
  else
    s.spr = 0
  end
end
local fresh = start > s.esc
if class == 2 then
  s.lsig = now
  if fresh then
    s.lvl = math.min(s.lvl + 1, MAXLEVEL)
    s.stk, s.esc, s.nb = 0, now, s.nb + 1
    local p = BOB
    local i = 1
    while i < s.lvl and p < MAXB do p = p * 2; i = i + 1 end
    p = jittered(math.min(p, MAXB), tonumber(ARGV[20]))
    s.bu = math.max(s.bu, now + p)
    change = 1
  end
  local ra = tonumber(ARGV[15])
  if ra > 0 then
    s.nra = s.nra + 1
    s.bu = math.max(s.bu, now + math.min(ra, MAXRA))
  end
elseif class == 0 and fresh and s.lvl > 0 then
  s.stk = s.stk + 1
  if s.stk >= RECOVER then
    s.lvl, s.stk = s.lvl - 1, 0
    if s.lvl == 0 then change = 2 end
  end
end
save(s, ttl(s))
return {change, s.lvl, string.format('%.0f', math.max(s.bu - now, 0))}
`)
