-- Helpers every script shares: the key prefix p (ARGV[1]), Redis' clock, priority codes,
-- the buckets of a host's URLs (extendible hashing), parents and records.
local FULL = 120
local p = ARGV[1]
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
-- an ``alive`` value, '<time> <machine>': when its owner last beat, and its machine
local function beat(v)
  local sp = string.find(v, ' ', 1, true)
  if not sp then return tonumber(v) or 0, '' end
  return tonumber(string.sub(v, 1, sp - 1)) or 0, string.sub(v, sp + 1)
end
-- base * 2^(n-1), at most cap: a back-off's pause, a failed URL's wait (back_off_seconds)
local function doubled(base, n, cap)
  return math.min(base * 2 ^ math.min(n - 1, 30), cap)
end
local function fp(member)
  local h = redis.sha1hex(member)
  return string.char(tonumber(string.sub(h, 1, 2), 16), tonumber(string.sub(h, 3, 4), 16),
    tonumber(string.sub(h, 5, 6), 16), tonumber(string.sub(h, 7, 8), 16),
    tonumber(string.sub(h, 9, 10), 16), tonumber(string.sub(h, 11, 12), 16),
    tonumber(string.sub(h, 13, 14), 16), tonumber(string.sub(h, 15, 16), 16))
end
local function addr(f)
  local a, b, c, d = string.byte(f, 1, 4)
  return ((a * 256 + b) * 256 + c) * 256 + d
end
local POW = {}
do
  local v = 1
  for i = 0, 32 do POW[i] = v; v = v * 2 end
end
-- Priorities are stored in the q/qt zsets as integer codes (see PRIORITY_SCALE in
-- Python): a listpack keeps an integer in 2-6 bytes, a fractional double as 17 digits.
-- code = round(ln(v) * S) for v > 0, ZERO for 0, NEG - round(ln(-v) * S) for v < 0:
-- monotonic, relative error <= 0.5/S (4.8e-7) whatever the magnitude. u: the rounding
-- offset, 0.5 = to nearest; a sum uses a pseudo-random u (unbiased stochastic rounding,
-- so that many contributions too small to move the code are not lost on average).
local S = 1048576
local ZERO = -1073741824
local NEG = ZERO - 800 * S
local MAXD = 1.7976931348623157e308
local function enc(v, u)
  u = u or 0.5
  if v > 0 then return math.floor(math.log(v) * S + u) end
  if v < 0 then return NEG - math.floor(math.log(-v) * S + u) end
  return ZERO  -- 0, -0 (and NaN)
end
local function dec(c)
  c = tonumber(c)
  if c == ZERO then return 0 end
  local sign, x = 1, c / S
  if c < ZERO then sign, x = -1, (NEG - c) / S end
  local v = math.exp(x)
  if v == math.huge and x ~= math.huge then v = MAXD end
  return sign * v
end
-- a uniform number in [0, 1) drawn from a string (deterministic)
local function uniform(s)
  return tonumber(string.sub(redis.sha1hex(s), 1, 8), 16) / 4294967296
end
-- Extendible hashing: the host's entry in ``dir`` holds one byte per slot of 2^D, the
-- depth d of the bucket owning the slot; bucket "d.v" holds the x with x mod 2^d = v.
local dirs = {}
local function dirof(host)
  local d = dirs[host]
  if d == nil then
    d = redis.call('HGET', p .. 'dir', host) or '\0'
    dirs[host] = d
  end
  return d
end
local function bucket_of(host, f)
  local x = addr(f)
  local dir = dirof(host)
  local d = string.byte(dir, x % #dir + 1)
  return d .. '.' .. (x % POW[d])
end
local function where(host, f)
  return host .. ':' .. bucket_of(host, f)
end
local function multi(host)
  return #dirof(host) > 1
end
-- qt:<host>: bucket -> best queued priority, kept for hosts of 2+ buckets
local function qtouch(host, b)
  if not multi(host) then return end
  local top = redis.call('ZREVRANGE', p .. 'q:' .. host .. ':' .. b, 0, 0, 'WITHSCORES')
  if #top == 0 then
    redis.call('ZREM', p .. 'qt:' .. host, b)
  else
    redis.call('ZADD', p .. 'qt:' .. host, top[2], b)
  end
end
-- the host's bucket holding its best queued URL, and that URL's priority (decoded)
local function best_bucket(host)
  if not multi(host) then
    local top = redis.call('ZREVRANGE', p .. 'q:' .. host .. ':0.0', 0, 0, 'WITHSCORES')
    if #top == 0 then return nil end
    return '0.0', dec(top[2])
  end
  local top = redis.call('ZREVRANGE', p .. 'qt:' .. host, 0, 0, 'WITHSCORES')
  if #top == 0 then return nil end
  return top[1], dec(top[2])
end
local function high(x, d)
  return math.floor(x / POW[d]) % 2 == 1
end
local function split_hash(old, lo, hi, d)
  if redis.call('EXISTS', old) == 0 then return end
  redis.call('RENAME', old, lo)
  local all = redis.call('HGETALL', lo)
  local moved, gone = {}, {}
  for i = 1, #all, 2 do
    if high(addr(all[i]), d) then
      table.insert(moved, all[i]); table.insert(moved, all[i + 1]); table.insert(gone, all[i])
    end
  end
  if #gone > 0 then
    redis.call('HSET', hi, unpack(moved))
    redis.call('HDEL', lo, unpack(gone))
  end
end
-- Split bucket "d.v" of a host in two: "d+1.v" and "d+1.v+2^d".
local function split(host, b)
  local dot = string.find(b, '.', 1, true)
  local d, v = tonumber(string.sub(b, 1, dot - 1)), tonumber(string.sub(b, dot + 1))
  if d >= 32 then return end
  local was_multi = multi(host)
  local lo, hi = (d + 1) .. '.' .. v, (d + 1) .. '.' .. (v + POW[d])
  local base = p .. 'h:' .. host .. ':'
  split_hash(base .. b, base .. lo, base .. hi, d)
  base = p .. 'p:' .. host .. ':'
  split_hash(base .. b, base .. lo, base .. hi, d)
  local q = p .. 'q:' .. host .. ':'
  if redis.call('EXISTS', q .. b) == 1 then
    redis.call('RENAME', q .. b, q .. lo)
    local all = redis.call('ZRANGE', q .. lo, 0, -1, 'WITHSCORES')
    local moved, gone = {}, {}
    for i = 1, #all, 2 do
      if high(addr(fp(all[i])), d) then
        table.insert(moved, all[i + 1]); table.insert(moved, all[i]); table.insert(gone, all[i])
      end
    end
    if #gone > 0 then
      redis.call('ZADD', q .. hi, unpack(moved))
      redis.call('ZREM', q .. lo, unpack(gone))
    end
  end
  local dir = dirof(host)
  if POW[d] >= #dir then dir = dir .. dir end
  local parts = {}
  local last = 0
  for slot = v, #dir - 1, POW[d] do
    table.insert(parts, string.sub(dir, last + 1, slot))
    table.insert(parts, string.char(d + 1))
    last = slot + 1
  end
  table.insert(parts, string.sub(dir, last + 1))
  dir = table.concat(parts)
  redis.call('HSET', p .. 'dir', host, dir)
  dirs[host] = dir
  if was_multi then redis.call('ZREM', p .. 'qt:' .. host, b) end
  qtouch(host, lo)
  qtouch(host, hi)
end
-- A bucket is split as soon as its seen set or its parents reach FULL entries: every
-- key stays under the listpack limit (128 entries by default).
local function maybe_split(host, f, kind)
  for _ = 1, 4 do
    local b = bucket_of(host, f)
    if redis.call('HLEN', p .. kind .. host .. ':' .. b) < FULL then return end
    split(host, b)
  end
end
local function host_id(host)
  local id = redis.call('HGET', p .. 'hi', host)
  if id then return id end
  id = tostring(redis.call('HLEN', p .. 'hn') + 1)
  redis.call('HSET', p .. 'hi', host, id)
  redis.call('HSET', p .. 'hn', id, host)
  return id
end
-- A parent, kept once: its member under its fingerprint, and under fingerprint..'#'
-- how many more than one queued or leased URL name it (absent: one).
local function add_parent(host, phost, pmember)
  local f = fp(pmember)
  local key = p .. 'p:' .. where(phost, f)
  if redis.call('HSETNX', key, f, pmember) == 1 or redis.call('HINCRBY', key, f .. '#', 1) == 1 then
    maybe_split(phost, f, 'p:')  -- one more field
  end
  local id = ''
  if phost ~= host then id = host_id(phost) end
  return id .. f
end
-- depth, parent score, parent reference of a record
local function split_record(rec)
  local a = string.find(rec, '|', 1, true)
  local b = string.find(rec, '|', a + 1, true)
  return string.sub(rec, 1, a - 1), string.sub(rec, a + 1, b - 1), string.sub(rec, b + 1)
end
local function parent_of(host, pref)
  local phost = host
  local id = string.sub(pref, 1, #pref - 8)
  if id ~= '' then phost = redis.call('HGET', p .. 'hn', id) end
  return phost, string.sub(pref, #pref - 7)
end
-- The record becomes done: its parent loses a child, its side data goes.
local function settle(host, member, rec)
  if rec == nil or rec == false or rec == '' then return end
  local _, pscore, pref = split_record(rec)
  if pscore == '~' then redis.call('HDEL', p .. 'x:' .. host, member) end
  if pref ~= '' then
    local phost, f = parent_of(host, pref)
    local key = p .. 'p:' .. where(phost, f)
    local more = tonumber(redis.call('HGET', key, f .. '#') or '0')
    if more > 1 then
      redis.call('HINCRBY', key, f .. '#', -1)
    elseif more == 1 then
      redis.call('HDEL', key, f .. '#')
    else
      redis.call('HDEL', key, f)
    end
  end
end
-- {depth, parent score, parent host, parent member, side JSON} of a record
local function explain(host, member, rec)
  if rec == nil or rec == false or rec == '' then return {'0', '', '', '', ''} end
  local depth, pscore, pref = split_record(rec)
  if pscore == '~' then
    return {depth, pscore, '', '', redis.call('HGET', p .. 'x:' .. host, member) or ''}
  end
  if pref == '' then return {depth, pscore, '', '', ''} end
  local phost, f = parent_of(host, pref)
  return {depth, pscore, phost, redis.call('HGET', p .. 'p:' .. where(phost, f), f) or '', ''}
end
-- A new URL: queued (prio: its code), recorded (ARGV fields: depth, parent score, parent
-- host, parent member, side JSON), counted; the host splits a bucket when it is full.
local function insert(host, member, f, prio, depth, pscore, phost, pmember, side)
  local rec
  if side ~= '' then
    redis.call('HSET', p .. 'x:' .. host, member, side)
    rec = depth .. '|~|'
  elseif pmember ~= '' then
    rec = depth .. '|' .. pscore .. '|' .. add_parent(host, phost, pmember)
  else
    rec = depth .. '|' .. pscore .. '|'
  end
  local b = bucket_of(host, f)  -- after add_parent: it may have split this host's bucket
  redis.call('ZADD', p .. 'q:' .. host .. ':' .. b, prio, member)
  redis.call('HSET', p .. 'h:' .. host .. ':' .. b, f, rec)
  if multi(host) then redis.call('ZADD', p .. 'qt:' .. host, 'GT', prio, b) end
  redis.call('HINCRBY', p .. 'hc', host, 1)
  maybe_split(host, f, 'h:')
end
