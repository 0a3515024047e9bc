-- ARGV: prefix, fresh seconds, the caller (alive), then owners known to be
-- gone. At a worker's start (UrlQueue.recover): every lease whose owner is not alive —
-- no heartbeat in ``alive`` within fresh seconds (it closed, or stopped beating), or
-- known to be gone (killed on the caller's machine; dropped from ``alive``) — goes back
-- in the queue at once, a failed URL waiting for its next try included, and the
-- places such an owner held on those URLs' hosts (``hx:<host>``, tokens ``owner#n``)
-- are freed instead of being held until they expire.
--! uses: common rank fn_host fn_requeue
local t = now()
local live = {[ARGV[3]] = true}
local alive = redis.call('HGETALL', p .. 'alive')
for i = 1, #alive, 2 do
  if beat(alive[i + 1]) >= t - tonumber(ARGV[2]) then live[alive[i]] = true end
end
for i = 4, #ARGV do
  if ARGV[i] ~= ARGV[3] then
    live[ARGV[i]] = nil
    redis.call('HDEL', p .. 'alive', ARGV[i])
  end
end
local keys, hosts = {}, {}
local leases = redis.call('HGETALL', p .. 'lo')
for i = 1, #leases, 2 do
  local v = leases[i + 1]
  if not live[string.sub(v, 1, string.find(v, '|', 1, true) - 1)] then
    table.insert(keys, leases[i])
    hosts[string.sub(leases[i], 1, string.find(leases[i], '	', 1, true) - 1)] = true
  end
end
for host, _ in pairs(hosts) do
  local places = redis.call('ZRANGE', p .. 'hx:' .. host, 0, -1)
  for _, token in ipairs(places) do
    local hash = string.find(token, '#', 1, true)
    if hash and not live[string.sub(token, 1, hash - 1)] then redis.call('ZREM', p .. 'hx:' .. host, token) end
  end
end
return requeue(keys, '')
