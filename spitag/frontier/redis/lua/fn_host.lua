-- A host's place in the pop order (``hosts``, ``ready``).
local function refresh(host)
  local b, best = best_bucket(host)
  if b == nil then
    redis.call('ZREM', p .. 'hosts', host)
    redis.call('ZREM', p .. 'ready', host)
    return
  end
  local yn = tonumber(redis.call('HGET', p .. 'yn', host) or '0') or 0
  local ys = tonumber(redis.call('HGET', p .. 'ys', host) or '0') or 0
  if yn == 0 then  -- not learnt yet: its latest estimate (rescore), if any, stands for best
    local e = tonumber(redis.call('HGET', p .. 'est', host) or '')
    if e then best = e end
  end
  redis.call('ZADD', p .. 'hosts', rank(best, ys, yn), host)
  redis.call('ZADD', p .. 'ready', redis.call('HGET', p .. 'next', host) or 0, host)
end
