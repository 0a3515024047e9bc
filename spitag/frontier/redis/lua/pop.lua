-- ARGV: prefix, n, lease_seconds, owner, default_delay, per_host, scan,
-- budget (URLs of the crawl done or leased at most; -1: none), then (host, busy)
-- pairs: the caller's requests per host on their way to a download.
--! uses: common rank fn_host
local n, lease, owner = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local default_delay, per_host = tonumber(ARGV[5]), tonumber(ARGV[6])
local scan = tonumber(ARGV[7])
local budget = tonumber(ARGV[8])
local busy = {}
for i = 9, #ARGV - 1, 2 do busy[ARGV[i]] = tonumber(ARGV[i + 1]) end
if budget >= 0 then  -- the crawl's, every worker's pops together
  local taken = tonumber(redis.call('HGET', p .. 'n', 'l') or '0') + tonumber(redis.call('HGET', p .. 'n', 'd') or '0')
  n = math.min(n, math.max(budget - taken, 0))
  if n <= 0 then return {} end
end
local t = now()
local out = {}
local taken = 0
local seen = {}
local function take_from(host)
  if seen[host] then return end
  seen[host] = true
  local nxt = tonumber(redis.call('HGET', p .. 'next', host) or '0')
  if nxt > t then return end
  local k = math.min(per_host - (busy[host] or 0), n - taken)
  if k <= 0 then return end  -- all its places are busy with this caller's requests
  local delay = tonumber(redis.call('HGET', p .. 'delay', host) or default_delay)
  if delay > 0 then k = 1 end
  for _ = 1, k do
    local b = best_bucket(host)
    if b == nil then break end
    local items = redis.call('ZPOPMAX', p .. 'q:' .. host .. ':' .. b, 1)
    if #items == 0 then break end
    qtouch(host, b)
    local member, prio = items[1], items[2]
    local key = host .. '	' .. member
    redis.call('ZADD', p .. 'leases', t + lease, key)
    redis.call('HSET', p .. 'lo', key, owner .. '|' .. prio)
    local f = fp(member)
    local why = explain(host, member, redis.call('HGET', p .. 'h:' .. where(host, f), f))
    table.insert(out, host); table.insert(out, member); table.insert(out, prio)
    for j = 1, 5 do table.insert(out, why[j]) end
    taken = taken + 1
  end
  redis.call('HSET', p .. 'next', host, t + delay)
  refresh(host)
end
for _, host in ipairs(redis.call('ZREVRANGE', p .. 'hosts', 0, scan - 1)) do
  if taken >= n then break end
  take_from(host)
end
if taken < n then
  -- The best-ranked hosts are all waiting: take any ready host, soonest first.
  for _, host in ipairs(redis.call('ZRANGEBYSCORE', p .. 'ready', '-inf', t, 'LIMIT', 0, n)) do
    if taken >= n then break end
    take_from(host)
  end
end
if taken > 0 then
  redis.call('HINCRBY', p .. 'n', 'q', -taken)
  redis.call('HINCRBY', p .. 'n', 'l', taken)
end
return out
