-- ARGV: prefix, layout, then (name, value) pairs of the crawl's host ranking
-- (spitag.ranking.HostRanking.params), given by a crawl worker (every worker of a crawl
-- gives the same), none by a command that only reads or injects (``scrapy frontier``,
-- ``inject``, ``stop``). The crawl's layout: refused when another one wrote it.
local p = ARGV[1]
if redis.call('EXISTS', p .. 'cfg') == 1 or redis.call('EXISTS', p .. 'n') == 1 then
  local layout = redis.call('HGET', p .. 'cfg', 'layout') or '1'
  if layout ~= ARGV[2] then return layout end
end
redis.call('HSET', p .. 'cfg', 'layout', ARGV[2])
if #ARGV > 2 then
  redis.call('HSET', p .. 'cfg', unpack(ARGV, 3))
end
return ARGV[2]
