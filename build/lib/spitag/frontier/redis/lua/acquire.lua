-- ARGV: prefix, host, delay. Hard politeness at download time: 0 = go now, else wait.
--! uses: common rank fn_host
local host, delay = ARGV[2], tonumber(ARGV[3])
local t = now()
local nxt = tonumber(redis.call('HGET', p .. 'hard', host) or '0')
if nxt > t then return tostring(nxt - t) end
redis.call('HSET', p .. 'hard', host, t + delay)
return '0'
