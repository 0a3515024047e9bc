-- The host stopped answering (HostGate.set_down): no pop of its URLs until til
-- (``next``, ``ready``), and ``down`` says why its queued URLs do not keep the crawl
-- going (has_work.lua). A later time already set stays.
local function set_down(host, til)
  if til > tonumber(redis.call('HGET', p .. 'down', host) or '0') then redis.call('HSET', p .. 'down', host, til) end
  if til > tonumber(redis.call('HGET', p .. 'next', host) or '0') then
    redis.call('HSET', p .. 'next', host, til)
    redis.call('ZADD', p .. 'ready', 'XX', til, host)
  end
end
