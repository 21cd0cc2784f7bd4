package politeredis

import (
	"math"
	"strconv"
	"time"

	"github.com/polite-go/polite"
	"github.com/redis/go-redis/v9"
)

// The scripts run the delay policy of package polite (its delay.go) on a
// key's state in Redis. Each Pacer has its own pair, made by newScripts:
// a first line that sets the policy's constants as Lua locals, then
// stateLua, which reads the state into locals and defines the policy's
// functions over them, then the script's own part. Pacers with the same
// policy and lease duration have the same scripts, so the server holds
// one copy of each.
//
// The state is one string, a sequence of MessagePack values (Redis's
// cmsgpack library), read with one GET and one unpack into locals, and
// written with one pack and one SET. The values are those of the package
// documentation, in its order; the last, the leases, is an array of a
// lease's id, then the instant it expires, for each lease, and is left
// out when there are none. Measured with one client on an idle server, a
// MessagePack map of named fields held in a Lua table, with the policy
// passed as nine arguments, took 15 µs of the server's time per call
// against 11 µs; a hash of fields and a sorted set of leases took 40% more
// than the map.
//
// Times are whole microseconds: instants since the Unix epoch on the
// store's clock, durations as differences. A double holds them exactly
// (2^53 µs is 285 years); MessagePack stores them as integers, and a
// script returns them as integer replies.
//
// KEYS[1] is the state's key. ARGV[1], in both scripts, is the instant for
// tests, or "" to read the server's TIME. An argument past the last one
// sent counts as 0.
const stateLua = `
local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local MAXRA, MAXLEVEL, RECOVER = 3600000000, 8, 5

local ls, u, fl, est, lvl, stk, bu, esc, lsig, spr, spru, n, nb, nra, L = 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, nil
local v = redis.call('GET', KEYS[1])
if v then
  ls, u, fl, est, lvl, stk, bu, esc, lsig, spr, spru, n, nb, nra, L = cmsgpack.unpack(v)
end
local function arg(i)
  return tonumber(ARGV[i]) or 0
end
-- live returns the leases that have not expired at now (nil when none),
-- and the instants the first and the last of them expire (now when none).
local function live()
  local K, first, last = nil, nil, now
  if L then
    for i = 1, #L, 2 do
      local exp = L[i + 1]
      if exp > now then
        K = K or {}
        K[#K + 1], K[#K + 2] = L[i], exp
        if not first or exp < first then first = exp end
        if exp > last then last = exp end
      end
    end
  end
  return K, first or now, last
end
local function levelAt(t)
  if lvl > 0 and t - lsig >= FORGET then return 0 end
  return lvl
end
local function jittered(d, x)
  return d + math.floor(d * J * x + 0.5)
end
local function paceWithoutSpread(t, floor)
  local d = math.max(BASE, math.floor(LF * est))
  for _ = 1, levelAt(t) do
    if d >= MAXD then break end
    d = d * 2
  end
  return math.max(math.min(d, MAXD), BASE, math.min(floor, MAXCD))
end
-- nextAllowed: the jitter never carries a quota's spread past its window.
local function nextAllowed(t, floor)
  if ls == 0 then return bu end
  local n = math.max(bu, ls + jittered(paceWithoutSpread(t, math.max(floor, fl)), u))
  if t < spru then n = math.max(n, math.min(ls + jittered(spr, u), spru)) end
  return n
end
-- save writes the state, to stay until its next start is allowed and its
-- backoff level forgotten, and until its last lease expires.
local function save(lastLease)
  local ttl = math.max(math.max(nextAllowed(now, fl) - now, 0) + FORGET, lastLease - now)
  local s
  if L then
    s = cmsgpack.pack(ls, u, fl, est, lvl, stk, bu, esc, lsig, spr, spru, n, nb, nra, L)
  else
    s = cmsgpack.pack(ls, u, fl, est, lvl, stk, bu, esc, lsig, spr, spru, n, nb, nra)
  end
  redis.call('SET', KEYS[1], s, 'PX', math.ceil(ttl / 1000))
end
`

// admitLua admits a request or says how long to wait.
//
// ARGV after the first: 2 floor (Crawl-delay, µs), 3 u (the jitter draw,
// in [0, 1]), 4 lease id.
//
// It drops the leases that have expired, then returns
//
//	{1, start}           admitted: the start is recorded, the lease held until start+LEASE
//	{0, next-now, wake-now}  the pace or a backoff forbids a start before next; look again at wake
//	{0, 0, wake-now}     every slot is leased; the first lease expires at wake
const admitLua = stateLua + `
local floor = arg(2)
local nxt = nextAllowed(now, floor)
if now < nxt then
  local wake = nxt
  if levelAt(now) > 0 then wake = math.min(nxt, lsig + FORGET) end
  return {0, nxt - now, wake - now}
end
local K, first = live()
if (K and #K / 2 or 0) >= MAXIN then return {0, 0, math.max(first - now, 1)} end
K = K or {}
K[#K + 1], K[#K + 2] = ARGV[4], now + LEASE
L, ls, u, fl, n = K, now, arg(3), floor, n + 1
save(now + LEASE)
return {1, now}
`

// releaseLua frees a lease and learns from how its request ended.
//
// ARGV after the first: 2 lease id, 3 start (µs, as admitLua returned
// it), 4 class (0 success, 1 neutral, 2 signal, 3 ignore), 5 timed out (0
// or 1), 6 Retry-After (µs), 7 quota known (0 or 1), 8 remaining, 9
// limit, 10 reset (µs), 11 u (a second jitter draw, for the pause).
//
// It returns {change, level, blockedUntil-now}, where change is 0 when the
// backoff level was kept, 1 when a signal raised it, 2 when it went back
// to 0.
const releaseLua = stateLua + `
if ls == 0 then return {0, 0, 0} end -- forgotten meanwhile
local start, class = arg(3), arg(4)
if L then
  for i = 1, #L, 2 do
    if L[i] == ARGV[2] then
      table.remove(L, i + 1)
      table.remove(L, i)
      break
    end
  end
end
local K, _, lastLease = live()
L = K
if class == 3 then
  local pause = math.max(bu - now, 0)
  save(lastLease)
  return {0, lvl, pause}
end
local change = 0
if lvl > 0 and levelAt(now) == 0 then
  lvl, stk, change = 0, 0, 2
end
local lat = math.max(now - start, 0)
if arg(5) == 1 then
elseif class == 0 then
  est = math.max(lat, math.floor((est + lat) / 2))
else
  est = math.max(est, lat)
end
if arg(7) == 1 then
  local rem, lim, reset = arg(8), arg(9), math.min(arg(10), MAXRA)
  if rem == 0 then
    bu = math.max(bu, now + reset)
    spr = 0
  elseif lim > 0 and rem <= math.floor(lim / 4) then
    spr, spru = math.floor(reset / rem), now + reset
  else
    spr = 0
  end
end
local fresh = start > esc
if class == 2 then
  lsig = now
  if fresh then
    lvl = math.min(lvl + 1, MAXLEVEL)
    stk, esc, nb = 0, now, nb + 1
    local p = BOB
    local i = 1
    while i < lvl and p < MAXB do p = p * 2; i = i + 1 end
    p = jittered(math.min(p, MAXB), arg(11))
    bu = math.max(bu, now + p)
    change = 1
  end
  local ra = arg(6)
  if ra > 0 then
    nra = nra + 1
    bu = math.max(bu, now + math.min(ra, MAXRA))
  end
elseif class == 0 and fresh and lvl > 0 then
  stk = stk + 1
  if stk >= RECOVER then
    lvl, stk = lvl - 1, 0
    if lvl == 0 then change = 2 end
  end
end
local pause = math.max(bu - now, 0)
save(lastLease)
return {change, lvl, pause}
`

// newScripts returns the admission and release scripts of a policy and a
// lease duration: admitLua and releaseLua after policyHead.
func newScripts(policy polite.PacingPolicy, lease time.Duration) (admit, release *redis.Script) {
	head := policyHead(policy, lease)
	return redis.NewScript(head + admitLua), redis.NewScript(head + releaseLua)
}

// policyHead returns the line of Lua that sets the constants of an
// Effective policy and a lease duration. A field that is polite.None is 0
// there, and a MaxInFlight of None the largest int: no cap.
func policyHead(policy polite.PacingPolicy, lease time.Duration) string {
	us := func(d time.Duration) string { return strconv.FormatInt(noneAsZero(d).Microseconds(), 10) }
	f := func(x float64) string { return strconv.FormatFloat(noneAsZero(x), 'g', -1, 64) }
	maxIn := policy.MaxInFlight
	if maxIn == polite.None {
		maxIn = math.MaxInt
	}
	return "local BASE, J, LF, MAXD, MAXCD, BOB, MAXB, MAXIN, FORGET, LEASE = " +
		us(policy.BaseDelay) + ", " + f(policy.Jitter) + ", " + f(policy.LatencyFactor) + ", " +
		us(policy.MaxDelay) + ", " + us(policy.MaxCrawlDelay) + ", " + us(policy.BackoffBase) + ", " +
		us(policy.MaxBackoff) + ", " + strconv.Itoa(maxIn) + ", " + us(forgetAfter) + ", " +
		us(lease) + "\n"
}

// noneAsZero returns v, a field of a polite.PacingPolicy, or 0 for
// polite.None.
func noneAsZero[T time.Duration | float64](v T) T {
	if v == polite.None {
		return 0
	}
	return v
}

// forgetAfter is the time after which the policy forgets a backoff level.
const forgetAfter = 30 * time.Minute
