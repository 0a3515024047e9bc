-- Put leases back in the queue: those of ``keys`` held by ``owner`` ('' = any owner).
local function requeue(keys, owner)
  local moved = 0
  local touched = {}
  for _, key in ipairs(keys) do
    local lo = redis.call('HGET', p .. 'lo', key)
    if lo then
      local bar = string.find(lo, '|', 1, true)
      local who, prio = string.sub(lo, 1, bar - 1), string.sub(lo, bar + 1)
      if owner == '' or who == owner then
        redis.call('ZREM', p .. 'leases', key)
        redis.call('HDEL', p .. 'lo', key)
        local tab = string.find(key, '	', 1, true)
        local host, member = string.sub(key, 1, tab - 1), string.sub(key, tab + 1)
        local f = fp(member)
        redis.call('ZADD', p .. 'q:' .. where(host, f), prio, member)
        qtouch(host, bucket_of(host, f))
        touched[host] = true
        moved = moved + 1
      end
    end
  end
  for host, _ in pairs(touched) do
    refresh(host)
  end
  if moved > 0 then
    redis.call('HINCRBY', p .. 'n', 'l', -moved)
    redis.call('HINCRBY', p .. 'n', 'q', moved)
  end
  return moved
end
