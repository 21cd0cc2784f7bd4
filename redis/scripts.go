package politeredis

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// The scripts run the delay policy of package polite (its delay.go) on a
// key's state in Redis. Each Pacer has its own set, made by newScripts:
// a first line that sets the constants of its default policy and lease
// duration as Lua locals, then stateLua, which reads the state into
// locals and defines the policy's functions over them, then the script's
// own part. Pacers with the same default policy and lease duration have
// the same scripts, so the server holds one copy of each. A key with a
// policy of its own (pace.Config.Override) passes it as arguments of each call
// instead (see ownPolicyArgs): it costs no script of its own.
//
// The state is one string, a sequence of MessagePack values (Redis's
// cmsgpack library), read with one GET and one unpack into locals, and
// written with one pack and one SET. The values are those of the package
// documentation, in its order; then three arrays, each left out when it
// and those after it are empty: the leases, a lease's id then the instant
// it expires, for each lease; the tombstones, likewise; and the quota
// holds, six values for each partition whose rate-limit quota holds its
// requests (its name, the resource the server named, the instant its
// exhausted quota resets, the spread of a low one, the instant that
// spread ends, the partition's last start and its jitter draw), at most
// MAXPART of them.
// Measured with one client on an idle server, a
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
// KEYS[1] is the state's key. ARGV[1], in every script, is the instant for
// tests, or "" to read the server's TIME. When the last argument is
// ownPolicyMark, the nine before it are the key's own policy, RecoverAfter
// among them; a script's own argument that was not sent before them counts
// as 0, or as the empty string for a string (sarg).
const stateLua = nowLua + `
local MAXRA, MAXLEVEL, MAXPART, QN, CONFIRM, CONFIRMPROBE, PROBE, MAXMISSED = 3600000000, 8, 32, 12, 10, 20, 100, 3
local NARG = #ARGV
if ARGV[NARG] == '=policy' then
  NARG = NARG - 10
  BASE, J, LF, MAXD, MAXCD, BOB, MAXB, MAXIN, RECOVER = tonumber(ARGV[NARG + 1]), tonumber(ARGV[NARG + 2]),
    tonumber(ARGV[NARG + 3]), tonumber(ARGV[NARG + 4]), tonumber(ARGV[NARG + 5]), tonumber(ARGV[NARG + 6]),
    tonumber(ARGV[NARG + 7]), tonumber(ARGV[NARG + 8]), tonumber(ARGV[NARG + 9])
end

local ls, u, fl, est, lvl, stk, bu, esc, lsig, n, nb, nra, L, T, Q, ps, lb, lg, lp, lk, lh
-- load reads the state, and fails when the stored value is not one: not
-- a string (WRONGTYPE), not MessagePack, or not numbers where they go.
local function load()
  ls, u, fl, est, lvl, stk, bu, esc, lsig, n, nb, nra, L, T, Q = 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, nil, nil, nil
  ps, lb, lg, lp, lk, lh = 0, 0, 0, 0, 0, 0
  local v = redis.call('GET', KEYS[1])
  if v then
    ls, u, fl, est, lvl, stk, bu, esc, lsig, n, nb, nra, L, T, Q, ps, lb, lg, lp, lk, lh = cmsgpack.unpack(v)
    ps, lb, lg, lp, lk, lh = ps or 0, lb or 0, lg or 0, lp or 0, lk or 0, lh or 0
    local _ = ls + u + fl + est + lvl + stk + bu + esc + lsig + n + nb + nra + ps + lb + lg + lp + lk + lh
    if L ~= nil and type(L) ~= 'table' or T ~= nil and type(T) ~= 'table' or Q ~= nil and type(Q) ~= 'table' then error('not a state') end
    if Q then
      if #Q % QN ~= 0 then error('not a state') end
      for i = 1, #Q, QN do local _ = Q[i + 2] + Q[i + 3] + Q[i + 4] + Q[i + 5] + Q[i + 6] + Q[i + 7] + Q[i + 8] + Q[i + 9] + Q[i + 10] + Q[i + 11] end
      if #Q == 0 then Q = nil end
    end
    if L and #L == 0 then L = nil end
    if T and #T == 0 then T = nil end
  end
end
local function arg(i)
  if i > NARG then return 0 end
  return tonumber(ARGV[i]) or 0
end
-- sarg is arg for a string argument: '' when it was not sent.
local function sarg(i)
  if i > NARG then return '' end
  return ARGV[i]
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
local function pace(t, floor)
  local d = math.max(BASE, math.floor(LF * est))
  for _ = 1, levelAt(t) do
    if d >= MAXD then break end
    d = d * 2
  end
  return math.max(math.min(d, MAXD), BASE, math.min(floor, MAXCD))
end
-- limitGap is the least gap between starts that the rate limit learned
-- from 429s allows at t: lb the longest gap known to draw a 429, lg one
-- known to be taken, lp odd while a faster gap is probed and twice the
-- probes missed beside, lh the last 429 (package pace's limit.go says how
-- the search goes).
local function limitFound() return lg > 0 and lg - lb <= math.floor(lg / 8) end
local function limitGap(t)
  if lb == 0 or t - lh >= FORGET then return 0 end
  if lg == 0 then return lb + math.floor(lb / 2) end
  if lp % 2 == 1 then return lg - math.floor(lg / 8) end
  if limitFound() then return lg end
  return math.floor((lb + lg) / 2)
end
-- keyNext is the earliest start the key's pace and pause allow.
local function keyNext(t, floor)
  if ls == 0 then return bu end
  return math.max(bu, ls + math.max(jittered(pace(t, math.max(floor, fl)), u), limitGap(t)))
end
-- The quota holds: Q[i] the partition, Q[i+1] the resource, Q[i+2] the
-- reset of an exhausted quota, Q[i+3] the spread of a low one, Q[i+4]
-- when it ends, Q[i+5] the partition's last start, Q[i+6] its jitter
-- draw; the count (package pace's quotaHold): Q[i+7] the starts left,
-- Q[i+8] the partition's requests in flight, Q[i+9] the limit, Q[i+10]
-- the window's end, Q[i+11] its length. The jitter never carries the
-- spread past the window's end.
local function holdNext(i, t)
  local r = Q[i + 2]
  if t < Q[i + 4] then r = math.max(r, math.min(Q[i + 5] + jittered(Q[i + 3], Q[i + 6]), Q[i + 4])) end
  return r
end
-- quotaNext is the earliest start the holds of partition part allow, or
-- of every partition when part is nil.
local function quotaNext(t, part)
  local r = 0
  if Q then
    for i = 1, #Q, QN do
      if part == nil or Q[i] == part then r = math.max(r, holdNext(i, t)) end
    end
  end
  return r
end
local function quotaField(part, j, t)
  local r = 0
  if Q then
    for i = 1, #Q, QN do
      if Q[i] == part and (j ~= 3 or t < Q[i + 4]) then r = math.max(r, Q[i + j]) end
    end
  end
  return r
end
local function nextAllowed(t, floor, part)
  return math.max(keyNext(t, floor), quotaNext(t, part))
end
-- hold returns the index in Q of the hold of partition part and resource
-- res, adding one when add is true (nil when there is none and add is
-- false). It first drops the holds that are over; a full Q drops the one
-- that ends first.
local function hold(t, part, res, add)
  if Q then
    local K = nil
    for i = 1, #Q, QN do
      if t < Q[i + 2] or t < Q[i + 4] or t < Q[i + 10] + Q[i + 11] then
        K = K or {}
        for j = 0, QN - 1 do K[#K + 1] = Q[i + j] end
      end
    end
    Q = K
  end
  if Q then
    for i = 1, #Q, QN do
      if Q[i] == part and Q[i + 1] == res then return i end
    end
  end
  if not add then return nil end
  Q = Q or {}
  if #Q >= MAXPART * QN then
    local first, fe = nil, nil
    for i = 1, #Q, QN do
      local e = math.max(Q[i + 2], Q[i + 4])
      if not fe or e < fe then first, fe = i, e end
    end
    for _ = 1, QN do table.remove(Q, first) end
  end
  local i = #Q + 1
  Q[i], Q[i + 1], Q[i + 2], Q[i + 3], Q[i + 4], Q[i + 5], Q[i + 6] = part, res, 0, 0, 0, 0, 0
  Q[i + 7], Q[i + 8], Q[i + 9], Q[i + 10], Q[i + 11] = 0, 0, 0, 0, 0
  return i
end
-- spend records a start of hold i's partition at now: one of what is left
-- spent, after the limit refilled it when the window has ended; none left
-- holds the partition until the window's end.
local function spend(i)
  Q[i + 5], Q[i + 6], Q[i + 8] = now, u, Q[i + 8] + 1
  if now >= Q[i + 10] then
    if Q[i + 9] == 0 or Q[i + 11] <= 0 then
      Q[i + 7] = 2 ^ 52 -- a new window of an untold size: the next answer says
      return
    end
    Q[i + 7] = Q[i + 9]
    Q[i + 10] = Q[i + 10] + (math.floor((now - Q[i + 10]) / Q[i + 11]) + 1) * Q[i + 11]
  end
  Q[i + 7] = Q[i + 7] - 1
  if Q[i + 7] <= 0 then Q[i + 2] = math.max(Q[i + 2], Q[i + 10]) end
end
-- carry brings in a start and a pause that a process made in its memory
-- while this key's server did not answer: a start ago µs ago, and no
-- start for pause µs from now. 0 carries nothing.
local function carry(ago, pause)
  if ago > 0 and now - ago > ls then ls, u = now - ago, 0 end
  if pause > 0 then bu = math.max(bu, now + pause) end
end
-- save writes the state, to stay until its next start is allowed and its
-- backoff level forgotten, MAXCD past its last start at least (the longest
-- Crawl-delay it may ask, that a robots.txt fetch may find), and until its
-- last lease or tombstone expires.
-- A tombstone is the id of a lease given back before its admission ran,
-- and the instant it expires: that admission admits nothing.
local function save(lastLease)
  if T then
    local K = nil
    for i = 1, #T, 2 do
      if T[i + 1] > now then
        K = K or {}
        K[#K + 1], K[#K + 2] = T[i], T[i + 1]
        lastLease = math.max(lastLease, T[i + 1])
      end
    end
    T = K
  end
  local ttl = math.max(math.max(keyNext(now, fl) - now, 0) + FORGET, ls + MAXCD - now, lastLease - now, quotaNext(now, nil) - now)
  if Q then
    for i = 1, #Q, QN do ttl = math.max(ttl, Q[i + 10] + Q[i + 11] - now) end
  end
  local s
  if lb ~= 0 or ps ~= 0 then
    s = cmsgpack.pack(ls, u, fl, est, lvl, stk, bu, esc, lsig, n, nb, nra, L or {}, T or {}, Q or {}, ps, lb, lg, lp, lk, lh)
  elseif Q then
    s = cmsgpack.pack(ls, u, fl, est, lvl, stk, bu, esc, lsig, n, nb, nra, L or {}, T or {}, Q)
  elseif T then
    s = cmsgpack.pack(ls, u, fl, est, lvl, stk, bu, esc, lsig, n, nb, nra, L or {}, T)
  elseif L then
    s = cmsgpack.pack(ls, u, fl, est, lvl, stk, bu, esc, lsig, n, nb, nra, L)
  else
    s = cmsgpack.pack(ls, u, fl, est, lvl, stk, bu, esc, lsig, n, nb, nra)
  end
  redis.call('SET', KEYS[1], s, 'PX', math.ceil(ttl / 1000))
end
-- run returns the reply of body, run on the key's state, followed by 1
-- when the stored value was not a state and was replaced, else 0. The
-- new state has its last start now, so that no start comes sooner than
-- the pace from now; the leases it had are lost. A script that writes
-- saves it at once; one that only reads does not.
local function run(body, writes)
  local ok, r = pcall(function() load(); return body() end)
  if ok then
    r[#r + 1] = 0
    return r
  end
  ls, u, fl, est, lvl, stk, bu, esc, lsig, n, nb, nra, L, T, Q = now, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, nil, nil, nil
  ps, lb, lg, lp, lk, lh = 0, 0, 0, 0, 0, 0
  if writes then save(now) end
  r = body()
  r[#r + 1] = 1
  return r
end
`

// admitLua admits a request or says how long to wait.
//
// ARGV after the first: 2 floor (Crawl-delay, µs), 3 u (the jitter draw,
// in [0, 1]), 4 lease id, 5 the request's quota partition; 6 and 7, what
// the caller carries from its memory (see carry), or nothing.
//
// It drops the leases that have expired, then returns
//
//	{1, start, 0}           admitted: the start is recorded, the lease held until start+LEASE
//	{0, next-now, wake-now}  the pace or a backoff forbids a start before next; look again at wake
//	{0, 0, wake-now}     every slot is leased; the first lease expires at wake
//
// An id with a tombstone is not admitted: its caller gave up.
const admitLua = stateLua + `
return run(function()
  local floor, part = arg(2), sarg(5)
  local carried = arg(6) > 0 or arg(7) > 0
  carry(arg(6), arg(7))
  if T then
    for i = 1, #T, 2 do
      if T[i] == ARGV[4] then
        table.remove(T, i + 1)
        table.remove(T, i)
        local _, _, last = live()
        save(last)
        return {0, 0, 1}
      end
    end
  end
  local nxt = nextAllowed(now, floor, part)
  if now < nxt then
    if carried then
      local _, _, last = live()
      save(last)
    end
    local wake = nxt
    if levelAt(now) > 0 then wake = math.min(nxt, lsig + FORGET) end
    return {0, nxt - now, wake - now}
  end
  local K, first = live()
  if (K and #K / 2 or 0) >= MAXIN then return {0, 0, math.max(first - now, 1)} end
  K = K or {}
  K[#K + 1], K[#K + 2] = ARGV[4], now + LEASE
  if ls ~= 0 then ps = ls end
  L, ls, u, fl, n = K, now, arg(3), floor, n + 1
  if Q then
    for i = 1, #Q, QN do
      if Q[i] == part then spend(i) end
    end
  end
  save(now + LEASE)
  return {1, now, 0}
end, true)
`

// releaseLua frees a lease and learns from how its request ended.
//
// ARGV after the first: 2 lease id, 3 start (µs, as admitLua returned
// it), 4 class (0 success, 1 neutral, 2 signal, 3 ignore), 5 flags (1:
// timed out, 2: rate limited, a 429), 6 Retry-After (µs), 7 quota known
// (0 or 1), 8 remaining, 9
// limit, 10 reset (µs), 11 u (a second jitter draw, for the pause), 12
// the request's quota partition, 13 the partition the server named.
//
// It returns {change, level, pause}, where change is 0 when the backoff
// level was kept, 1 when a signal raised it, 2 when it went back to 0, and
// pause is how long no request of the partition may start.
const releaseLua = stateLua + `
return run(function()
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
  local part, res = sarg(12), sarg(13)
  if Q then
    for i = 1, #Q, QN do
      if Q[i] == part then Q[i + 8] = math.max(Q[i + 8] - 1, 0) end
    end
  end
  if class == 3 then
    local pause = math.max(bu, quotaField(part, 2, now)) - now
    save(lastLease)
    return {0, lvl, math.max(pause, 0)}
  end
  local change = 0
  if lvl > 0 and levelAt(now) == 0 then
    lvl, stk, change = 0, 0, 2
  end
  local lat = math.max(now - start, 0)
  local flags = arg(5)
  if flags % 2 == 1 then -- timed out: no sample of the latency
  elseif class == 0 then
    est = math.max(lat, math.floor((est + lat) / 2))
  else
    est = math.max(est, lat)
  end
  if arg(7) == 1 then -- package pace's learnQuota
    local lim, reset = arg(9), math.min(arg(10), MAXRA)
    local i = hold(now, part, res, true)
    local left = arg(8) - Q[i + 8]
    if now >= Q[i + 10] then
      Q[i + 7], Q[i + 2] = left, 0
    else
      Q[i + 7] = math.min(Q[i + 7], left)
    end
    Q[i + 10], Q[i + 11] = now + reset, math.max(Q[i + 11], reset)
    if lim > 0 then Q[i + 9] = lim end
    if Q[i + 7] <= 0 then
      Q[i + 2], Q[i + 4] = math.max(Q[i + 2], Q[i + 10]), 0
    elseif Q[i + 9] > 0 and Q[i + 7] <= math.floor(Q[i + 9] / 4) then
      Q[i + 3], Q[i + 4] = math.floor(reset / (Q[i + 7] + 1)), now + reset
      if start > Q[i + 5] then
        Q[i + 5], Q[i + 6] = start, 0 -- that start's draw, when the key still knows it
        if start == ls then Q[i + 6] = u end
      end
    else
      Q[i + 4] = 0
    end
  end
  local fresh = start > esc
  local gap = 0 -- the gap between this request's start and the one before
  if start == ls and ps ~= 0 then
    gap = start - ps
  else
    gap = math.max(pace(now, fl), limitGap(now))
  end
  if class == 2 then
    lsig = now
    if fresh and math.floor(flags / 2) % 2 == 1 then -- package pace's rateLimit.refused
      if lb > 0 and now - lh >= FORGET then lb, lg, lp, lk = 0, 0, 0, 0 end
      if lp % 2 == 1 and gap < lg then
        lb = math.max(lb, lg - math.floor(lg / 8))
        lp = 2 * math.min(math.floor(lp / 2) + 1, MAXMISSED)
      else
        lb = math.min(math.max(lb, gap), MAXRA)
        if lg <= lb then lg = 0 end
        lp = lp - lp % 2
      end
      lk, lh = 0, now
    end
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
  elseif class == 0 and fresh and lb > 0 then -- package pace's rateLimit.took
    local trial = limitGap(now)
    if trial > 0 and gap <= trial + math.floor(trial / 8) then
      lk = lk + 1
      if lp % 2 == 1 and lk >= CONFIRMPROBE then
        lg, lb, lp, lk = trial, math.floor(lb / 2), 0, 0
      elseif lp % 2 == 0 and not limitFound() and lk >= CONFIRM then
        lg, lk = trial, 0
      elseif lp % 2 == 0 and limitFound() and lk >= PROBE * 2 ^ math.floor(lp / 2) then
        lp, lk = lp + 1, 0
      end
    end
  end
  if class == 0 and fresh and lvl > 0 then
    stk = stk + 1
    if RECOVER > 0 and stk >= RECOVER then
      lvl, stk = lvl - 1, 0
      if lvl == 0 then change = 2 end
    end
  end
  local pause = math.max(math.max(bu, quotaField(part, 2, now)) - now, 0)
  save(lastLease)
  return {change, lvl, pause}
end, true)
`

// cancelLua gives back a lease whose request is gone, learning nothing:
// the lease of an admission whose caller stopped waiting for its reply,
// or of a release that could not be sent. When the lease is not there,
// its admission may still be on its way (a server that was stopped runs
// it when it resumes), so the id gets a tombstone for the lease duration,
// which that admission finds.
//
// ARGV after the first: 2 lease id. It returns {0, 0, 0}.
const cancelLua = stateLua + `
return run(function()
  local found = false
  if L then
    for i = 1, #L, 2 do
      if L[i] == ARGV[2] then
        table.remove(L, i + 1)
        table.remove(L, i)
        found = true
        break
      end
    end
  end
  if not found then
    T = T or {}
    T[#T + 1], T[#T + 2] = ARGV[2], now + LEASE
  end
  local K, _, last = live()
  L = K
  save(last)
  return {0, 0, 0}
end, true)
`

// carryLua brings into the state what a process did in its memory while
// the key's server did not answer (see carry).
//
// ARGV after the first: 2 how long ago its last start was (µs), 3 how
// long its pause has left (µs). It returns {0, 0, 0}.
const carryLua = stateLua + `
return run(function()
  carry(arg(2), arg(3))
  local _, _, last = live()
  save(last)
  return {0, 0, 0}
end, true)
`

// peekLua reads a key's state for a request with a Crawl-delay, and
// writes nothing.
//
// ARGV after the first: 2 floor (Crawl-delay, µs), 3 the quota partition.
//
// It returns {known, next-now, leases, pace, level, pause, est, now-ls,
// n, nb, nra}, where known is 0 when the key has no state, leases counts
// the live ones, and pace and pause are a request's of the partition.
const peekLua = stateLua + `
return run(function()
  local part = sarg(3)
  if ls == 0 and bu == 0 and not Q then return {0, 0, 0, pace(now, arg(2)), 0, 0, 0, 0, 0, 0, 0} end
  local K = live()
  return {1, math.max(nextAllowed(now, arg(2), part), now) - now, K and #K / 2 or 0,
    math.max(pace(now, math.max(arg(2), fl)), limitGap(now), quotaField(part, 3, now)),
    levelAt(now), math.max(math.max(bu, quotaField(part, 2, now)) - now, 0), est, now - ls, n, nb, nra}
end, false)
`

// nowLua sets now: ARGV[1], the instant for tests, or the server's TIME.
const nowLua = `
local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
`

// scripts are the Lua scripts of a default policy and a lease duration.
type scripts struct {
	admit, release, cancel, carry, peek *redis.Script
}

// newScripts returns the scripts of a default policy and a lease
// duration: each after the line that sets their constants.
func newScripts(policy pace.Policy, lease time.Duration) scripts {
	head := scriptHead(policy, lease)
	return scripts{admit: redis.NewScript(head + admitLua), release: redis.NewScript(head + releaseLua),
		cancel: redis.NewScript(head + cancelLua), carry: redis.NewScript(head + carryLua),
		peek: redis.NewScript(head + peekLua)}
}

// scriptHead returns the lines that set the constants of a script of a
// default policy and a lease duration, before stateLua.
func scriptHead(policy pace.Policy, lease time.Duration) string {
	return "local BASE, J, LF, MAXD, MAXCD, BOB, MAXB, MAXIN, RECOVER = " + strings.Join(policyValues(policy), ", ") + "\n" +
		"local FORGET, LEASE = " + us(forgetAfter) + ", " + us(lease) + "\n"
}

// policyValues returns the fields of an Effective policy but MaxBandwidth,
// which the transport keeps, in the order stateLua names them, as
// pace.Value reads them; a MaxInFlight of 0, no cap, is the largest int.
func policyValues(policy pace.Policy) []string {
	us := func(d time.Duration) string { return strconv.FormatInt(pace.Value(d).Microseconds(), 10) }
	f := func(x float64) string { return strconv.FormatFloat(pace.Value(x), 'g', -1, 64) }
	maxIn := pace.Value(policy.MaxInFlight)
	if maxIn == 0 {
		maxIn = math.MaxInt
	}
	return []string{us(policy.BaseDelay), f(policy.Jitter), f(policy.LatencyFactor), us(policy.MaxDelay),
		us(policy.MaxCrawlDelay), us(policy.BackoffBase), us(policy.MaxBackoff), strconv.Itoa(maxIn),
		strconv.Itoa(pace.Value(policy.RecoverAfter))}
}

// ownPolicyMark ends the arguments of a call for a key with a policy of
// its own. A call whose own last argument is a quota partition equal to
// it gets one more argument, which no script reads (see withPolicy), so
// that the mark is never taken for a partition nor a partition for it.
const ownPolicyMark = "=policy"

// ownPolicyArgs returns the arguments that end a call for a key with its
// own policy: the policy's values, then ownPolicyMark.
func ownPolicyArgs(policy pace.Policy) []any {
	var a []any
	for _, v := range policyValues(policy) {
		a = append(a, v)
	}
	return append(a, ownPolicyMark)
}

// forgetAfter is the time after which the policy forgets a backoff level.
const forgetAfter = 30 * time.Minute
