-- ARGV: prefix, n, hosts. The n best queued URLs of each of the best-ranked hosts:
-- (host, member, priority, depth, parent score, parent host, parent member, side).
--! uses: common rank fn_host
local n, scan = tonumber(ARGV[2]), tonumber(ARGV[3])
local out = {}
for _, host in ipairs(redis.call('ZREVRANGE', p .. 'hosts', 0, scan - 1)) do
  local buckets = {'0.0'}
  if multi(host) then buckets = redis.call('ZREVRANGE', p .. 'qt:' .. host, 0, n - 1) end
  local cand = {}
  -- a host's n best lie in its n best buckets
  for _, b in ipairs(buckets) do
    local items = redis.call('ZREVRANGE', p .. 'q:' .. host .. ':' .. b, 0, n - 1, 'WITHSCORES')
    for j = 1, #items, 2 do table.insert(cand, {items[j], tonumber(items[j + 1]), items[j + 1]}) end
  end
  table.sort(cand, function(a, b) return a[2] > b[2] end)
  for j = 1, math.min(n, #cand) do
    local member = cand[j][1]
    local f = fp(member)
    local why = explain(host, member, redis.call('HGET', p .. 'h:' .. where(host, f), f))
    table.insert(out, host); table.insert(out, member); table.insert(out, cand[j][3])
    for k = 1, 5 do table.insert(out, why[k]) end
  end
end
return out
