-- The crawl's host ranking, as spitag.ranking.HostRanking declares it (its reference;
-- tests hold the two equal): the parameters a crawl worker stored in cfg at open
-- (mode, k, w, half, prior), read once per script. ys / yn: the host's learnt score sum
-- and page count.
local ranking = nil
local function ranking_cfg()
  if ranking == nil then
    local c = redis.call('HMGET', p .. 'cfg', 'mode', 'k', 'w', 'half', 'prior')
    ranking = {mode = c[1] or 'best', k = tonumber(c[2] or '0.25') or 0.25, w = tonumber(c[3] or '0.7') or 0.7,
               half = tonumber(c[4] or '60') or 60, prior = tonumber(c[5] or '0') or 0}
  end
  return ranking
end
local function rank(best, ys, yn)
  local c = ranking_cfg()
  if c.mode == 'posterior' then
    if c.k <= 0 then if yn > 0 then return ys / yn end return best end
    return (ys + c.k * best) / (yn + c.k)
  end
  if c.mode ~= 'blend' then return best end
  local mean = nil
  if yn > 0 then
    mean = ys / yn
  elseif c.prior > 0 then
    mean = c.prior
  end
  local link = 0
  if best > 0 then link = best / (best + 1) end
  if mean == nil then return link end
  local sigma = 0
  if mean > 0 then sigma = mean / (mean + c.half) end
  return c.w * sigma + (1 - c.w) * link
end
