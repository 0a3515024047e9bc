-- ARGV: prefix, then (host, estimate) pairs. Hosts not learnt yet keep the
-- estimate and, if they have queued URLs, rank by it; returns how many were re-ranked.
--! uses: common rank fn_host
local ranked = 0
for i = 2, #ARGV, 2 do
  local host, e = ARGV[i], tonumber(ARGV[i + 1])
  if tonumber(redis.call('HGET', p .. 'yn', host) or '0') == 0 then
    redis.call('HSET', p .. 'est', host, ARGV[i + 1])
    if redis.call('ZSCORE', p .. 'hosts', host) then
      redis.call('ZADD', p .. 'hosts', rank(e, 0, 0), host)
      ranked = ranked + 1
    end
  end
end
return ranked
