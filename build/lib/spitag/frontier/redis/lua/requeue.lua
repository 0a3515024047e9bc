-- ARGV: prefix, owner ('' = any: reaping), expired_only (1/0), then keys.
--! uses: common rank fn_host fn_requeue
local keys = {}
if ARGV[3] == '1' then
  keys = redis.call('ZRANGEBYSCORE', p .. 'leases', '-inf', now(), 'LIMIT', 0, 1000)
else
  for i = 4, #ARGV do table.insert(keys, ARGV[i]) end
end
return requeue(keys, ARGV[2])
