-- ARGV: prefix. (host, seconds left, URLs queued) of every host down now.
--! uses: common rank fn_host
local t = now()
local out = {}
local down = redis.call('HGETALL', p .. 'down')
if #down == 0 then return out end
for i = 1, #down, 2 do
  local host, til = down[i], tonumber(down[i + 1])
  if til > t then
    local seen = tonumber(redis.call('HGET', p .. 'hc', host) or '0')
    local done = tonumber(redis.call('HGET', p .. 'hd', host) or '0')
    table.insert(out, host); table.insert(out, tostring(til - t))
    table.insert(out, seen - done)  -- queued or leased
  end
end
return out
