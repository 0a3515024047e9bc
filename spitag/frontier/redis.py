"""The shared frontier: one Redis, many workers, one crawl.

Keys (prefix ``spitag:<crawl>:``), per host so that each stays small (Redis keeps
small sorted sets and hashes in its compact listpack encoding):

* ``q:<host>``  sorted set — queued URLs of the host (member: the URL without
  ``scheme://host``, see ``encode_member``; score: priority);
* ``h:<host>``  hash — every URL of the host ever pushed: ``depth|score|parent`` while
  it waits or is leased, ``""`` once done (the seen set: done is never fetched again);
* ``hosts`` sorted set — hosts with queued URLs by rank; ``ready`` — the same hosts by
  next-allowed time; ``next`` / ``hard`` hashes — soft (pop) and hard (download)
  next-allowed times; ``delay`` hash — per-host delays (robots.txt Crawl-delay);
  ``ys`` / ``yn`` hashes — semantic score sum and page count per host (learning);
* ``cfg`` hash — the crawl's ranking parameters the scripts read (the host prior);
* ``leases`` sorted set — ``host<TAB>member`` by expiry; ``lo`` hash — its
  ``owner|priority``; ``n`` hash — queued / leased / done counters; ``stop`` — set by
  ``scrapy stop``.

Every operation is one Lua script, atomic: push-or-raise, pop-and-lease, ack,
release, renew, reap. Times are Redis' own clock (``TIME``), so workers on machines
whose clocks differ still agree on leases and politeness.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import redis

from spitag.errors import BackendUnavailableError, FrontierUnavailableError
from spitag.frontier.base import Counts, Entry, Frontier, HostState, PushResult
from spitag.urls import redact

logger = logging.getLogger(__name__)

_COMMON = r"""
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local function rank(best, mean, w, half)
  if w <= 0 then return best end
  local link = 0
  if best > 0 then link = best / (best + 1) end
  if mean == nil then return link end
  local sigma = 0
  if mean > 0 then sigma = mean / (mean + half) end
  return w * sigma + (1 - w) * link
end
local function refresh(p, host, w, half)
  local top = redis.call('ZREVRANGE', p .. 'q:' .. host, 0, 0, 'WITHSCORES')
  if #top == 0 then
    redis.call('ZREM', p .. 'hosts', host)
    redis.call('ZREM', p .. 'ready', host)
    return
  end
  local mean = nil
  local n = tonumber(redis.call('HGET', p .. 'yn', host) or '0')
  if n > 0 then
    mean = tonumber(redis.call('HGET', p .. 'ys', host)) / n
  else
    local prior = tonumber(redis.call('HGET', p .. 'cfg', 'prior') or '0')
    if prior > 0 then mean = prior end
  end
  redis.call('ZADD', p .. 'hosts', rank(tonumber(top[2]), mean, w, half), host)
  redis.call('ZADD', p .. 'ready', redis.call('HGET', p .. 'next', host) or 0, host)
end
"""

# ARGV: prefix, combine, w, half, then (host, member, priority, data) quadruples.
PUSH = _COMMON + r"""
local p, combine, w, half = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local new, raised, ignored = 0, 0, 0
local touched = {}
for i = 5, #ARGV, 4 do
  local host, member, prio, data = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3]
  local q = p .. 'q:' .. host
  local old = redis.call('ZSCORE', q, member)
  if old then
    old = tonumber(old)
    local val = old + prio
    if combine == 'max' then val = math.max(old, prio) end
    if val ~= old then
      redis.call('ZADD', q, val, member)
      raised = raised + 1
      touched[host] = true
    end
  elseif redis.call('HEXISTS', p .. 'h:' .. host, member) == 1 then
    ignored = ignored + 1
  else
    redis.call('ZADD', q, prio, member)
    redis.call('HSET', p .. 'h:' .. host, member, data)
    new = new + 1
    touched[host] = true
  end
end
for host, _ in pairs(touched) do refresh(p, host, w, half) end
if new > 0 then redis.call('HINCRBY', p .. 'n', 'q', new) end
return {new, raised, ignored}
"""

# ARGV: prefix, n, lease_seconds, owner, default_delay, per_host, w, half, scan
POP = _COMMON + r"""
local p, n, lease, owner = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local default_delay, per_host = tonumber(ARGV[5]), tonumber(ARGV[6])
local w, half, scan = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local t = now()
local out = {}
local taken = 0
local seen = {}
local function take_from(host)
  if seen[host] then return end
  seen[host] = true
  local nxt = tonumber(redis.call('HGET', p .. 'next', host) or '0')
  if nxt > t then return end
  local delay = tonumber(redis.call('HGET', p .. 'delay', host) or default_delay)
  local k = math.min(per_host, n - taken)
  if delay > 0 then k = 1 end
  local items = redis.call('ZPOPMAX', p .. 'q:' .. host, k)
  for j = 1, #items, 2 do
    local member, prio = items[j], items[j + 1]
    local key = host .. '\t' .. member
    redis.call('ZADD', p .. 'leases', t + lease, key)
    redis.call('HSET', p .. 'lo', key, owner .. '|' .. prio)
    local data = redis.call('HGET', p .. 'h:' .. host, member) or ''
    table.insert(out, host); table.insert(out, member); table.insert(out, prio); table.insert(out, data)
    taken = taken + 1
  end
  redis.call('HSET', p .. 'next', host, t + delay)
  refresh(p, host, w, half)
end
for _, host in ipairs(redis.call('ZREVRANGE', p .. 'hosts', 0, scan - 1)) do
  if taken >= n then break end
  take_from(host)
end
if taken < n then
  -- The best-ranked hosts are all waiting: take any ready host, soonest first.
  for _, host in ipairs(redis.call('ZRANGEBYSCORE', p .. 'ready', '-inf', t, 'LIMIT', 0, n)) do
    if taken >= n then break end
    take_from(host)
  end
end
if taken > 0 then
  redis.call('HINCRBY', p .. 'n', 'q', -taken)
  redis.call('HINCRBY', p .. 'n', 'l', taken)
end
return out
"""

# ARGV: prefix, then host<TAB>member keys. Leased → done.
ACK = r"""
local p = ARGV[1]
local done = 0
for i = 2, #ARGV do
  local key = ARGV[i]
  if redis.call('ZREM', p .. 'leases', key) == 1 then
    redis.call('HDEL', p .. 'lo', key)
    local tab = string.find(key, '\t', 1, true)
    local host = string.sub(key, 1, tab - 1)
    redis.call('HSET', p .. 'h:' .. host, string.sub(key, tab + 1), '')
    redis.call('HINCRBY', p .. 'hd', host, 1)
    done = done + 1
  end
end
if done > 0 then
  redis.call('HINCRBY', p .. 'n', 'l', -done)
  redis.call('HINCRBY', p .. 'n', 'd', done)
end
return done
"""

# ARGV: prefix, w, half, then (host, member) pairs. Unknown or queued → done.
MARK_DONE = _COMMON + r"""
local p, w, half = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local marked, was_queued = 0, 0
local touched = {}
for i = 4, #ARGV, 2 do
  local host, member = ARGV[i], ARGV[i + 1]
  if redis.call('ZREM', p .. 'q:' .. host, member) == 1 then
    redis.call('HSET', p .. 'h:' .. host, member, '')
    touched[host] = true
    marked = marked + 1
    was_queued = was_queued + 1
  elseif redis.call('HSETNX', p .. 'h:' .. host, member, '') == 1 then
    marked = marked + 1
  end
end
for host, _ in pairs(touched) do refresh(p, host, w, half) end
if was_queued > 0 then redis.call('HINCRBY', p .. 'n', 'q', -was_queued) end
if marked > 0 then redis.call('HINCRBY', p .. 'n', 'd', marked) end
return marked
"""

# ARGV: prefix, owner ('' = any: reaping), w, half, expired_only (1/0), then keys.
REQUEUE = _COMMON + r"""
local p, owner, w, half, expired = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local t = now()
local keys = {}
if expired == '1' then
  keys = redis.call('ZRANGEBYSCORE', p .. 'leases', '-inf', t, 'LIMIT', 0, 1000)
else
  for i = 6, #ARGV do table.insert(keys, ARGV[i]) end
end
local moved = 0
local touched = {}
for _, key in ipairs(keys) do
  local lo = redis.call('HGET', p .. 'lo', key)
  if lo then
    local bar = string.find(lo, '|', 1, true)
    local who, prio = string.sub(lo, 1, bar - 1), string.sub(lo, bar + 1)
    if owner == '' or who == owner then
      redis.call('ZREM', p .. 'leases', key)
      redis.call('HDEL', p .. 'lo', key)
      local tab = string.find(key, '\t', 1, true)
      local host = string.sub(key, 1, tab - 1)
      redis.call('ZADD', p .. 'q:' .. host, prio, string.sub(key, tab + 1))
      touched[host] = true
      moved = moved + 1
    end
  end
end
for host, _ in pairs(touched) do refresh(p, host, w, half) end
if moved > 0 then
  redis.call('HINCRBY', p .. 'n', 'l', -moved)
  redis.call('HINCRBY', p .. 'n', 'q', moved)
end
return moved
"""

# ARGV: prefix, owner, lease_seconds, then keys.
RENEW = _COMMON + r"""
local p, owner, lease = ARGV[1], ARGV[2], tonumber(ARGV[3])
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
"""

# ARGV: prefix, w, half, then (host, score sum, pages) triples.
LEARN = _COMMON + r"""
local p, w, half = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
for i = 4, #ARGV, 3 do
  local host = ARGV[i]
  redis.call('HINCRBYFLOAT', p .. 'ys', host, ARGV[i + 1])
  redis.call('HINCRBY', p .. 'yn', host, ARGV[i + 2])
  if redis.call('ZSCORE', p .. 'hosts', host) then refresh(p, host, w, half) end
end
return 1
"""

# ARGV: prefix, host, delay. Hard politeness at download time: 0 = go now, else wait.
ACQUIRE = _COMMON + r"""
local p, host, delay = ARGV[1], ARGV[2], tonumber(ARGV[3])
local t = now()
local nxt = tonumber(redis.call('HGET', p .. 'hard', host) or '0')
if nxt > t then return tostring(nxt - t) end
redis.call('HSET', p .. 'hard', host, t + delay)
return '0'
"""

# ARGV: prefix. Seconds until a host with queued URLs is ready, or -1.
NEXT_READY = _COMMON + r"""
local first = redis.call('ZRANGE', ARGV[1] .. 'ready', 0, 0, 'WITHSCORES')
if #first == 0 then return '-1' end
return tostring(math.max(0, tonumber(first[2]) - now()))
"""


def encode_member(url: str) -> tuple[str, str]:
    """(host, member) of a normalized URL: ``http://a.b/x`` → (``a.b``, ``h/x``).

    The member drops ``scheme://host`` (the key already names the host): ``h`` or
    ``s`` for http or https, ``:port`` when not the default, then path and query.
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    code = "s" if parts.scheme == "https" else "h"
    port = f":{parts.port}" if parts.port else ""
    rest = url.split("/", 3)[3] if url.count("/") >= 3 else ""
    return host, f"{code}{port}/{rest}"


def decode_member(host: str, member: str) -> str:
    scheme = "https" if member[0] == "s" else "http"
    rest = member[1:]
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    if rest.startswith(":"):
        port, _, path = rest[1:].partition("/")
        return f"{scheme}://{host}:{port}/{path}"
    return f"{scheme}://{host}{rest}"


def _data(entry: Entry) -> str:
    """``depth|parent_score|parent``: the reason, compact (the strategy is the crawl's)."""
    reason = entry.reason or {}
    score = reason.get("parent_score")
    return f"{entry.depth}|{'' if score is None else score}|{reason.get('parent') or ''}"


def _parse_data(data: str, strategy: str | None) -> tuple[int, dict[str, Any] | None]:
    depth, _, rest = data.partition("|")
    score, _, parent = rest.partition("|")
    reason: dict[str, Any] | None = None
    if parent or score:
        reason = {"parent": parent or None, "parent_score": float(score) if score else None}
        if strategy:
            reason["strategy"] = strategy
    return int(depth or 0), reason


TRANSIENT = (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError, OSError)


def _transient(method: Any) -> Any:
    """Turn a lost connection into FrontierUnavailableError: the scheduler retries."""

    def wrapper(self: RedisFrontier, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except TRANSIENT as exc:
            raise FrontierUnavailableError(
                f"frontier {redact(self.url)}: Redis unavailable: {redact(str(exc))}"
            ) from None

    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return wrapper


def connect(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=30, health_check_interval=30)


def ping(url: str) -> None:
    """Reach Redis once; BackendUnavailableError with a clear, password-free message."""
    try:
        connect(url).ping()
    except (redis.RedisError, OSError, ValueError) as exc:
        raise BackendUnavailableError(f"frontier {redact(url)}: Redis unreachable: {redact(str(exc))}") from None


class RedisFrontier(Frontier):
    """``redis://host:port/db`` (also ``rediss://``, ``unix://``); see the module docstring."""

    SCAN_HOSTS = 256  # hosts examined by rank in one pop before taking any ready host

    def __init__(self, url: str, crawl: str, owner: str, **kwargs: Any) -> None:
        super().__init__(url, crawl, owner, **kwargs)
        self.prefix = f"spitag:{crawl}:"
        self.redis = connect(url)
        try:
            self.redis.ping()
        except (redis.RedisError, OSError) as exc:
            raise BackendUnavailableError(f"frontier {redact(url)}: Redis unreachable: {redact(str(exc))}") from None
        register = self.redis.register_script
        self._push, self._pop, self._ack = register(PUSH), register(POP), register(ACK)
        self._requeue, self._renew, self._learn = register(REQUEUE), register(RENEW), register(LEARN)
        self._acquire, self._next_ready = register(ACQUIRE), register(NEXT_READY)
        self._mark_done = register(MARK_DONE)
        try:
            self.redis.hset(self.prefix + "cfg", "prior", repr(float(self.host_prior)))
        except (redis.RedisError, OSError) as exc:
            raise BackendUnavailableError(f"frontier {redact(url)}: Redis unreachable: {redact(str(exc))}") from None

    def _key(self, url: str) -> str:
        host, member = encode_member(url)
        return f"{host}\t{member}"

    @_transient
    def push(self, entries: Sequence[Entry], combine: str) -> PushResult:
        result = PushResult()
        args: list[Any] = [self.prefix, combine, self.host_weight, self.score_half]
        for e in entries:
            host, member = encode_member(e.url)
            args += [host, member, repr(float(e.priority)), _data(e)]
            result.hosts.add(host)
        if entries:
            result.new, result.raised, result.ignored = self._push(args=args)
        return result

    @_transient
    def pop(self, n: int) -> list[Entry]:
        flat = self._pop(
            args=[
                self.prefix, n, self.lease_seconds, self.owner, self.politeness.delay,
                self.politeness.per_host, self.host_weight, self.score_half, self.SCAN_HOSTS,
            ]
        )
        entries = []
        for i in range(0, len(flat), 4):
            host, member, prio, data = (x.decode() if isinstance(x, bytes) else x for x in flat[i : i + 4])
            depth, reason = _parse_data(data, self.strategy)
            entries.append(Entry(decode_member(host, member), host, depth, float(prio), reason))
        return entries

    @_transient
    def ack(self, urls: Sequence[str]) -> int:
        return int(self._ack(args=[self.prefix, *map(self._key, urls)])) if urls else 0

    @_transient
    def mark_done(self, entries: Sequence[Entry]) -> int:
        args: list[Any] = [self.prefix, self.host_weight, self.score_half]
        for e in entries:
            args += list(encode_member(e.url))
        return int(self._mark_done(args=args)) if entries else 0

    @_transient
    def release(self, urls: Sequence[str]) -> int:
        if not urls:
            return 0
        args = [self.prefix, self.owner, self.host_weight, self.score_half, "0", *map(self._key, urls)]
        return int(self._requeue(args=args))

    @_transient
    def renew(self, urls: Sequence[str]) -> int:
        if not urls:
            return 0
        return int(self._renew(args=[self.prefix, self.owner, self.lease_seconds, *map(self._key, urls)]))

    @_transient
    def reap(self) -> int:
        return int(self._requeue(args=[self.prefix, "", self.host_weight, self.score_half, "1"]))

    @_transient
    def recover(self) -> int:
        """Nothing to do at once: a dead worker's leases expire and are reaped."""
        return 0

    @_transient
    def has_work(self) -> bool:
        pipe = self.redis.pipeline(transaction=False)
        pipe.zcard(self.prefix + "hosts")
        pipe.zcard(self.prefix + "leases")
        hosts, leases = pipe.execute()
        return bool(hosts or leases)

    @_transient
    def next_ready(self) -> float | None:
        value = float(self._next_ready(args=[self.prefix]))
        return None if value < 0 else value

    @_transient
    def acquire(self, host: str, delay: float) -> float:
        return float(self._acquire(args=[self.prefix, host, delay]))

    @_transient
    def set_host_delay(self, host: str, delay: float) -> None:
        self.redis.hset(self.prefix + "delay", host, delay)

    @_transient
    def host_delay(self, host: str) -> float:
        value = self.redis.hget(self.prefix + "delay", host)
        return self.politeness.delay if value is None else float(value)

    @_transient
    def host_delays(self) -> dict[str, float]:
        return {h.decode(): float(d) for h, d in self.redis.hgetall(self.prefix + "delay").items()}

    @_transient
    def learn(self, observations: Sequence[tuple[str, float]]) -> None:
        sums: dict[str, list[float]] = {}
        for host, score in observations:
            total = sums.setdefault(host, [0.0, 0])
            total[0] += score
            total[1] += 1
        if not sums:
            return
        args: list[Any] = [self.prefix, self.host_weight, self.score_half]
        for host, (score, pages) in sums.items():
            args += [host, repr(float(score)), int(pages)]
        self._learn(args=args)

    @_transient
    def counts(self) -> Counts:
        raw = self.redis.hgetall(self.prefix + "n")
        get = lambda k: int(raw.get(k.encode(), 0))  # noqa: E731
        return Counts(queued=get("q"), leased=get("l"), done=get("d"))

    @_transient
    def hosts(self, limit: int = 50) -> list[HostState]:
        names = [h.decode() for h in self.redis.hkeys(self.prefix + "next")]
        names += [h.decode() for h in self.redis.zrange(self.prefix + "hosts", 0, -1)]
        out = []
        leased: dict[str, int] = {}
        for key in self.redis.zrange(self.prefix + "leases", 0, -1):
            host = key.decode().split("\t", 1)[0]
            leased[host] = leased.get(host, 0) + 1
        for host in sorted(set(names)):
            pipe = self.redis.pipeline(transaction=False)
            pipe.zcard(self.prefix + "q:" + host)
            pipe.hget(self.prefix + "hd", host)
            pipe.zrevrange(self.prefix + "q:" + host, 0, 0, withscores=True)
            pipe.hget(self.prefix + "next", host)
            pipe.hget(self.prefix + "delay", host)
            pipe.hget(self.prefix + "ys", host)
            pipe.hget(self.prefix + "yn", host)
            queued, done, top, nxt, delay, ys, yn = pipe.execute()
            mean = float(ys) / int(yn) if yn and int(yn) else None
            out.append(
                HostState(host, queued, leased.get(host, 0), int(done or 0), top[0][1] if top else None,
                          float(nxt or 0), float(delay) if delay is not None else None, mean)
            )
        out.sort(key=lambda h: (-h.queued, h.host))
        return out[:limit]

    @_transient
    def top(self, n: int = 20) -> list[Entry]:
        best: list[Entry] = []
        for raw_host in self.redis.zrevrange(self.prefix + "hosts", 0, max(n, 50) - 1):
            host = raw_host.decode()
            for member, prio in self.redis.zrevrange(self.prefix + "q:" + host, 0, n - 1, withscores=True):
                member = member.decode()
                data = self.redis.hget(self.prefix + "h:" + host, member) or b""
                depth, reason = _parse_data(data.decode(), self.strategy)
                best.append(Entry(decode_member(host, member), host, depth, prio, reason))
        best.sort(key=lambda e: -e.priority)
        return best[:n]

    @_transient
    def take_start_urls(self, key: str, limit: int = 100) -> list[str]:
        """Pop seeds a user pushed to the scrapy-redis start-URLs list (``LPUSH key URL``)."""
        raw = self.redis.lpop(key, limit) or []
        return [r.decode("utf-8", "replace") for r in raw]

    @_transient
    def request_stop(self) -> None:
        self.redis.set(self.prefix + "stop", time.time())

    @_transient
    def stop_requested(self) -> bool:
        return bool(self.redis.exists(self.prefix + "stop"))

    @_transient
    def clear_stop(self) -> None:
        self.redis.delete(self.prefix + "stop")

    def close(self) -> None:
        self.redis.close()
