-- ARGV: prefix. Anything leased or queued on a host not down; the hosts whose time is
-- up leave ``down``.
--! uses: common rank fn_host
local t = now()
if redis.call('ZCARD', p .. 'leases') > 0 then
  if redis.call('HLEN', p .. 'down') == 0 then return 1 end
  for _, key in ipairs(redis.call('ZRANGE', p .. 'leases', 0, -1)) do
    local host = string.sub(key, 1, string.find(key, '	', 1, true) - 1)
    if tonumber(redis.call('HGET', p .. 'down', host) or '0') <= t then return 1 end
  end
end
local queued = redis.call('ZCARD', p .. 'hosts')
if queued == 0 then return 0 end
if queued > redis.call('HLEN', p .. 'down') then return 1 end  -- (some host is not down)
local down = redis.call('HGETALL', p .. 'down')
for i = 1, #down, 2 do
  if tonumber(down[i + 1]) <= t then
    redis.call('HDEL', p .. 'down', down[i])
  elseif redis.call('ZSCORE', p .. 'hosts', down[i]) then
    queued = queued - 1
  end
end
if queued > 0 then return 1 end
return 0
