-- ARGV: prefix, owner, machine, fresh seconds. The live owners on this machine.
--! uses: common rank fn_host
local owner, machine, fresh = ARGV[2], ARGV[3], tonumber(ARGV[4])
local t = now()
redis.call('HSET', p .. 'alive', owner, string.format('%.3f', t) .. ' ' .. machine)
local here = 0
local all = redis.call('HGETALL', p .. 'alive')
for i = 1, #all, 2 do
  local seen, its = beat(all[i + 1])
  if seen < t - 3600 then
    redis.call('HDEL', p .. 'alive', all[i])
  elseif seen >= t - fresh and its == machine then
    here = here + 1
  end
end
return here
