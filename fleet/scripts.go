package fleet

import (
	"strings"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts run atomically on the Redis server and date everything by
// its clock (TIME, in microseconds), so processes whose clocks disagree
// still share one bucket. Every key they write has a TTL: a bucket's key
// lives until the bucket would be full again (plus a second), after which it
// is not needed.

// gcraLua is the shared part of the allowance scripts: the effective limit
// (learned, else configured), the interval per unit and the burst
// tolerance, in microseconds.
const gcraLua = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local limit = tonumber(redis.call('GET', KEYS[LIMITKEY]) or '') or tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local T = window / limit
local tau = math.max(limit * tonumber(ARGV[3]), 1) * T
local function settat(key, tat)
  if tat <= now then
    redis.call('DEL', key)
  else
    redis.call('SET', key, string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1000)
  end
end
local function gettat(key)
  return math.max(tonumber(redis.call('GET', key) or '') or 0, now)
end
`

// paceLua reads an allowance's pace (see Allowance, "Pacing"): a hash with
// t, the instant the pace's charges so far have been spread until; u, when
// the pacing ends; i, the time per unit (−1: nothing may go until u), all
// in microseconds. pace is false when there is none, or it has ended.
const paceLua = `
local pace, pt, pu, pi = false, now, 0, 0
do
  local p = redis.call('HMGET', KEYS[PACEKEY], 't', 'u', 'i')
  pu = tonumber(p[2] or '') or 0
  if pu > now then
    pace = true
    pt = math.max(tonumber(p[1] or '') or now, now)
    pi = tonumber(p[3] or '') or 0
  end
end
local function setpace(t)
  if pi < 0 then t = pu end
  redis.call('HSET', KEYS[PACEKEY], 't', string.format('%.0f', math.min(t, pu)))
end
`

// allowanceScript takes (want > 0) or gives back (want < 0) units.
// KEYS: tat, background tat, learned limit, pace. ARGV: limit, window (µs),
// burst as a share of the limit, want, background (0/1), reserved share.
// It returns {granted, limit in force, µs until a unit is free (0 if all
// were granted)}.
//
// A background request must fit both the whole bucket and a bucket of
// (1 − reserved) of its rate and burst, and is charged to both. While the
// allowance paces, nothing is granted until the pace's earlier charges have
// been spread out, and what is granted pushes the pace by its units.
var allowanceScript = redis.NewScript(replaceKeys(gcraLua+paceLua, "3", "4") + `
local want = tonumber(ARGV[4])
local bg = ARGV[5] == '1'
local Tb = T / (1 - tonumber(ARGV[6]))
if want < 0 then
  if redis.call('EXISTS', KEYS[1]) == 1 then settat(KEYS[1], gettat(KEYS[1]) + want * T) end
  if bg and redis.call('EXISTS', KEYS[2]) == 1 then settat(KEYS[2], gettat(KEYS[2]) + want * Tb) end
  if pace and pi >= 0 then setpace(pt + want * pi) end
  return {0, limit, 0}
end
local tat = gettat(KEYS[1])
local avail = math.floor((now + tau - tat) / T + 1e-9)
local tatb = 0
if bg then
  tatb = gettat(KEYS[2])
  avail = math.min(avail, math.floor((now + tau - tatb) / Tb + 1e-9))
end
if pace and pt > now then avail = 0 end
local g = math.max(math.min(want, avail), 0)
if g > 0 then
  tat = tat + g * T
  settat(KEYS[1], tat)
  if bg then
    tatb = tatb + g * Tb
    settat(KEYS[2], tatb)
  end
  if pace then
    pt = now + g * pi
    setpace(pt)
  end
end
local wait = 0
if g < want then
  wait = tat + T - tau - now
  if bg then wait = math.max(wait, tatb + Tb - tau - now) end
  if pace then
    if pi < 0 then wait = math.max(wait, pu - now) else wait = math.max(wait, pt - now) end
  end
end
return {g, limit, math.ceil(math.max(wait, 0))}
`)

// learnScript records what a provider's headers said. KEYS: tat, learned
// limit, pace. ARGV: limit, window (µs), burst share, learned limit (0:
// none), remaining (−1: none), reset in µs (−1: none), limit TTL (ms). A
// learned limit is stored; a remaining count or reset moves the bucket's
// instant later (fewer units left), never earlier. With both a remaining
// count and a reset, it paces when the remaining count is less than the
// limit refills before the reset (remaining · window < limit · reset),
// keeping what an earlier pace's charges still hold back, and otherwise
// ends the pacing.
var learnScript = redis.NewScript(replaceKeys(gcraLua+paceLua, "2", "3") + `
local learned = tonumber(ARGV[4])
if learned > 0 then
  redis.call('SET', KEYS[2], learned, 'PX', tonumber(ARGV[7]))
  limit = learned
  T = window / limit
  tau = math.max(limit * tonumber(ARGV[3]), 1) * T
end
local remaining = tonumber(ARGV[5])
local reset = tonumber(ARGV[6])
local ptat = 0
if remaining >= 0 then ptat = now + tau - math.min(remaining, limit * tonumber(ARGV[3])) * T end
if reset >= 0 then ptat = math.max(ptat, now + reset) end
if ptat > gettat(KEYS[1]) then settat(KEYS[1], ptat) end
if remaining >= 0 and reset >= 0 then
  if reset > 0 and remaining * window < limit * reset then
    pu = now + reset
    pi = -1
    if remaining > 0 then pi = reset / remaining end
    redis.call('HSET', KEYS[3], 'u', string.format('%.0f', pu), 'i', string.format('%.6f', pi))
    setpace(pt)
    redis.call('PEXPIRE', KEYS[3], math.ceil(reset / 1000) + 1000)
  else
    redis.call('DEL', KEYS[3])
  end
end
return limit
`)

// replaceKeys names the keys that hold the learned limit and the pace.
func replaceKeys(src, limit, pace string) string {
	src = strings.Replace(src, "KEYS[LIMITKEY]", "KEYS["+limit+"]", 1)
	return strings.ReplaceAll(src, "KEYS[PACEKEY]", "KEYS["+pace+"]")
}

// bucketScript adds a process's change to a token bucket's deficit,
// clamped to [0, max], and returns it. KEYS: deficit. ARGV: change and max
// (milli-tokens), TTL (ms). A full bucket has no key.
var bucketScript = redis.NewScript(`
local d = tonumber(redis.call('GET', KEYS[1]) or '') or 0
d = math.min(math.max(d + tonumber(ARGV[1]), 0), tonumber(ARGV[2]))
if d == 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], d, 'PX', tonumber(ARGV[3]))
end
return d
`)

// ratioScript keeps a Ratio's window: a hash whose fields q<slice> and
// r<slice> count the requests and retries of each slice of TTL/10, the
// slices ten or more behind the current one deleted. It adds the deposits,
// then grants up to want retries the balance holds (or, for a negative
// want, gives them back). KEYS: the hash. ARGV: slice width (µs), reserve
// and deposit per request (millionths of a retry), deposits, want, TTL
// (ms). It returns {granted, retries left}.
var ratioScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local idx = math.floor(now / tonumber(ARGV[1]))
local q, r = 0, 0
local h = redis.call('HGETALL', KEYS[1])
for i = 1, #h, 2 do
  local s = tonumber(string.sub(h[i], 2))
  if s == nil or s <= idx - 10 then
    redis.call('HDEL', KEYS[1], h[i])
  elseif string.sub(h[i], 1, 1) == 'q' then
    q = q + tonumber(h[i + 1])
  else
    r = r + tonumber(h[i + 1])
  end
end
local slice = string.format('%.0f', idx)
local add = tonumber(ARGV[4])
if add > 0 then
  redis.call('HINCRBY', KEYS[1], 'q' .. slice, add)
  q = q + add
end
local want = tonumber(ARGV[5])
local bal = tonumber(ARGV[2]) + tonumber(ARGV[3]) * q - 1000000 * r
local g = want
if want > 0 then g = math.max(math.min(want, math.floor(bal / 1000000)), 0) end
if g ~= 0 then redis.call('HINCRBY', KEYS[1], 'r' .. slice, g) end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[6])) end
return {g, math.floor((bal - 1000000 * g) / 1000000)}
`)
