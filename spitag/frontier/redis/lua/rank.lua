-- The crawl's host ranking, as spitag.ranking.HostRanking declares it (its reference;
-- tests hold the two equal): the parameters a crawl worker stored in cfg at open
-- (mode, k), read once per script. ys / yn: the host's learnt score sum and page count.
local ranking = nil
local function ranking_cfg()
  if ranking == nil then
    local c = redis.call('HMGET', p .. 'cfg', 'mode', 'k')
    ranking = {mode = c[1] or 'best', k = tonumber(c[2] or '0.25') or 0.25}
  end
  return ranking
end
local function rank(best, ys, yn)
  local c = ranking_cfg()
  if c.mode ~= 'posterior' then return best end
  if c.k <= 0 then if yn > 0 then return ys / yn end return best end
  return (ys + c.k * best) / (yn + c.k)
end
