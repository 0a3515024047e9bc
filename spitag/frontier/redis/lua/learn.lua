-- ARGV: prefix, owner, pages feed (JSON), keep, links feed (JSON or ""), number
-- of page triples, then (host, score sum, pages) triples, then (host, Σ log(1 + score),
-- links, mask's high 32 bits, its low 32 bits) link rows.
--! uses: common rank fn_host
if ARGV[5] == '' then
  redis.call('XADD', p .. 'learnt', 'MAXLEN', '~', ARGV[4], '*', 'o', ARGV[2], 'd', ARGV[3])
else
  redis.call('XADD', p .. 'learnt', 'MAXLEN', '~', ARGV[4], '*', 'o', ARGV[2], 'd', ARGV[3], 'l', ARGV[5])
end
local last = 6 + 3 * tonumber(ARGV[6])
for i = 7, last, 3 do
  local host = ARGV[i]
  redis.call('HINCRBYFLOAT', p .. 'ys', host, ARGV[i + 1])
  redis.call('HINCRBY', p .. 'yn', host, ARGV[i + 2])
  redis.call('HDEL', p .. 'est', host)  -- learnt: an estimate is no longer used
  if redis.call('ZSCORE', p .. 'hosts', host) then refresh(host) end
end
local function orword(a, b)  -- two 32-bit words as numbers ≥ 0
  local v = bit.bor(a, b)
  if v < 0 then v = v + 4294967296 end
  return v
end
for i = last + 1, #ARGV, 5 do
  local host = ARGV[i]
  local sum, n = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  local hi, lo = tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4])
  local old = redis.call('HGET', p .. 'le', host)
  if old then
    local osum, on, ohi, olo = string.match(old, '^([^:]+):(%d+):(%d+):(%d+)$')
    if osum then
      sum, n = sum + tonumber(osum), n + tonumber(on)
      hi, lo = orword(hi, tonumber(ohi)), orword(lo, tonumber(olo))
    end
  end
  redis.call('HSET', p .. 'le', host, string.format('%.17g:%d:%d:%d', sum, n, hi, lo))
end
return 1
