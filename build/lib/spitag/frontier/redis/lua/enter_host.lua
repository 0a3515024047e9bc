-- ARGV: prefix, host, token, limit, hold, turn. A place among the host's downloads of
-- every worker: 0 = taken (or renewed) for hold seconds, n > 0 = n-th in the host's line,
-- n < 0 = the host is paused (pause_host) for another -n ms.
-- Places are handed out in turn: a free place goes to the requests that have waited
-- longest (``hw:<host>``: token → when it first asked), before any newcomer; a waiter
-- that has not asked again for turn seconds (``hwt:<host>``: token → deadline) has gone
-- and leaves the line. Expired places go.
--! uses: common rank fn_host
local host, token = ARGV[2], ARGV[3]
local limit, hold, turn = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local key, line, asked = p .. 'hx:' .. host, p .. 'hw:' .. host, p .. 'hwt:' .. host
local t = now()
local pause = tonumber(redis.call('GET', p .. 'pz:' .. host) or '0')
if pause > t then return -math.ceil((pause - t) * 1000) end  -- paused: ask again then
redis.call('ZREMRANGEBYSCORE', key, '-inf', t)
local gone = redis.call('ZRANGEBYSCORE', asked, '-inf', t)
for i = 1, #gone do redis.call('ZREM', line, gone[i]) end
if #gone > 0 then redis.call('ZREMRANGEBYSCORE', asked, '-inf', t) end
local ahead = redis.call('ZRANK', line, token) or redis.call('ZCARD', line)
if redis.call('ZSCORE', key, token) or ahead < limit - redis.call('ZCARD', key) then
  redis.call('ZADD', key, t + hold, token)
  redis.call('PEXPIRE', key, math.ceil(hold * 1000) + 1000)
  if redis.call('ZREM', line, token) > 0 then redis.call('ZREM', asked, token) end
  return 0
end
redis.call('ZADD', line, 'NX', t, token)
redis.call('ZADD', asked, t + turn, token)
redis.call('PEXPIRE', line, math.ceil(turn * 1000) + 1000)
redis.call('PEXPIRE', asked, math.ceil(turn * 1000) + 1000)
return redis.call('ZRANK', line, token) + 1
