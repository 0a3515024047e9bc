-- ARGV: prefix. Per host: host, seen, done, leased, best, next, delay, score sum, pages.
--! uses: common rank fn_host
local names = {}
for _, h in ipairs(redis.call('HKEYS', p .. 'hc')) do names[h] = true end
for _, h in ipairs(redis.call('HKEYS', p .. 'next')) do names[h] = true end
local leased = {}
for _, key in ipairs(redis.call('ZRANGE', p .. 'leases', 0, -1)) do
  local host = string.sub(key, 1, string.find(key, '	', 1, true) - 1)
  leased[host] = (leased[host] or 0) + 1
end
local out = {}
for host, _ in pairs(names) do
  local _, best = best_bucket(host)
  table.insert(out, host)
  table.insert(out, redis.call('HGET', p .. 'hc', host) or '0')
  table.insert(out, redis.call('HGET', p .. 'hd', host) or '0')
  table.insert(out, tostring(leased[host] or 0))
  table.insert(out, best and string.format('%.17g', best) or '')
  table.insert(out, redis.call('HGET', p .. 'next', host) or '0')
  table.insert(out, redis.call('HGET', p .. 'delay', host) or '')
  table.insert(out, redis.call('HGET', p .. 'ys', host) or '')
  table.insert(out, redis.call('HGET', p .. 'yn', host) or '')
end
return out
