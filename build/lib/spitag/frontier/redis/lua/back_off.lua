-- ARGV: prefix, host, sent_ago, base, cap, keep. A refusal with no Retry-After of a
-- request sent sent_ago seconds ago (HostGate.back_off): the n-th in a row pauses the
-- host base * 2^(n-1) seconds (at most cap); the reply, '0' for a request sent before
-- the last back-off ended (the same episode: no new pause). ``bo:<host>`` keeps n and
-- the end, for keep seconds after it.
--! uses: common rank fn_host fn_pause
local host = ARGV[2]
local key = p .. 'bo:' .. host
local t = now()
local n, ends = unpack(redis.call('HMGET', key, 'n', 'end'))
n = tonumber(n or '0')
if n > 0 and t - tonumber(ARGV[3]) < tonumber(ends) then return '0' end
local s = doubled(tonumber(ARGV[4]), n + 1, tonumber(ARGV[5]))
redis.call('HSET', key, 'n', n + 1, 'end', t + s)
redis.call('PEXPIRE', key, math.ceil((s + tonumber(ARGV[6])) * 1000))
pause(host, t, t + s)
return tostring(s)
