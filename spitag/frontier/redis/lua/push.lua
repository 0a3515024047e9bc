-- ARGV: prefix, combine, per-host limit (URLs of one host at most, any state; -1:
-- none), then 8-tuples: host, member, priority, depth, parent score, parent host,
-- parent member, side JSON.
--! uses: common rank fn_host
local combine = ARGV[2]
local cap = tonumber(ARGV[3])
local new, raised, ignored, over = 0, 0, 0, 0
local touched = {}
local nonce = nil  -- this push's number (n -> r), drawn at its first sum: rounding offsets
for i = 4, #ARGV, 8 do
  local host, member, prio = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local f = fp(member)
  local at = where(host, f)
  local q = p .. 'q:' .. at
  local old = redis.call('ZSCORE', q, member)
  if old then
    local text = old
    old = tonumber(old)
    local val
    if combine == 'max' then
      val = math.max(old, enc(prio))  -- codes are ordered as the priorities
    else
      local total = dec(old) + prio
      if total ~= total or total == math.huge or total == -math.huge then
        val = old  -- as combine_priority: a non-finite sum keeps the old priority
      else
        if nonce == nil then nonce = redis.call('HINCRBY', p .. 'n', 'r', 1) end
        val = enc(total, uniform(member .. '|' .. text .. '|' .. ARGV[i + 2] .. '|' .. nonce .. '|' .. i))
      end
    end
    local rec = redis.call('HGET', p .. 'h:' .. at, f)  -- a lower layer reaches it: its depth
    local bar = rec and string.find(rec, '|', 1, true)
    if bar and tonumber(ARGV[i + 3]) < tonumber(string.sub(rec, 1, bar - 1)) then
      redis.call('HSET', p .. 'h:' .. at, f, ARGV[i + 3] .. string.sub(rec, bar))
    end
    if val ~= old then
      redis.call('ZADD', q, val, member)
      if val > old and multi(host) then
        redis.call('ZADD', p .. 'qt:' .. host, 'GT', val, bucket_of(host, f))
      else
        qtouch(host, bucket_of(host, f))
      end
      raised = raised + 1
      touched[host] = true
    end
  elseif redis.call('HEXISTS', p .. 'h:' .. at, f) == 1 then
    ignored = ignored + 1
  elseif cap >= 0 and tonumber(redis.call('HGET', p .. 'hc', host) or '0') >= cap then
    over = over + 1
  else
    insert(host, member, f, enc(prio), ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], ARGV[i + 7])
    new = new + 1
    touched[host] = true
  end
end
for host, _ in pairs(touched) do refresh(host) end
if new > 0 then redis.call('HINCRBY', p .. 'n', 'q', new) end
return {new, raised, ignored, over}
