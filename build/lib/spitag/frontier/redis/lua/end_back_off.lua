-- ARGV: prefix, host, sent_ago. A request sent sent_ago seconds ago was served: after
-- the last back-off ended, the count goes. 1 = no count left.
--! uses: common rank fn_host
local key = p .. 'bo:' .. ARGV[2]
local ends = redis.call('HGET', key, 'end')
if not ends then return 1 end
if now() - tonumber(ARGV[3]) < tonumber(ends) then return 0 end
redis.call('DEL', key)
return 1
