-- ARGV: prefix, host, limit, seconds. A download of the host got no answer
-- (HostGate.failed). ``fails``: host → ``<failures in a row>|<1 if set down
-- before>``. Reply {count, seconds down, again}: {0, left, 0} while it is down already.
--! uses: common rank fn_host fn_down
local host = ARGV[2]
local t = now()
local til = tonumber(redis.call('HGET', p .. 'down', host) or '0')
if til > t then return {0, tostring(til - t), 0} end
local row = redis.call('HGET', p .. 'fails', host) or '0|0'
local bar = string.find(row, '|', 1, true)
local n = tonumber(string.sub(row, 1, bar - 1)) + 1
local before = string.sub(row, bar + 1) == '1'
if n < tonumber(ARGV[3]) and not before then
  redis.call('HSET', p .. 'fails', host, n .. '|0')
  return {n, '0', 0}
end
redis.call('HSET', p .. 'fails', host, '0|1')
set_down(host, t + tonumber(ARGV[4]))
return {n, ARGV[4], before and 1 or 0}
