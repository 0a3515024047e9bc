-- A pause (Retry-After, back-off): the host is neither popped nor let through the hard
-- gate nor given a place (``pz:<host>``, expiring with the pause) before ``til``; a
-- later time already set stays.
local function pause(host, t, til)
  local pz = p .. 'pz:' .. host
  if til > tonumber(redis.call('GET', pz) or '0') then
    redis.call('SET', pz, til, 'PX', math.ceil((til - t) * 1000))
  end
  if til > tonumber(redis.call('HGET', p .. 'hard', host) or '0') then redis.call('HSET', p .. 'hard', host, til) end
  if til > tonumber(redis.call('HGET', p .. 'next', host) or '0') then
    redis.call('HSET', p .. 'next', host, til)
    redis.call('ZADD', p .. 'ready', 'XX', til, host)
  end
end
