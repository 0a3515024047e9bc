-- ARGV: prefix, owner, key, retries, base seconds, cap. A download of a URL this owner
-- leases got no usable answer (UrlQueue.retry_later). ``tr``: key → failed downloads.
-- Reply {tries, seconds}: seconds '0' when its retries are used up; nil when not ours.
--! uses: common
local key = ARGV[3]
local lo = redis.call('HGET', p .. 'lo', key)
if not lo or string.sub(lo, 1, #ARGV[2] + 1) ~= ARGV[2] .. '|' then return nil end
local n = redis.call('HINCRBY', p .. 'tr', key, 1)
if n > tonumber(ARGV[4]) then
  redis.call('HDEL', p .. 'tr', key)
  return {n, '0'}
end
local wait = doubled(tonumber(ARGV[5]), n, tonumber(ARGV[6]))
local t = now()
redis.call('ZADD', p .. 'leases', 'XX', t + wait, key)
return {n, tostring(wait)}
