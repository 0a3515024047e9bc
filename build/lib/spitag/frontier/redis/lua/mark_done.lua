-- ARGV: prefix, then (host, member) pairs. Unknown or queued → done.
--! uses: common rank fn_host
local marked, was_queued = 0, 0
local touched = {}
for i = 2, #ARGV, 2 do
  local host, member = ARGV[i], ARGV[i + 1]
  local f = fp(member)
  local at = where(host, f)
  if redis.call('ZREM', p .. 'q:' .. at, member) == 1 then
    qtouch(host, bucket_of(host, f))
    settle(host, member, redis.call('HGET', p .. 'h:' .. at, f))
    redis.call('HSET', p .. 'h:' .. at, f, '')
    redis.call('HDEL', p .. 'tr', host .. '	' .. member)  -- (a URL queued again after a failure)
    touched[host] = true
    marked = marked + 1
    was_queued = was_queued + 1
    redis.call('HINCRBY', p .. 'hd', host, 1)
  elseif redis.call('HSETNX', p .. 'h:' .. at, f, '') == 1 then
    marked = marked + 1
    redis.call('HINCRBY', p .. 'hd', host, 1)
    redis.call('HINCRBY', p .. 'hc', host, 1)
    maybe_split(host, f, 'h:')
  end
end
for host, _ in pairs(touched) do refresh(host) end
if was_queued > 0 then redis.call('HINCRBY', p .. 'n', 'q', -was_queued) end
if marked > 0 then redis.call('HINCRBY', p .. 'n', 'd', marked) end
return marked
