"""The shared frontier: one Redis, many workers, one crawl.

Key layout 3 (prefix ``spitag:<crawl>:``; ``cfg`` → ``layout`` = 3). Each host's URLs
are spread over *buckets* by a fingerprint — the first 8 bytes of SHA-1 of the URL's
``member`` (the URL without ``scheme://host``, see ``encode_member``) — so that every
key stays under Redis' default listpack limits (128 entries of ≤ 64 bytes) and is
kept in its compact encoding whatever the host's size. A host starts with one bucket,
``0.0``; a bucket that reaches ``FULL`` (120) entries splits in two (extendible
hashing: bucket ``d.v`` holds the fingerprints whose first 32 bits x have
x mod 2^d = v; it splits into ``d+1.v`` and ``d+1.v+2^d``; the ``dir`` hash maps each
host to its directory, one byte — a bucket's d — per slot x mod 2^D).

* ``h:<host>:<b>`` hash — the seen set: every URL of the bucket ever pushed, keyed by
  its 8-byte fingerprint; ``depth|parent_score|parent`` while queued or leased, ``""``
  once done (done is never fetched again). ``parent`` is ``""``, or
  ``<host id><8-byte fingerprint of the parent>`` (host id ``""``: the child's host;
  the fingerprint is always the last 8 bytes).
  ``parent_score`` ``~``: the reason (and revisit data) are in ``x:<host>``.
* ``q:<host>:<b>`` sorted set — the bucket's queued URLs (member → priority code);
  ``qt:<host>`` sorted set — bucket → its best priority code (hosts of 2+ buckets).
  A priority p is stored as an integer code (a listpack keeps an integer in 2–6 bytes
  where a double such as 0.1 takes its 17-digit text, ~21 bytes): ``round(ln(p) · 2^20)``
  for p > 0, −2^30 for 0, −2^30 − 800·2^20 − ``round(ln(−p) · 2^20)`` for p < 0
  (``PRIORITY_*``, ``decode_priority``; Lua ``enc``/``dec``). The codes are ordered as
  the priorities, any magnitude, within 4.8e-7 relative (a BFS −depth, formerly a
  small integer, now takes 6 bytes instead of 3). A ``max`` push compares codes; a
  ``sum`` push decodes, adds and encodes with stochastic rounding (the rounding offset
  drawn from SHA-1 of member, old code, contribution and the push's number, ``n`` →
  ``r``: deterministic, a fresh draw for every combine), so that contributions too
  small to move a code are not lost on average: each combine is within one step
  (9.5e-7 relative), errors of many combines add up like a random walk, not a drift.
  Priorities leave Redis decoded (pop, top, hosts).
* ``p:<host>:<b>`` hash — parents, once per parent, not once per child: fingerprint →
  member of a page that queued or leased URLs name as their parent, and
  fingerprint``#`` → how many more than one do (the entry goes when the last of them
  is done).
* ``x:<host>`` hash — member → JSON ``{"r": reason, "v": revisit}`` of the URLs whose
  reason does not fit the compact record (a revived URL, another strategy's reason);
  deleted when the URL is done. URLs without it cost nothing here.
* ``dir`` / ``hc`` / ``hd`` hashes — per host: directory, URLs seen, URLs done (queued =
  seen − done − leased); ``hi`` / ``hn`` — host → id → host, for parents on other hosts.
* ``hosts`` sorted set — hosts with queued URLs by rank; ``ready`` — the same hosts by
  next-allowed time; ``next`` / ``hard`` hashes — soft (pop) and hard (download)
  next-allowed times; ``delay`` hash — per-host delays (robots.txt Crawl-delay);
  ``ys`` / ``yn`` hashes — semantic score sum and page count per host (learning);
  ``le`` hash — the link evidence found per host (``learn``'s links), one value
  ``<Σ log(1 + linking page's score)>:<links>:<mask's high 32 bits>:<its low 32
  bits>`` (sums added, masks OR-ed; one field, not a hash per number: 115 bytes a host
  measured, against 256), what a resumed or joining worker's strategy starts from;
  ``est`` hash — host → the strategy's latest estimate of a host not learnt yet
  (``rescore``), which ranks it instead of its best queued priority; dropped when the
  host is learnt; ``pw`` hash — host → 1 while the first URL of a host with nothing
  done or learnt waits for its page (``probe``: the host's ``next`` is held until the
  page is learnt or the URL leaves its lease); ``hx:<host>`` sorted set — the places
  among the host's downloads at once that the workers hold (``enter_host``: token →
  expiry; at most ``CONCURRENT_REQUESTS_PER_DOMAIN``; renewed while the download runs,
  so a dead worker's places free themselves, and a starting worker frees those of
  workers not alive, ``recover``; the key expires with its last place);
  ``hw:<host>`` / ``hwt:<host>`` sorted sets — the host's line of requests waiting for
  a place (token → when it first asked; token → when it is dropped unless it asks
  again): a free place goes to the longest waiting first, whichever worker frees it;
  ``down`` hash — host → until when it is down (``set_host_down``: it stopped
  answering), its queued URLs not counted by ``has_work``; ``fails`` hash — host →
  ``<failures in a row>|<1 if set down before>`` (``host_failed``, every worker's
  failures counted together; ``host_answered`` deletes the field, a new run the hash);
  ``pz:<host>`` string — until when the host asked to be left alone (``pause_host``,
  Retry-After; ``back_off``), expiring then; ``bo:<host>`` hash — ``n``, the host's
  refusals without Retry-After in a row, and ``end``, when the last back-off ends
  (``back_off``), expiring ``BACK_OFF_KEEP`` seconds after that;
  ``rb:<host[:port]>`` string — the host's robots.txt as fetched by a worker
  (``keep_robots``, zlib-compressed), expiring after ``SPITAG_ROBOTS_TTL``;
  ``learnt`` stream — the same, one entry per ``learn`` call (``o`` its owner, ``d`` a
  JSON list of [host, score sum, pages], ``l`` one of [host, log sum, links, mask] if
  any), trimmed to about ``LEARNT_KEEP`` entries: what each worker's strategy reads
  of the other workers' pages and links (``learnt``);
* ``alive`` hash — owner → ``<time> <machine>``, its last heartbeat (every second) and
  its machine (``spitag.machine``): how many workers share a machine; an owner silent
  for an hour is dropped, a closing one removes itself; a starting worker takes back the
  leases of every owner not alive (``recover``);
* ``cfg`` hash — ``layout`` and the crawl's ranking parameters the scripts read:
  ``mode`` (``blend`` | ``posterior``), ``k`` and ``prior`` (see ``host_rank``);
* ``leases`` sorted set — ``host<TAB>member`` by expiry; ``lo`` hash — its
  ``owner|priority code``; ``tr`` hash — the same key → its failed downloads, while
  it waits to be tried again (``retry_later``; deleted at its ack or when its retries
  are used up); ``n`` hash — queued / leased / done counters (and ``r``, the
  number of pushes that summed priorities); ``stop`` — set by ``scrapy stop``;
  ``setup`` hash — the strategy and seeds digest the last worker started with
  (``record_setup``).

Every operation is one Lua script, atomic: push-or-raise, pop-and-lease, ack,
release, renew, retry-later, reap, recover, revive, mark-done, learn, top, hosts (``learnt``
reads: one MULTI of reads at first, then XREAD). Times are Redis' own clock
(``TIME``), so workers on machines whose clocks differ still agree on leases and
politeness. A crawl written by another layout is refused at open (``BadInputError``):
layout 2 differed only in storing priorities as doubles and a ``|`` before the parent's
fingerprint.
"""

from __future__ import annotations

import json
import logging
import math
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import redis

from spitag.errors import BackendUnavailableError, BadInputError, FrontierUnavailableError
from spitag.frontier.base import (
    BACK_OFF_KEEP,
    RETRY_MAX_SECONDS,
    Counts,
    Entry,
    Frontier,
    HostFailure,
    HostState,
    Learnt,
    PushResult,
    Retry,
    Worker,
    link_rows,
)
from spitag.frontier.owners import is_gone
from spitag.urls import redact

logger = logging.getLogger(__name__)

LAYOUT = "3"
# learn batches kept in the ``learnt`` stream: at five a second a worker (one a flush),
# 10 workers fill it in 40 s; only a reader that far behind misses some (a worker that
# starts or resumes reads the totals, ``ys``/``yn`` and ``le``, not the stream)
LEARNT_KEEP = 2_000
LEARNT_READ = 1_000  # of them read by one ``learnt`` call
ALIVE_SECONDS = 10  # a worker whose heartbeat (every second) is older is not counted

_COMMON = r"""
local FULL = 120
local p = ARGV[1]
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
-- an ``alive`` value, '<time> <machine>': when its owner last beat, and its machine
local function beat(v)
  local sp = string.find(v, ' ', 1, true)
  if not sp then return tonumber(v) or 0, '' end
  return tonumber(string.sub(v, 1, sp - 1)) or 0, string.sub(v, sp + 1)
end
-- base * 2^(n-1), at most cap: a back-off's pause, a failed URL's wait (back_off_seconds)
local function doubled(base, n, cap)
  return math.min(base * 2 ^ math.min(n - 1, 30), cap)
end
local function fp(member)
  local h = redis.sha1hex(member)
  return string.char(tonumber(string.sub(h, 1, 2), 16), tonumber(string.sub(h, 3, 4), 16),
    tonumber(string.sub(h, 5, 6), 16), tonumber(string.sub(h, 7, 8), 16),
    tonumber(string.sub(h, 9, 10), 16), tonumber(string.sub(h, 11, 12), 16),
    tonumber(string.sub(h, 13, 14), 16), tonumber(string.sub(h, 15, 16), 16))
end
local function addr(f)
  local a, b, c, d = string.byte(f, 1, 4)
  return ((a * 256 + b) * 256 + c) * 256 + d
end
local POW = {}
do
  local v = 1
  for i = 0, 32 do POW[i] = v; v = v * 2 end
end
-- Priorities are stored in the q/qt zsets as integer codes (see PRIORITY_SCALE in
-- Python): a listpack keeps an integer in 2-6 bytes, a fractional double as 17 digits.
-- code = round(ln(v) * S) for v > 0, ZERO for 0, NEG - round(ln(-v) * S) for v < 0:
-- monotonic, relative error <= 0.5/S (4.8e-7) whatever the magnitude. u: the rounding
-- offset, 0.5 = to nearest; a sum uses a pseudo-random u (unbiased stochastic rounding,
-- so that many contributions too small to move the code are not lost on average).
local S = 1048576
local ZERO = -1073741824
local NEG = ZERO - 800 * S
local MAXD = 1.7976931348623157e308
local function enc(v, u)
  u = u or 0.5
  if v > 0 then return math.floor(math.log(v) * S + u) end
  if v < 0 then return NEG - math.floor(math.log(-v) * S + u) end
  return ZERO  -- 0, -0 (and NaN)
end
local function dec(c)
  c = tonumber(c)
  if c == ZERO then return 0 end
  local sign, x = 1, c / S
  if c < ZERO then sign, x = -1, (NEG - c) / S end
  local v = math.exp(x)
  if v == math.huge and x ~= math.huge then v = MAXD end
  return sign * v
end
-- a uniform number in [0, 1) drawn from a string (deterministic)
local function uniform(s)
  return tonumber(string.sub(redis.sha1hex(s), 1, 8), 16) / 4294967296
end
-- Extendible hashing: the host's entry in ``dir`` holds one byte per slot of 2^D, the
-- depth d of the bucket owning the slot; bucket "d.v" holds the x with x mod 2^d = v.
local dirs = {}
local function dirof(host)
  local d = dirs[host]
  if d == nil then
    d = redis.call('HGET', p .. 'dir', host) or '\0'
    dirs[host] = d
  end
  return d
end
local function bucket_of(host, f)
  local x = addr(f)
  local dir = dirof(host)
  local d = string.byte(dir, x % #dir + 1)
  return d .. '.' .. (x % POW[d])
end
local function where(host, f)
  return host .. ':' .. bucket_of(host, f)
end
local function multi(host)
  return #dirof(host) > 1
end
-- qt:<host>: bucket -> best queued priority, kept for hosts of 2+ buckets
local function qtouch(host, b)
  if not multi(host) then return end
  local top = redis.call('ZREVRANGE', p .. 'q:' .. host .. ':' .. b, 0, 0, 'WITHSCORES')
  if #top == 0 then
    redis.call('ZREM', p .. 'qt:' .. host, b)
  else
    redis.call('ZADD', p .. 'qt:' .. host, top[2], b)
  end
end
-- the host's bucket holding its best queued URL, and that URL's priority (decoded)
local function best_bucket(host)
  if not multi(host) then
    local top = redis.call('ZREVRANGE', p .. 'q:' .. host .. ':0.0', 0, 0, 'WITHSCORES')
    if #top == 0 then return nil end
    return '0.0', dec(top[2])
  end
  local top = redis.call('ZREVRANGE', p .. 'qt:' .. host, 0, 0, 'WITHSCORES')
  if #top == 0 then return nil end
  return top[1], dec(top[2])
end
local function high(x, d)
  return math.floor(x / POW[d]) % 2 == 1
end
local function split_hash(old, lo, hi, d)
  if redis.call('EXISTS', old) == 0 then return end
  redis.call('RENAME', old, lo)
  local all = redis.call('HGETALL', lo)
  local moved, gone = {}, {}
  for i = 1, #all, 2 do
    if high(addr(all[i]), d) then
      table.insert(moved, all[i]); table.insert(moved, all[i + 1]); table.insert(gone, all[i])
    end
  end
  if #gone > 0 then
    redis.call('HSET', hi, unpack(moved))
    redis.call('HDEL', lo, unpack(gone))
  end
end
-- Split bucket "d.v" of a host in two: "d+1.v" and "d+1.v+2^d".
local function split(host, b)
  local dot = string.find(b, '.', 1, true)
  local d, v = tonumber(string.sub(b, 1, dot - 1)), tonumber(string.sub(b, dot + 1))
  if d >= 32 then return end
  local was_multi = multi(host)
  local lo, hi = (d + 1) .. '.' .. v, (d + 1) .. '.' .. (v + POW[d])
  local base = p .. 'h:' .. host .. ':'
  split_hash(base .. b, base .. lo, base .. hi, d)
  base = p .. 'p:' .. host .. ':'
  split_hash(base .. b, base .. lo, base .. hi, d)
  local q = p .. 'q:' .. host .. ':'
  if redis.call('EXISTS', q .. b) == 1 then
    redis.call('RENAME', q .. b, q .. lo)
    local all = redis.call('ZRANGE', q .. lo, 0, -1, 'WITHSCORES')
    local moved, gone = {}, {}
    for i = 1, #all, 2 do
      if high(addr(fp(all[i])), d) then
        table.insert(moved, all[i + 1]); table.insert(moved, all[i]); table.insert(gone, all[i])
      end
    end
    if #gone > 0 then
      redis.call('ZADD', q .. hi, unpack(moved))
      redis.call('ZREM', q .. lo, unpack(gone))
    end
  end
  local dir = dirof(host)
  if POW[d] >= #dir then dir = dir .. dir end
  local parts = {}
  local last = 0
  for slot = v, #dir - 1, POW[d] do
    table.insert(parts, string.sub(dir, last + 1, slot))
    table.insert(parts, string.char(d + 1))
    last = slot + 1
  end
  table.insert(parts, string.sub(dir, last + 1))
  dir = table.concat(parts)
  redis.call('HSET', p .. 'dir', host, dir)
  dirs[host] = dir
  if was_multi then redis.call('ZREM', p .. 'qt:' .. host, b) end
  qtouch(host, lo)
  qtouch(host, hi)
end
-- A bucket is split as soon as its seen set or its parents reach FULL entries: every
-- key stays under the listpack limit (128 entries by default).
local function maybe_split(host, f, kind)
  for _ = 1, 4 do
    local b = bucket_of(host, f)
    if redis.call('HLEN', p .. kind .. host .. ':' .. b) < FULL then return end
    split(host, b)
  end
end
local function host_id(host)
  local id = redis.call('HGET', p .. 'hi', host)
  if id then return id end
  id = tostring(redis.call('HLEN', p .. 'hn') + 1)
  redis.call('HSET', p .. 'hi', host, id)
  redis.call('HSET', p .. 'hn', id, host)
  return id
end
-- A parent, kept once: its member under its fingerprint, and under fingerprint..'#'
-- how many more than one queued or leased URL name it (absent: one).
local function add_parent(host, phost, pmember)
  local f = fp(pmember)
  local key = p .. 'p:' .. where(phost, f)
  if redis.call('HSETNX', key, f, pmember) == 1 or redis.call('HINCRBY', key, f .. '#', 1) == 1 then
    maybe_split(phost, f, 'p:')  -- one more field
  end
  local id = ''
  if phost ~= host then id = host_id(phost) end
  return id .. f
end
-- depth, parent score, parent reference of a record
local function split_record(rec)
  local a = string.find(rec, '|', 1, true)
  local b = string.find(rec, '|', a + 1, true)
  return string.sub(rec, 1, a - 1), string.sub(rec, a + 1, b - 1), string.sub(rec, b + 1)
end
local function parent_of(host, pref)
  local phost = host
  local id = string.sub(pref, 1, #pref - 8)
  if id ~= '' then phost = redis.call('HGET', p .. 'hn', id) end
  return phost, string.sub(pref, #pref - 7)
end
-- The record becomes done: its parent loses a child, its side data goes.
local function settle(host, member, rec)
  if rec == nil or rec == false or rec == '' then return end
  local _, pscore, pref = split_record(rec)
  if pscore == '~' then redis.call('HDEL', p .. 'x:' .. host, member) end
  if pref ~= '' then
    local phost, f = parent_of(host, pref)
    local key = p .. 'p:' .. where(phost, f)
    local more = tonumber(redis.call('HGET', key, f .. '#') or '0')
    if more > 1 then
      redis.call('HINCRBY', key, f .. '#', -1)
    elseif more == 1 then
      redis.call('HDEL', key, f .. '#')
    else
      redis.call('HDEL', key, f)
    end
  end
end
-- {depth, parent score, parent host, parent member, side JSON} of a record
local function explain(host, member, rec)
  if rec == nil or rec == false or rec == '' then return {'0', '', '', '', ''} end
  local depth, pscore, pref = split_record(rec)
  if pscore == '~' then
    return {depth, pscore, '', '', redis.call('HGET', p .. 'x:' .. host, member) or ''}
  end
  if pref == '' then return {depth, pscore, '', '', ''} end
  local phost, f = parent_of(host, pref)
  return {depth, pscore, phost, redis.call('HGET', p .. 'p:' .. where(phost, f), f) or '', ''}
end
-- A new URL: queued (prio: its code), recorded (ARGV fields: depth, parent score, parent
-- host, parent member, side JSON), counted; the host splits a bucket when it is full.
local function insert(host, member, f, prio, depth, pscore, phost, pmember, side)
  local rec
  if side ~= '' then
    redis.call('HSET', p .. 'x:' .. host, member, side)
    rec = depth .. '|~|'
  elseif pmember ~= '' then
    rec = depth .. '|' .. pscore .. '|' .. add_parent(host, phost, pmember)
  else
    rec = depth .. '|' .. pscore .. '|'
  end
  local b = bucket_of(host, f)  -- after add_parent: it may have split this host's bucket
  redis.call('ZADD', p .. 'q:' .. host .. ':' .. b, prio, member)
  redis.call('HSET', p .. 'h:' .. host .. ':' .. b, f, rec)
  if multi(host) then redis.call('ZADD', p .. 'qt:' .. host, 'GT', prio, b) end
  redis.call('HINCRBY', p .. 'hc', host, 1)
  maybe_split(host, f, 'h:')
end
-- The crawl's host ranking (cfg: mode, k, prior), read once per script.
local ranking = nil
local function ranking_cfg()
  if ranking == nil then
    local c = redis.call('HMGET', p .. 'cfg', 'mode', 'k', 'prior')
    ranking = {c[1] or 'blend', tonumber(c[2] or '0.25') or 0.25, tonumber(c[3] or '0') or 0}
  end
  return ranking
end
-- spitag.frontier.base.host_rank: ys / yn = the host's learnt score sum / page count.
local function rank(best, ys, yn, w, half)
  if w <= 0 then return best end
  local c = ranking_cfg()
  local mode, k, prior = c[1], c[2], c[3]
  if mode == 'posterior' then
    if k <= 0 then if yn > 0 then return ys / yn end return best end
    return (ys + k * best) / (yn + k)
  end
  local mean = nil
  if yn > 0 then
    mean = ys / yn
  elseif prior > 0 then
    mean = prior
  end
  local link = 0
  if best > 0 then link = best / (best + 1) end
  if mean == nil then return link end
  local sigma = 0
  if mean > 0 then sigma = mean / (mean + half) end
  return w * sigma + (1 - w) * link
end
-- A URL of the host left its lease, or a page of it was learnt: if the host was
-- probed, it is ready again now, or when its hard politeness gate opens.
local function end_probe(host, t)
  if redis.call('HDEL', p .. 'pw', host) == 1 then
    local nxt = math.max(tonumber(redis.call('HGET', p .. 'hard', host) or '0') or 0, t,
      tonumber(redis.call('HGET', p .. 'down', host) or '0') or 0)
    redis.call('HSET', p .. 'next', host, nxt)
    redis.call('ZADD', p .. 'ready', 'XX', nxt, host)
  end
end
local function refresh(host, w, half)
  local b, best = best_bucket(host)
  if b == nil then
    redis.call('ZREM', p .. 'hosts', host)
    redis.call('ZREM', p .. 'ready', host)
    return
  end
  local yn = tonumber(redis.call('HGET', p .. 'yn', host) or '0') or 0
  local ys = tonumber(redis.call('HGET', p .. 'ys', host) or '0') or 0
  if yn == 0 then  -- not learnt yet: its latest estimate (rescore), if any, stands for best
    local e = tonumber(redis.call('HGET', p .. 'est', host) or '')
    if e then best = e end
  end
  redis.call('ZADD', p .. 'hosts', rank(best, ys, yn, w, half), host)
  redis.call('ZADD', p .. 'ready', redis.call('HGET', p .. 'next', host) or 0, host)
end
"""

# ARGV: prefix, layout, prior, mode, k, learns (1/0). The crawl's layout: refused when
# another one wrote it. Then the host ranking parameters, written by a frontier that
# ranks hosts by what it learns (every worker of a crawl writes the same), left alone by
# one that does not (``scrapy frontier``/``inject``/``stop`` on a running crawl).
OPEN = r"""
local p = ARGV[1]
if redis.call('EXISTS', p .. 'cfg') == 1 or redis.call('EXISTS', p .. 'n') == 1 then
  local layout = redis.call('HGET', p .. 'cfg', 'layout') or '1'
  if layout ~= ARGV[2] then return layout end
end
redis.call('HSET', p .. 'cfg', 'layout', ARGV[2])
if ARGV[6] == '1' then
  redis.call('HSET', p .. 'cfg', 'prior', ARGV[3], 'mode', ARGV[4], 'k', ARGV[5])
end
return ARGV[2]
"""

# ARGV: prefix, combine, w, half, then 8-tuples: host, member, priority, depth,
# parent score, parent host, parent member, side JSON.
PUSH = _COMMON + r"""
local combine, w, half = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local new, raised, ignored = 0, 0, 0
local touched = {}
local nonce = nil  -- this push's number (n -> r), drawn at its first sum: rounding offsets
for i = 5, #ARGV, 8 do
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
  else
    insert(host, member, f, enc(prio), ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], ARGV[i + 7])
    new = new + 1
    touched[host] = true
  end
end
for host, _ in pairs(touched) do refresh(host, w, half) end
if new > 0 then redis.call('HINCRBY', p .. 'n', 'q', new) end
return {new, raised, ignored}
"""

# ARGV: prefix, w, half, then the 8-tuples of PUSH. Done → queued; unknown → queued.
REVIVE = _COMMON + r"""
local w, half = tonumber(ARGV[2]), tonumber(ARGV[3])
local revived, was_done = 0, 0
local touched = {}
for i = 4, #ARGV, 8 do
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
for host, _ in pairs(touched) do refresh(host, w, half) end
if revived > 0 then redis.call('HINCRBY', p .. 'n', 'q', revived) end
if was_done > 0 then redis.call('HINCRBY', p .. 'n', 'd', -was_done) end
return revived
"""

# ARGV: prefix, n, lease_seconds, owner, default_delay, per_host, w, half, scan, probe (1/0),
# then (host, busy) pairs: the caller's requests per host on their way to a download.
POP = _COMMON + r"""
local n, lease, owner = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local default_delay, per_host = tonumber(ARGV[5]), tonumber(ARGV[6])
local w, half, scan = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local probe = ARGV[10] == '1'
local busy = {}
for i = 11, #ARGV - 1, 2 do busy[ARGV[i]] = tonumber(ARGV[i + 1]) end
local t = now()
local out = {}
local taken = 0
local seen = {}
local function take_from(host)
  if seen[host] then return end
  seen[host] = true
  local nxt = tonumber(redis.call('HGET', p .. 'next', host) or '0')
  if nxt > t then return end
  local k = math.min(per_host - (busy[host] or 0), n - taken)
  if k <= 0 then return end  -- all its places are busy with this caller's requests
  local delay = tonumber(redis.call('HGET', p .. 'delay', host) or default_delay)
  -- a probe: nothing of the host done or learnt yet, one URL, and the host waits for its page
  local probing = probe and tonumber(redis.call('HGET', p .. 'hd', host) or '0') == 0
    and tonumber(redis.call('HGET', p .. 'yn', host) or '0') == 0
  if delay > 0 or probing then k = 1 end
  local got = 0
  for _ = 1, k do
    local b = best_bucket(host)
    if b == nil then break end
    local items = redis.call('ZPOPMAX', p .. 'q:' .. host .. ':' .. b, 1)
    if #items == 0 then break end
    qtouch(host, b)
    local member, prio = items[1], items[2]
    local key = host .. '	' .. member
    redis.call('ZADD', p .. 'leases', t + lease, key)
    redis.call('HSET', p .. 'lo', key, owner .. '|' .. prio)
    local f = fp(member)
    local why = explain(host, member, redis.call('HGET', p .. 'h:' .. where(host, f), f))
    table.insert(out, host); table.insert(out, member); table.insert(out, prio)
    for j = 1, 5 do table.insert(out, why[j]) end
    taken = taken + 1
    got = got + 1
  end
  if probing and got > 0 then
    redis.call('HSET', p .. 'pw', host, 1)
    redis.call('HSET', p .. 'next', host, t + math.max(delay, lease))
  else
    redis.call('HSET', p .. 'next', host, t + delay)
  end
  refresh(host, w, half)
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
ACK = _COMMON + r"""
local done = 0
local t = now()
for i = 2, #ARGV do
  local key = ARGV[i]
  if redis.call('ZREM', p .. 'leases', key) == 1 then
    redis.call('HDEL', p .. 'lo', key)
    redis.call('HDEL', p .. 'tr', key)
    local tab = string.find(key, '	', 1, true)
    local host, member = string.sub(key, 1, tab - 1), string.sub(key, tab + 1)
    local f = fp(member)
    local h = p .. 'h:' .. where(host, f)
    settle(host, member, redis.call('HGET', h, f))
    redis.call('HSET', h, f, '')
    redis.call('HINCRBY', p .. 'hd', host, 1)
    end_probe(host, t)
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
local w, half = tonumber(ARGV[2]), tonumber(ARGV[3])
local marked, was_queued = 0, 0
local touched = {}
for i = 4, #ARGV, 2 do
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
for host, _ in pairs(touched) do refresh(host, w, half) end
if was_queued > 0 then redis.call('HINCRBY', p .. 'n', 'q', -was_queued) end
if marked > 0 then redis.call('HINCRBY', p .. 'n', 'd', marked) end
return marked
"""

# Put leases back in the queue: those of ``keys`` held by ``owner`` ('' = any owner).
_REQUEUE_FN = r"""
local function requeue(keys, owner, w, half)
  local t = now()
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
        local tab = string.find(key, '	', 1, true)
        local host, member = string.sub(key, 1, tab - 1), string.sub(key, tab + 1)
        local f = fp(member)
        redis.call('ZADD', p .. 'q:' .. where(host, f), prio, member)
        qtouch(host, bucket_of(host, f))
        touched[host] = true
        moved = moved + 1
      end
    end
  end
  for host, _ in pairs(touched) do
    end_probe(host, t)
    refresh(host, w, half)
  end
  if moved > 0 then
    redis.call('HINCRBY', p .. 'n', 'l', -moved)
    redis.call('HINCRBY', p .. 'n', 'q', moved)
  end
  return moved
end
"""

# ARGV: prefix, owner ('' = any: reaping), w, half, expired_only (1/0), then keys.
REQUEUE = _COMMON + _REQUEUE_FN + r"""
local keys = {}
if ARGV[5] == '1' then
  keys = redis.call('ZRANGEBYSCORE', p .. 'leases', '-inf', now(), 'LIMIT', 0, 1000)
else
  for i = 6, #ARGV do table.insert(keys, ARGV[i]) end
end
return requeue(keys, ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]))
"""

# ARGV: prefix, fresh seconds, w, half, the caller (alive), then owners known to be
# gone. At a worker's start (Frontier.recover): every lease whose owner is not alive —
# no heartbeat in ``alive`` within fresh seconds (it closed, or stopped beating), or
# known to be gone (killed on the caller's machine; dropped from ``alive``) — goes back
# in the queue at once, a failed URL waiting for its next try included, and the
# places such an owner held on those URLs' hosts (``hx:<host>``, tokens ``owner#n``)
# are freed instead of being held until they expire.
RECOVER = _COMMON + _REQUEUE_FN + r"""
local t = now()
local live = {[ARGV[5]] = true}
local alive = redis.call('HGETALL', p .. 'alive')
for i = 1, #alive, 2 do
  if beat(alive[i + 1]) >= t - tonumber(ARGV[2]) then live[alive[i]] = true end
end
for i = 6, #ARGV do
  if ARGV[i] ~= ARGV[5] then
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
return requeue(keys, '', tonumber(ARGV[3]), tonumber(ARGV[4]))
"""

# ARGV: prefix, owner, key, retries, base seconds, cap. A download of a URL this owner
# leases got no usable answer (Frontier.retry_later). ``tr``: key → failed downloads.
# Reply {tries, seconds}: seconds '0' when its retries are used up; nil when not ours.
RETRY_LATER = _COMMON + r"""
local key = ARGV[3]
local lo = redis.call('HGET', p .. 'lo', key)
if not lo or string.sub(lo, 1, #ARGV[2] + 1) ~= ARGV[2] .. '|' then return nil end
local n = redis.call('HINCRBY', p .. 'tr', key, 1)
if n > tonumber(ARGV[4]) then
  redis.call('HDEL', p .. 'tr', key)
  return {n, '0'}
end
local wait = doubled(tonumber(ARGV[5]), n, tonumber(ARGV[6]))
local t = now()
redis.call('ZADD', p .. 'leases', 'XX', t + wait, key)
end_probe(string.sub(key, 1, string.find(key, '	', 1, true) - 1), t)
return {n, tostring(wait)}
"""

# ARGV: prefix, owner, lease_seconds, then keys.
RENEW = _COMMON + r"""
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
"""

# ARGV: prefix, w, half, owner, pages feed (JSON), keep, links feed (JSON or ""), number
# of page triples, then (host, score sum, pages) triples, then (host, Σ log(1 + score),
# links, mask's high 32 bits, its low 32 bits) link rows.
LEARN = _COMMON + r"""
local w, half = tonumber(ARGV[2]), tonumber(ARGV[3])
local t = now()
if ARGV[7] == '' then
  redis.call('XADD', p .. 'learnt', 'MAXLEN', '~', ARGV[6], '*', 'o', ARGV[4], 'd', ARGV[5])
else
  redis.call('XADD', p .. 'learnt', 'MAXLEN', '~', ARGV[6], '*', 'o', ARGV[4], 'd', ARGV[5], 'l', ARGV[7])
end
local last = 8 + 3 * tonumber(ARGV[8])
for i = 9, last, 3 do
  local host = ARGV[i]
  redis.call('HINCRBYFLOAT', p .. 'ys', host, ARGV[i + 1])
  redis.call('HINCRBY', p .. 'yn', host, ARGV[i + 2])
  redis.call('HDEL', p .. 'est', host)  -- learnt: an estimate is no longer used
  end_probe(host, t)  -- its first page is learnt: a probe of the host is over
  if redis.call('ZSCORE', p .. 'hosts', host) then refresh(host, w, half) end
end
local function orword(a, b)  -- two 32-bit words as numbers ≥ 0
  local v = bit.bor(a, b)
  if v < 0 then v = v + 4294967296 end
  return v
end
for i = last + 1, #ARGV, 5 do
  local host = ARGV[i]
  local sum, n = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  local hi, lo = tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4])
  local old = redis.call('HGET', p .. 'le', host)
  if old then
    local osum, on, ohi, olo = string.match(old, '^([^:]+):(%d+):(%d+):(%d+)$')
    if osum then
      sum, n = sum + tonumber(osum), n + tonumber(on)
      hi, lo = orword(hi, tonumber(ohi)), orword(lo, tonumber(olo))
    end
  end
  redis.call('HSET', p .. 'le', host, string.format('%.17g:%d:%d:%d', sum, n, hi, lo))
end
return 1
"""

# ARGV: prefix, w, half, then (host, estimate) pairs. Hosts not learnt yet keep the
# estimate and, if they have queued URLs, rank by it; returns how many were re-ranked.
RESCORE = _COMMON + r"""
local w, half = tonumber(ARGV[2]), tonumber(ARGV[3])
local ranked = 0
for i = 4, #ARGV, 2 do
  local host, e = ARGV[i], tonumber(ARGV[i + 1])
  if tonumber(redis.call('HGET', p .. 'yn', host) or '0') == 0 then
    redis.call('HSET', p .. 'est', host, ARGV[i + 1])
    if redis.call('ZSCORE', p .. 'hosts', host) then
      redis.call('ZADD', p .. 'hosts', rank(e, 0, 0, w, half), host)
      ranked = ranked + 1
    end
  end
end
return ranked
"""

# ARGV: prefix, owner, machine, fresh seconds. The live owners on this machine.
HEARTBEAT = _COMMON + r"""
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
"""

# ARGV: prefix. Every owner in ``alive``: {owner, seconds since its last heartbeat, machine}.
WORKERS = _COMMON + r"""
local t, out = now(), {}
local all = redis.call('HGETALL', p .. 'alive')
for i = 1, #all, 2 do
  local seen, machine = beat(all[i + 1])
  table.insert(out, all[i])
  table.insert(out, string.format('%.3f', t - seen))
  table.insert(out, machine)
end
return out
"""

# ARGV: prefix, host, delay. Hard politeness at download time: 0 = go now, else wait.
ACQUIRE = _COMMON + r"""
local host, delay = ARGV[2], tonumber(ARGV[3])
local t = now()
local nxt = tonumber(redis.call('HGET', p .. 'hard', host) or '0')
if nxt > t then return tostring(nxt - t) end
redis.call('HSET', p .. 'hard', host, t + delay)
return '0'
"""

# A pause (Retry-After, back-off): the host is neither popped nor let through the hard
# gate nor given a place (``pz:<host>``, expiring with the pause) before ``til``; a
# later time already set stays.
_PAUSE = r"""
local function pause(host, t, til)
  local pz = p .. 'pz:' .. host
  if til > tonumber(redis.call('GET', pz) or '0') then
    redis.call('SET', pz, til, 'PX', math.ceil((til - t) * 1000))
  end
  if til > tonumber(redis.call('HGET', p .. 'hard', host) or '0') then redis.call('HSET', p .. 'hard', host, til) end
  if til > tonumber(redis.call('HGET', p .. 'next', host) or '0') then
    redis.call('HSET', p .. 'next', host, til)
    redis.call('ZADD', p .. 'ready', 'XX', til, host)
  end
end
"""

# ARGV: prefix, host, seconds. The host asked for a pause (Retry-After).
PAUSE_HOST = _COMMON + _PAUSE + r"""
local t = now()
pause(ARGV[2], t, t + tonumber(ARGV[3]))
return 0
"""

# ARGV: prefix, host, sent_ago, base, cap, keep. A refusal with no Retry-After of a
# request sent sent_ago seconds ago (Frontier.back_off): the n-th in a row pauses the
# host base * 2^(n-1) seconds (at most cap); the reply, '0' for a request sent before
# the last back-off ended (the same episode: no new pause). ``bo:<host>`` keeps n and
# the end, for keep seconds after it.
BACK_OFF = _COMMON + _PAUSE + r"""
local host = ARGV[2]
local key = p .. 'bo:' .. host
local t = now()
local n, ends = unpack(redis.call('HMGET', key, 'n', 'end'))
n = tonumber(n or '0')
if n > 0 and t - tonumber(ARGV[3]) < tonumber(ends) then return '0' end
local s = doubled(tonumber(ARGV[4]), n + 1, tonumber(ARGV[5]))
redis.call('HSET', key, 'n', n + 1, 'end', t + s)
redis.call('PEXPIRE', key, math.ceil((s + tonumber(ARGV[6])) * 1000))
pause(host, t, t + s)
return tostring(s)
"""

# The host stopped answering (Frontier.set_host_down): no pop of its URLs until til
# (``next``, ``ready``), and ``down`` says why its queued URLs do not keep the crawl
# going (HAS_WORK). A later time already set stays.
_DOWN = r"""
local function set_down(host, til)
  if til > tonumber(redis.call('HGET', p .. 'down', host) or '0') then redis.call('HSET', p .. 'down', host, til) end
  if til > tonumber(redis.call('HGET', p .. 'next', host) or '0') then
    redis.call('HSET', p .. 'next', host, til)
    redis.call('ZADD', p .. 'ready', 'XX', til, host)
  end
end
"""

# ARGV: prefix, host, seconds.
SET_HOST_DOWN = _COMMON + _DOWN + r"""
set_down(ARGV[2], now() + tonumber(ARGV[3]))
return 0
"""

# ARGV: prefix, host, limit, seconds. A download of the host got no answer
# (Frontier.host_failed). ``fails``: host → ``<failures in a row>|<1 if set down
# before>``. Reply {count, seconds down, again}: {0, left, 0} while it is down already.
HOST_FAILED = _COMMON + _DOWN + r"""
local host = ARGV[2]
local t = now()
local til = tonumber(redis.call('HGET', p .. 'down', host) or '0')
if til > t then return {0, tostring(til - t), 0} end
local row = redis.call('HGET', p .. 'fails', host) or '0|0'
local bar = string.find(row, '|', 1, true)
local n = tonumber(string.sub(row, 1, bar - 1)) + 1
local before = string.sub(row, bar + 1) == '1'
if n < tonumber(ARGV[3]) and not before then
  redis.call('HSET', p .. 'fails', host, n .. '|0')
  return {n, '0', 0}
end
redis.call('HSET', p .. 'fails', host, '0|1')
set_down(host, t + tonumber(ARGV[4]))
return {n, ARGV[4], before and 1 or 0}
"""

# ARGV: prefix. Anything leased or queued on a host not down; the hosts whose time is
# up leave ``down``.
HAS_WORK = _COMMON + r"""
local t = now()
if redis.call('ZCARD', p .. 'leases') > 0 then
  if redis.call('HLEN', p .. 'down') == 0 then return 1 end
  for _, key in ipairs(redis.call('ZRANGE', p .. 'leases', 0, -1)) do
    local host = string.sub(key, 1, string.find(key, '	', 1, true) - 1)
    if tonumber(redis.call('HGET', p .. 'down', host) or '0') <= t then return 1 end
  end
end
local queued = redis.call('ZCARD', p .. 'hosts')
if queued == 0 then return 0 end
if queued > redis.call('HLEN', p .. 'down') then return 1 end  -- (some host is not down)
local down = redis.call('HGETALL', p .. 'down')
for i = 1, #down, 2 do
  if tonumber(down[i + 1]) <= t then
    redis.call('HDEL', p .. 'down', down[i])
  elseif redis.call('ZSCORE', p .. 'hosts', down[i]) then
    queued = queued - 1
  end
end
if queued > 0 then return 1 end
return 0
"""

# ARGV: prefix. (host, seconds left, URLs queued) of every host down now.
HOSTS_DOWN = _COMMON + r"""
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
"""

# ARGV: prefix. A new run: every host down is tried again.
CLEAR_DOWN = _COMMON + r"""
local t = now()
local down = redis.call('HGETALL', p .. 'down')
local n = 0
for i = 1, #down, 2 do
  local host = down[i]
  if tonumber(down[i + 1]) > t then
    n = n + 1
    if tonumber(redis.call('HGET', p .. 'next', host) or '0') > t then
      redis.call('HSET', p .. 'next', host, t)
      redis.call('ZADD', p .. 'ready', 'XX', t, host)
    end
  end
end
redis.call('DEL', p .. 'down', p .. 'fails')
return n
"""

# ARGV: prefix, host, sent_ago. A request sent sent_ago seconds ago was served: after
# the last back-off ended, the count goes. 1 = no count left.
END_BACK_OFF = _COMMON + r"""
local key = p .. 'bo:' .. ARGV[2]
local ends = redis.call('HGET', key, 'end')
if not ends then return 1 end
if now() - tonumber(ARGV[3]) < tonumber(ends) then return 0 end
redis.call('DEL', key)
return 1
"""

# ARGV: prefix, host, token, limit, hold, turn. A place among the host's downloads of
# every worker: 0 = taken (or renewed) for hold seconds, n > 0 = n-th in the host's line,
# n < 0 = the host is paused (pause_host) for another -n ms.
# Places are handed out in turn: a free place goes to the requests that have waited
# longest (``hw:<host>``: token → when it first asked), before any newcomer; a waiter
# that has not asked again for turn seconds (``hwt:<host>``: token → deadline) has gone
# and leaves the line. Expired places go.
ENTER_HOST = _COMMON + r"""
local host, token = ARGV[2], ARGV[3]
local limit, hold, turn = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local key, line, asked = p .. 'hx:' .. host, p .. 'hw:' .. host, p .. 'hwt:' .. host
local t = now()
local pause = tonumber(redis.call('GET', p .. 'pz:' .. host) or '0')
if pause > t then return -math.ceil((pause - t) * 1000) end  -- paused: ask again then
redis.call('ZREMRANGEBYSCORE', key, '-inf', t)
local gone = redis.call('ZRANGEBYSCORE', asked, '-inf', t)
for i = 1, #gone do redis.call('ZREM', line, gone[i]) end
if #gone > 0 then redis.call('ZREMRANGEBYSCORE', asked, '-inf', t) end
local ahead = redis.call('ZRANK', line, token) or redis.call('ZCARD', line)
if redis.call('ZSCORE', key, token) or ahead < limit - redis.call('ZCARD', key) then
  redis.call('ZADD', key, t + hold, token)
  redis.call('PEXPIRE', key, math.ceil(hold * 1000) + 1000)
  if redis.call('ZREM', line, token) > 0 then redis.call('ZREM', asked, token) end
  return 0
end
redis.call('ZADD', line, 'NX', t, token)
redis.call('ZADD', asked, t + turn, token)
redis.call('PEXPIRE', line, math.ceil(turn * 1000) + 1000)
redis.call('PEXPIRE', asked, math.ceil(turn * 1000) + 1000)
return redis.call('ZRANK', line, token) + 1
"""

# ARGV: prefix, hold, then (host, token) pairs. Renew the places still held.
HOLD_HOSTS = _COMMON + r"""
local t, hold = now(), tonumber(ARGV[2])
for i = 3, #ARGV - 1, 2 do
  local key = p .. 'hx:' .. ARGV[i]
  if redis.call('ZADD', key, 'XX', 'CH', t + hold, ARGV[i + 1]) > 0 then
    redis.call('PEXPIRE', key, math.ceil(hold * 1000) + 1000)
  end
end
return 0
"""

# ARGV: prefix. Seconds until a host with queued URLs is ready, or -1.
NEXT_READY = _COMMON + r"""
local first = redis.call('ZRANGE', p .. 'ready', 0, 0, 'WITHSCORES')
if #first == 0 then return '-1' end
return tostring(math.max(0, tonumber(first[2]) - now()))
"""

# ARGV: prefix, n, hosts. The n best queued URLs of each of the best-ranked hosts:
# (host, member, priority, depth, parent score, parent host, parent member, side).
TOP = _COMMON + r"""
local n, scan = tonumber(ARGV[2]), tonumber(ARGV[3])
local out = {}
for _, host in ipairs(redis.call('ZREVRANGE', p .. 'hosts', 0, scan - 1)) do
  local buckets = {'0.0'}
  if multi(host) then buckets = redis.call('ZREVRANGE', p .. 'qt:' .. host, 0, n - 1) end
  local cand = {}
  -- a host's n best lie in its n best buckets
  for _, b in ipairs(buckets) do
    local items = redis.call('ZREVRANGE', p .. 'q:' .. host .. ':' .. b, 0, n - 1, 'WITHSCORES')
    for j = 1, #items, 2 do table.insert(cand, {items[j], tonumber(items[j + 1]), items[j + 1]}) end
  end
  table.sort(cand, function(a, b) return a[2] > b[2] end)
  for j = 1, math.min(n, #cand) do
    local member = cand[j][1]
    local f = fp(member)
    local why = explain(host, member, redis.call('HGET', p .. 'h:' .. where(host, f), f))
    table.insert(out, host); table.insert(out, member); table.insert(out, cand[j][3])
    for k = 1, 5 do table.insert(out, why[k]) end
  end
end
return out
"""

# ARGV: prefix. Per host: host, seen, done, leased, best, next, delay, score sum, pages.
HOSTS = _COMMON + r"""
local names = {}
for _, h in ipairs(redis.call('HKEYS', p .. 'hc')) do names[h] = true end
for _, h in ipairs(redis.call('HKEYS', p .. 'next')) do names[h] = true end
local leased = {}
for _, key in ipairs(redis.call('ZRANGE', p .. 'leases', 0, -1)) do
  local host = string.sub(key, 1, string.find(key, '	', 1, true) - 1)
  leased[host] = (leased[host] or 0) + 1
end
local out = {}
for host, _ in pairs(names) do
  local _, best = best_bucket(host)
  table.insert(out, host)
  table.insert(out, redis.call('HGET', p .. 'hc', host) or '0')
  table.insert(out, redis.call('HGET', p .. 'hd', host) or '0')
  table.insert(out, tostring(leased[host] or 0))
  table.insert(out, best and string.format('%.17g', best) or '')
  table.insert(out, redis.call('HGET', p .. 'next', host) or '0')
  table.insert(out, redis.call('HGET', p .. 'delay', host) or '')
  table.insert(out, redis.call('HGET', p .. 'ys', host) or '')
  table.insert(out, redis.call('HGET', p .. 'yn', host) or '')
end
return out
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


# Priorities in the zsets: integer codes, round(ln(p) · PRIORITY_SCALE) for p > 0,
# PRIORITY_ZERO for 0, PRIORITY_NEG − round(ln(−p) · PRIORITY_SCALE) for p < 0 (the Lua
# ``enc``/``dec`` of _COMMON; Lua encodes, since sums are combined inside the scripts).
PRIORITY_SCALE = 1 << 20
PRIORITY_ZERO = -(1 << 30)
PRIORITY_NEG = PRIORITY_ZERO - 800 * PRIORITY_SCALE


def decode_priority(code: str | bytes | float) -> float:
    """The priority of a zset code (within 4.8e-7 relative of the one pushed)."""
    c = float(code)
    if c == PRIORITY_ZERO:
        return 0.0
    sign, x = (1.0, c / PRIORITY_SCALE) if c > PRIORITY_ZERO else (-1.0, (PRIORITY_NEG - c) / PRIORITY_SCALE)
    if x == math.inf:
        return sign * math.inf
    try:
        return sign * math.exp(x)
    except OverflowError:  # the code of the largest doubles, rounded up
        return sign * sys.float_info.max


COMPACT_REASON = {"parent", "parent_score", "strategy"}
MAX_RECORD = 60  # a record longer than the listpack value limit (64) would bloat its bucket


def _number(value: float) -> str:
    return repr(float(value)).removesuffix(".0")


class _Codec:
    """Entries ↔ the scripts' 8-tuples: host, member, priority, depth, parent score,
    parent host, parent member, side JSON (what the compact record cannot say). The
    priority goes in as a float's text (the scripts encode it) and comes back as its
    integer code (``decode_priority``)."""

    def __init__(self, strategy: str | None) -> None:
        self.strategy = strategy

    def args(self, e: Entry, revisit: dict[str, Any] | None = None) -> list[Any]:
        host, member = encode_member(e.url)
        head = [host, member, repr(float(e.priority)), str(int(e.depth))]
        compact = self.compact(e.reason, e.depth) if not revisit else None
        if compact is None:
            side = json.dumps({"r": e.reason, "v": revisit}, separators=(",", ":"), default=str)
            return head + ["", "", "", side]
        return head + [*compact, ""]

    def compact(self, reason: dict[str, Any] | None, depth: int) -> tuple[str, str, str] | None:
        """(parent score, parent host, parent member), or None when the reason does not
        come back exactly from them (then it goes to the side hash)."""
        if not reason:
            return "", "", ""
        if not set(reason) <= COMPACT_REASON or reason.get("strategy") not in (None, self.strategy):
            return None
        if self.strategy is not None and "strategy" not in reason:
            return None
        score, parent = reason.get("parent_score"), reason.get("parent")
        if score is None and parent is None:
            return None
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
            return None
        if parent is not None:
            if not isinstance(parent, str) or not parent:
                return None
            try:
                phost, pmember = encode_member(parent)
            except ValueError:
                return None
            if not phost or decode_member(phost, pmember) != parent or len(pmember.encode()) > 64:
                return None
        else:
            phost = pmember = ""
        text = "" if score is None else _number(score)
        if len(str(depth)) + len(text) + 2 + 16 > MAX_RECORD:
            return None
        return text, phost, pmember

    def entries(self, flat: list[Any]) -> list[Entry]:
        out = []
        for i in range(0, len(flat), 8):
            host, member, prio, depth, score, phost, pmember, side = (
                x.decode() if isinstance(x, bytes) else str(x) for x in flat[i : i + 8]
            )
            reason: dict[str, Any] | None = None
            revisit = None
            if score == "~":
                data = json.loads(side) if side else {}
                reason, revisit = data.get("r"), data.get("v")
            elif pmember or score:
                reason = {"parent": decode_member(phost, pmember) if pmember else None,
                          "parent_score": float(score) if score else None}
                if self.strategy:
                    reason["strategy"] = self.strategy
            out.append(Entry(decode_member(host, member), host, int(depth or 0), decode_priority(prio), reason,
                             revisit))
        return out


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


def _link_row(host: bytes, value: bytes) -> tuple[str, float, int, int] | None:
    """An ``le`` entry as (host, log sum, links, 64-bit mask); None if unreadable."""
    try:
        log_sum, links, high, low = value.split(b":")
        row = (host.decode(), float(log_sum), int(links), ((int(high) & 0xFFFFFFFF) << 32) | (int(low) & 0xFFFFFFFF))
    except ValueError:
        return None
    return row if row[2] > 0 and math.isfinite(row[1]) else None


def connect(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=30, health_check_interval=30)


def ping(url: str) -> None:
    """Reach Redis once; BackendUnavailableError with a clear, password-free message."""
    try:
        connect(url).ping()
    except redis.ResponseError as exc:
        if "DB index" not in str(exc):
            raise BackendUnavailableError(f"frontier {redact(url)}: Redis refused: {redact(str(exc))}") from None
        raise BadInputError(f"frontier {redact(url)}: no such Redis database ({exc})") from None
    except (redis.RedisError, OSError, ValueError) as exc:
        raise BackendUnavailableError(f"frontier {redact(url)}: Redis unreachable: {redact(str(exc))}") from None


class RedisFrontier(Frontier):
    """``redis://host:port/db`` (also ``rediss://``, ``unix://``); see the module docstring."""

    SCAN_HOSTS = 256  # hosts examined by rank in one pop before taking any ready host
    shares_hosts = True  # workers share it: per-host places too (enter_host)
    recover_again = ALIVE_SECONDS + 1.0

    def __init__(self, url: str, crawl: str, owner: str, **kwargs: Any) -> None:
        super().__init__(url, crawl, owner, **kwargs)
        self.prefix = f"spitag:{crawl}:"
        self.codec = _Codec(self.strategy)
        self.redis = connect(url)
        register = self.redis.register_script
        self._push, self._pop, self._ack = register(PUSH), register(POP), register(ACK)
        self._requeue, self._renew, self._learn = register(REQUEUE), register(RENEW), register(LEARN)
        self._acquire, self._next_ready = register(ACQUIRE), register(NEXT_READY)
        self._pause_host = register(PAUSE_HOST)
        self._back_off = register(BACK_OFF)
        self._end_back_off = register(END_BACK_OFF)
        self._set_host_down, self._has_work = register(SET_HOST_DOWN), register(HAS_WORK)
        self._hosts_down, self._clear_down = register(HOSTS_DOWN), register(CLEAR_DOWN)
        self._host_failed, self._retry_later = register(HOST_FAILED), register(RETRY_LATER)
        self._mark_done, self._revive = register(MARK_DONE), register(REVIVE)
        self._top, self._hosts = register(TOP), register(HOSTS)
        self._heartbeat, self._rescore = register(HEARTBEAT), register(RESCORE)
        self._recover, self._workers = register(RECOVER), register(WORKERS)
        self._enter_host, self._hold_hosts = register(ENTER_HOST), register(HOLD_HOSTS)
        try:
            layout = self.redis.eval(
                OPEN, 0, self.prefix, LAYOUT, repr(float(self.host_prior)), self.host_ranking,
                repr(float(self.host_k)), "1" if self.host_weight > 0 else "0",
            )
        except (redis.RedisError, OSError) as exc:
            raise BackendUnavailableError(f"frontier {redact(url)}: Redis unreachable: {redact(str(exc))}") from None
        layout = layout.decode() if isinstance(layout, bytes) else str(layout)
        if layout != LAYOUT:
            raise BadInputError(
                f"frontier {redact(url)}: crawl {crawl!r} was written by an earlier SpiTag (Redis key "
                f"layout {layout}, this one reads layout {LAYOUT}): finish it with that version, or "
                f"start a new crawl name (its keys are spitag:{crawl}:*)"
            )

    def _key(self, url: str) -> str:
        host, member = encode_member(url)
        return f"{host}\t{member}"

    @_transient
    def push(self, entries: Sequence[Entry], combine: str) -> PushResult:
        result = PushResult()
        args: list[Any] = [self.prefix, combine, self.host_weight, self.score_half]
        for e in entries:
            one = self.codec.args(e)
            args += one
            result.hosts.add(one[0])
        if entries:
            result.new, result.raised, result.ignored = self._push(args=args)
        return result

    @_transient
    def revive(self, entries: Sequence[Entry]) -> int:
        args: list[Any] = [self.prefix, self.host_weight, self.score_half]
        for e in entries:
            args += self.codec.args(e, e.revisit or None)
        return int(self._revive(args=args)) if entries else 0

    @_transient
    def pop(self, n: int, busy: Mapping[str, int] | None = None) -> list[Entry]:
        flat = self._pop(
            args=[
                self.prefix, n, self.lease_seconds, self.owner, self.politeness.delay,
                self.politeness.per_host, self.host_weight, self.score_half, self.SCAN_HOSTS,
                int(self.probe), *(v for item in (busy or {}).items() for v in item),
            ]
        )
        return self.codec.entries(flat)

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
    def retry_later(self, url: str, retries: int, seconds: float) -> Retry | None:
        reply = self._retry_later(
            args=[self.prefix, self.owner, self._key(url), retries, repr(float(seconds)), RETRY_MAX_SECONDS])
        if reply is None:
            return None
        return Retry(int(reply[0]), float(reply[1]))

    @_transient
    def reap(self) -> int:
        return int(self._requeue(args=[self.prefix, "", self.host_weight, self.score_half, "1"]))

    @_transient
    def recover(self) -> int:
        """Leases of workers that are not alive go back at once, and the places they
        held on their hosts: a worker that closed (its failed URLs waiting for another
        try), one whose heartbeat is older than ``ALIVE_SECONDS``, or one known to be
        gone although it beat a moment ago (``owners.is_gone``: a process of this
        machine's process table, killed). A live worker's leases, and this one's, are
        left alone. A worker of another machine or container, killed just before this
        one started, is known to be gone ``recover_again`` seconds later."""
        gone = [owner for owner in (o.decode() for o in self.redis.hkeys(self.prefix + "alive"))
                if owner != self.owner and is_gone(owner)]
        return int(self._recover(
            args=[self.prefix, ALIVE_SECONDS, self.host_weight, self.score_half, self.owner, *gone]))

    @_transient
    def has_work(self) -> bool:
        return bool(int(self._has_work(args=[self.prefix])))

    @_transient
    def next_ready(self) -> float | None:
        value = float(self._next_ready(args=[self.prefix]))
        return None if value < 0 else value

    @_transient
    def acquire(self, host: str, delay: float) -> float:
        return float(self._acquire(args=[self.prefix, host, delay]))

    @_transient
    def set_host_down(self, host: str, seconds: float) -> None:
        self._set_host_down(args=[self.prefix, host, seconds])

    @_transient
    def hosts_down(self) -> list[tuple[str, float, int]]:
        flat = self._hosts_down(args=[self.prefix])
        return sorted(
            (flat[i].decode(), float(flat[i + 1]), int(flat[i + 2])) for i in range(0, len(flat), 3)
        )

    @_transient
    def clear_down(self) -> int:
        return int(self._clear_down(args=[self.prefix]))

    @_transient
    def host_failed(self, host: str, limit: int, seconds: float) -> HostFailure:
        count, down, again = self._host_failed(args=[self.prefix, host, limit, seconds])
        return HostFailure(int(count), float(down), bool(again))

    @_transient
    def host_answered(self, host: str) -> None:
        self.redis.hdel(self.prefix + "fails", host)

    @_transient
    def failing_hosts(self) -> list[str]:
        return [h.decode() for h in self.redis.hkeys(self.prefix + "fails")]

    @_transient
    def pause_host(self, host: str, seconds: float) -> None:
        self._pause_host(args=[self.prefix, host, seconds])

    @_transient
    def back_off(self, host: str, sent_ago: float, base: float, cap: float) -> float:
        return float(self._back_off(args=[self.prefix, host, sent_ago, base, cap, BACK_OFF_KEEP]))

    @_transient
    def end_back_off(self, host: str, sent_ago: float) -> bool:
        return bool(self._end_back_off(args=[self.prefix, host, sent_ago]))

    @_transient
    def enter_host(self, host: str, token: str, limit: int, hold: float) -> int:
        return int(self._enter_host(args=[self.prefix, host, token, limit, hold, self.turn_seconds]))

    @_transient
    def leave_host(self, host: str, token: str) -> None:
        pipe = self.redis.pipeline(transaction=False)
        for kind in ("hx", "hw", "hwt"):  # its place, or its turn in the line
            pipe.zrem(f"{self.prefix}{kind}:{host}", token)
        pipe.execute()

    @_transient
    def hold_hosts(self, places: Sequence[tuple[str, str]], hold: float) -> None:
        if places:
            self._hold_hosts(args=[self.prefix, hold, *(v for place in places for v in place)])

    @_transient
    def robots(self, netloc: str) -> bytes | None:
        return self.redis.get(f"{self.prefix}rb:{netloc}")

    @_transient
    def keep_robots(self, netloc: str, blob: bytes, ttl: float) -> None:
        self.redis.set(f"{self.prefix}rb:{netloc}", blob, px=max(int(ttl * 1000), 1))

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
    def learn(
        self, observations: Sequence[tuple[str, float]], links: Sequence[tuple[str, float, int, int]] = ()
    ) -> None:
        sums: dict[str, list[float]] = {}
        for host, score in observations:
            total = sums.setdefault(host, [0.0, 0])
            total[0] += score
            total[1] += 1
        evidence = link_rows(links)
        if not sums and not evidence:
            return
        feed = json.dumps([[h, float(sc), int(n)] for h, (sc, n) in sums.items()], separators=(",", ":"))
        told = json.dumps([[h, ls, n, m] for h, (ls, n, m) in evidence.items()], separators=(",", ":"))
        args: list[Any] = [
            self.prefix, self.host_weight, self.score_half, self.owner, feed, LEARNT_KEEP,
            told if evidence else "", len(sums),
        ]
        for host, (score, pages) in sums.items():
            args += [host, repr(float(score)), int(pages)]
        for host, (log_sum, n, mask) in evidence.items():
            args += [host, repr(log_sum), n, mask >> 32, mask & 0xFFFFFFFF]
        self._learn(args=args)

    @_transient
    def rescore(self, estimates: Sequence[tuple[str, float]]) -> int:
        args: list[Any] = [self.prefix, self.host_weight, self.score_half]
        for host, value in estimates:
            if math.isfinite(value):
                args += [host, repr(float(value))]
        return int(self._rescore(args=args)) if len(args) > 3 else 0

    @_transient
    def learnt(self, since: str | None) -> tuple[str, list[Learnt]]:
        """At first, every host's totals (``ys``/``yn``, ``le``) and the
        ``learnt`` stream's last id, read in one transaction; then the stream's entries
        after the cursor written by other owners, a batch each (at most ``LEARNT_READ``
        a call; the next call goes on). A worker that falls more than ``LEARNT_KEEP``
        entries behind misses those. An entry that is not of the expected shape is
        skipped."""
        key = self.prefix + "learnt"
        if since is None:
            pipe = self.redis.pipeline(transaction=True)
            pipe.xrevrange(key, count=1)
            for name in ("ys", "yn", "le"):
                pipe.hgetall(self.prefix + name)
            last, sums, pages, evidence = pipe.execute()
            cursor = last[0][0].decode() if last else "0-0"
            batch = Learnt(
                [(h.decode(), float(sums.get(h, 0.0)), int(n)) for h, n in pages.items() if int(n) > 0],
                [row for row in (_link_row(h, v) for h, v in evidence.items()) if row is not None],
            )
            return cursor, [batch] if batch.pages or batch.links else []
        read = self.redis.xread({key: since}, count=LEARNT_READ)
        batches: list[Learnt] = []
        cursor = since
        for _, entries in read:
            for entry_id, fields in entries:
                cursor = entry_id.decode()
                if fields.get(b"o", b"").decode() == self.owner:
                    continue
                try:
                    rows = [(str(h), float(sc), int(n)) for h, sc, n in json.loads(fields.get(b"d", b"[]"))]
                    found = link_rows(json.loads(fields.get(b"l", b"[]")))
                except (ValueError, TypeError):
                    continue  # not ours to crash on: an entry written by something else
                batches.append(Learnt(rows, [(h, ls, n, m) for h, (ls, n, m) in found.items()]))
        return cursor, batches

    @_transient
    def counts(self) -> Counts:
        pipe = self.redis.pipeline(transaction=True)
        pipe.hgetall(self.prefix + "n")
        pipe.hlen(self.prefix + "tr")
        raw, retrying = pipe.execute()
        get = lambda k: int(raw.get(k.encode(), 0))  # noqa: E731
        return Counts(queued=get("q"), leased=get("l"), done=get("d"), retrying=int(retrying))

    @_transient
    def hosts(self, limit: int = 50) -> list[HostState]:
        flat = [x.decode() if isinstance(x, bytes) else str(x) for x in self._hosts(args=[self.prefix])]
        out = []
        for i in range(0, len(flat), 9):
            host, seen, done, leased, best, nxt, delay, ys, yn = flat[i : i + 9]
            queued = int(seen) - int(done) - int(leased)
            mean = float(ys) / int(yn) if yn and int(yn) else None
            out.append(HostState(host, queued, int(leased), int(done), float(best) if best else None,
                                 float(nxt or 0), float(delay) if delay else None, mean))
        out.sort(key=lambda h: (-h.queued, h.host))
        out = out[:limit]
        if out:  # places held and requests in line, counted as Redis' clock has them
            seconds, micros = self.redis.time()
            now = seconds + micros / 1e6
            pipe = self.redis.pipeline(transaction=False)
            for h in out:
                pipe.zcount(f"{self.prefix}hx:{h.host}", f"({now}", "+inf")
                pipe.zcount(f"{self.prefix}hwt:{h.host}", f"({now}", "+inf")
            counted = pipe.execute()
            for i, h in enumerate(out):
                h.downloading, h.waiting = counted[2 * i], counted[2 * i + 1]
        return out

    @_transient
    def top(self, n: int = 20) -> list[Entry]:
        if n <= 0:
            return []
        best = self.codec.entries(self._top(args=[self.prefix, n, max(n, 50)]))
        best.sort(key=lambda e: -e.priority)
        return best[:n]

    @_transient
    def take_start_urls(self, key: str, limit: int = 100) -> list[str]:
        """Pop seeds a user pushed to the scrapy-redis start-URLs list (``LPUSH key URL``)."""
        raw = self.redis.lpop(key, limit) or []
        return [r.decode("utf-8", "replace") for r in raw]

    @_transient
    def record_setup(self, setup: dict[str, str]) -> dict[str, str]:
        pipe = self.redis.pipeline(transaction=True)
        pipe.hgetall(self.prefix + "setup")
        if setup:
            pipe.hset(self.prefix + "setup", mapping=setup)
        before = pipe.execute()[0]
        return {k.decode(): v.decode() for k, v in before.items()}

    @_transient
    def request_stop(self) -> None:
        self.redis.set(self.prefix + "stop", time.time())

    @_transient
    def stop_requested(self) -> bool:
        return bool(self.redis.exists(self.prefix + "stop"))

    @_transient
    def clear_stop(self) -> None:
        self.redis.delete(self.prefix + "stop")

    @_transient
    def heartbeat(self) -> int:
        """Owners that beat within ``ALIVE_SECONDS`` on this owner's ``machine``."""
        return int(self._heartbeat(args=[self.prefix, self.owner, self.machine, ALIVE_SECONDS]))

    @_transient
    def workers(self) -> list[Worker]:
        """The owners in ``alive`` (silent for an hour at most), longest silent last;
        alive: a heartbeat within ``ALIVE_SECONDS``."""
        flat = [x.decode() for x in self._workers(args=[self.prefix])]
        found = [
            Worker(flat[i], flat[i + 2], max(float(flat[i + 1]), 0.0), float(flat[i + 1]) <= ALIVE_SECONDS)
            for i in range(0, len(flat), 3)
        ]
        return sorted(found, key=lambda w: (w.silent_seconds, w.owner))

    def close(self) -> None:
        try:
            self.redis.hdel(self.prefix + "alive", self.owner)
        except (redis.RedisError, OSError):
            pass  # unreachable: the entry goes stale by itself
        self.redis.close()
