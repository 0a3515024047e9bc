-- ARGV: prefix. Seconds until a host with queued URLs is ready, or -1.
--! uses: common rank fn_host
local first = redis.call('ZRANGE', p .. 'ready', 0, 0, 'WITHSCORES')
if #first == 0 then return '-1' end
return tostring(math.max(0, tonumber(first[2]) - now()))
