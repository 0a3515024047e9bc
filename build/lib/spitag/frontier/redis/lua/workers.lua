-- ARGV: prefix. Every owner in ``alive``: {owner, seconds since its last heartbeat, machine}.
--! uses: common rank fn_host
local t, out = now(), {}
local all = redis.call('HGETALL', p .. 'alive')
for i = 1, #all, 2 do
  local seen, machine = beat(all[i + 1])
  table.insert(out, all[i])
  table.insert(out, string.format('%.3f', t - seen))
  table.insert(out, machine)
end
return out
