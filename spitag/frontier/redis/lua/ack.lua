-- ARGV: prefix, then host<TAB>member keys. Leased → done.
--! uses: common rank fn_host
local done = 0
for i = 2, #ARGV do
  local key = ARGV[i]
  if redis.call('ZREM', p .. 'leases', key) == 1 then
    redis.call('HDEL', p .. 'lo', key)
    redis.call('HDEL', p .. 'tr', key)
    local tab = string.find(key, '	', 1, true)
    local host, member = string.sub(key, 1, tab - 1), string.sub(key, tab + 1)
    local f = fp(member)
    local h = p .. 'h:' .. where(host, f)
    settle(host, member, redis.call('HGET', h, f))
    redis.call('HSET', h, f, '')
    redis.call('HINCRBY', p .. 'hd', host, 1)
    done = done + 1
  end
end
if done > 0 then
  redis.call('HINCRBY', p .. 'n', 'l', -done)
  redis.call('HINCRBY', p .. 'n', 'd', done)
end
return done
