-- ARGV: prefix. A new run: every host down is tried again.
--! uses: common rank fn_host
local t = now()
local down = redis.call('HGETALL', p .. 'down')
local n = 0
for i = 1, #down, 2 do
  local host = down[i]
  if tonumber(down[i + 1]) > t then
    n = n + 1
    if tonumber(redis.call('HGET', p .. 'next', host) or '0') > t then
      redis.call('HSET', p .. 'next', host, t)
      redis.call('ZADD', p .. 'ready', 'XX', t, host)
    end
  end
end
redis.call('DEL', p .. 'down', p .. 'fails')
return n
