-- ARGV: prefix, then the 8-tuples of push.lua. Done → queued; unknown → queued.
--! uses: common rank fn_host
local revived, was_done = 0, 0
local touched = {}
for i = 2, #ARGV, 8 do
  local host, member, prio = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local f = fp(member)
  local at = where(host, f)
  if not redis.call('ZSCORE', p .. 'q:' .. at, member) then
    local rec = redis.call('HGET', p .. 'h:' .. at, f)
    if rec == false or rec == '' then
      if rec == '' then
        -- done: forget it was seen, then insert it again
        redis.call('HDEL', p .. 'h:' .. at, f)
        redis.call('HINCRBY', p .. 'hc', host, -1)
        redis.call('HINCRBY', p .. 'hd', host, -1)
        was_done = was_done + 1
      end
      insert(host, member, f, enc(prio), ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], ARGV[i + 7])
      revived = revived + 1
      touched[host] = true
    end
  end
end
for host, _ in pairs(touched) do refresh(host) end
if revived > 0 then redis.call('HINCRBY', p .. 'n', 'q', revived) end
if was_done > 0 then redis.call('HINCRBY', p .. 'n', 'd', -was_done) end
return revived
