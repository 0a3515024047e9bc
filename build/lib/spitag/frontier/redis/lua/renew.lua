-- ARGV: prefix, owner, lease_seconds, then keys.
--! uses: common rank fn_host
local owner, lease = ARGV[2], tonumber(ARGV[3])
local until_ = now() + lease
local renewed = 0
for i = 4, #ARGV do
  local lo = redis.call('HGET', p .. 'lo', ARGV[i])
  if lo and string.sub(lo, 1, #owner + 1) == owner .. '|' then
    redis.call('ZADD', p .. 'leases', 'XX', until_, ARGV[i])
    renewed = renewed + 1
  end
end
return renewed
