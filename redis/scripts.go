package politeredis

import "github.com/redis/go-redis/v9"

// The scripts run the delay policy of package polite (its delay.go) on a
// key's state in Redis. Both begin with policyLua, which reads the
// arguments that every call passes and defines the policy's functions over
// a Lua table holding the state's fields.
//
// The state is one string, a MessagePack map (Redis's cmsgpack library),
// so that a script reads it with one GET and writes it with one SET: a
// hash of fields and a sorted set of leases took 40% more of the server's time
// per call. Its fields are those of the package documentation; a field
// that is 0 is left out. L, the leases, is a flat array: a lease's id,
// then the instant it expires, for each lease.
//
// Times are whole microseconds: instants since the Unix epoch on the
// store's clock, durations as differences. A double holds them exactly
// (2^53 µs is 285 years); MessagePack stores them as integers.
//
// KEYS[1] is the state's key.
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
  local v = redis.call('GET', KEYS[1])
  local s = {}
  if v then s = cmsgpack.unpack(v) end
  for _, f in ipairs(F) do s[f] = s[f] or 0 end
  s.L = s.L or {}
  s.started = s.ls > 0
  return s
end
-- live returns the leases of s that have not expired at now, and the
-- instants the first and the last of them expire (now when none).
local function live(s)
  local L, first, last = {}, nil, now
  for i = 1, #s.L, 2 do
    local exp = s.L[i + 1]
    if exp > now then
      L[#L + 1], L[#L + 2] = s.L[i], exp
      if not first or exp < first then first = exp end
      if exp > last then last = exp end
    end
  end
  return L, first or now, last
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
-- save writes s, to stay until its next start is allowed and its backoff
-- level forgotten, and until its last lease expires.
local function save(s, lastLease)
  local ttl = math.max(math.max(nextAllowed(s, now, s.fl) - now, 0) + FORGET, lastLease - now)
  for _, f in ipairs(F) do
    if s[f] == 0 then s[f] = nil end
  end
  if #s.L == 0 then s.L = nil end
  s.started = nil
  redis.call('SET', KEYS[1], cmsgpack.pack(s), 'PX', math.ceil(ttl / 1000))
end
`

// admitScript admits a request or says how long to wait.
//
// ARGV after the common ten: 11 floor (Crawl-delay, µs), 12 u (the jitter
// draw, in [0, 1]), 13 lease id, 14 lease duration (µs).
//
// It drops the leases that have expired, then returns
//
//	{1, start}           admitted: the start is recorded, the lease held until start+lease duration
//	{0, next-now, wake-now}  the pace or a backoff forbids a start before next; look again at wake
//	{0, 0, wake-now}     every slot is leased; the first lease expires at wake
var admitScript = redis.NewScript(admitLua)

const admitLua = policyLua + `
local floor, lease = tonumber(ARGV[11]), tonumber(ARGV[14])
local s = load()
local nxt = nextAllowed(s, now, floor)
if now < nxt then
  local wake = nxt
  if levelAt(s, now) > 0 then wake = math.min(nxt, s.lsig + FORGET) end
  return {0, nxt - now, wake - now}
end
local L, first = live(s)
if #L / 2 >= MAXIN then return {0, 0, math.max(first - now, 1)} end
L[#L + 1], L[#L + 2] = ARGV[13], now + lease
s.L, s.ls, s.u, s.fl, s.n = L, now, tonumber(ARGV[12]), floor, s.n + 1
s.started = true
save(s, now + lease)
return {1, string.format('%.0f', now)}
`

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
var releaseScript = redis.NewScript(releaseLua)

const releaseLua = policyLua + `
local start, class = tonumber(ARGV[12]), tonumber(ARGV[13])
local s = load()
if not s.started then return {0, 0, 0} end -- forgotten meanwhile
for i = 1, #s.L, 2 do
  if s.L[i] == ARGV[11] then
    table.remove(s.L, i + 1)
    table.remove(s.L, i)
    break
  end
end
local L, _, lastLease = live(s)
s.L = L
if class == 3 then
  local lvl, pause = s.lvl, math.max(s.bu - now, 0)
  save(s, lastLease)
  return {0, lvl, string.format('%.0f', pause)}
end
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
local lvl, pause = s.lvl, math.max(s.bu - now, 0)
save(s, lastLease)
return {change, lvl, string.format('%.0f', pause)}
`
