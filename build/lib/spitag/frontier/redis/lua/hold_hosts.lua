-- ARGV: prefix, hold, then (host, token) pairs. Renew the places still held.
--! uses: common rank fn_host
local t, hold = now(), tonumber(ARGV[2])
for i = 3, #ARGV - 1, 2 do
  local key = p .. 'hx:' .. ARGV[i]
  if redis.call('ZADD', key, 'XX', 'CH', t + hold, ARGV[i + 1]) > 0 then
    redis.call('PEXPIRE', key, math.ceil(hold * 1000) + 1000)
  end
end
return 0
