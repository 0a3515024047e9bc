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
  ``parent_score`` ``~``: the parent, its score, the note and revisit data are in ``x:<host>``.
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
* ``x:<host>`` hash — member → JSON ``{"p": parent, "s": its score, "n": note, "v":
  revisit}`` of the URLs whose record does not fit the compact one (a revived URL, a note);
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
  host is learnt; ``hx:<host>`` sorted set — the places
  among the host's downloads at once that the workers hold (``HostGate.enter``, ``enter_host.lua``: token →
  expiry; at most ``CONCURRENT_REQUESTS_PER_DOMAIN``; renewed while the download runs,
  so a dead worker's places free themselves, and a starting worker frees those of
  workers not alive, ``recover``; the key expires with its last place);
  ``hw:<host>`` / ``hwt:<host>`` sorted sets — the host's line of requests waiting for
  a place (token → when it first asked; token → when it is dropped unless it asks
  again): a free place goes to the longest waiting first, whichever worker frees it;
  ``down`` hash — host → until when it is down (``HostGate.set_down``: it stopped
  answering), its queued URLs not counted by ``has_work``; ``fails`` hash — host →
  ``<failures in a row>|<1 if set down before>`` (``HostGate.failed``, every worker's
  failures counted together; ``HostGate.answered`` deletes the field, a new run the hash);
  ``pz:<host>`` string — until when the host asked to be left alone (``HostGate.pause``,
  Retry-After; ``back_off``), expiring then; ``bo:<host>`` hash — ``n``, the host's
  refusals without Retry-After in a row, and ``end``, when the last back-off ends
  (``back_off``), expiring ``BACK_OFF_KEEP`` seconds after that;
  ``rb:<host[:port]>`` string — the host's robots.txt as fetched by a worker
  (``RobotsCache.keep``, zlib-compressed), expiring after ``SPITAG_ROBOTS_TTL``;
  ``learnt`` stream — the same, one entry per ``learn`` call (``o`` its owner, ``d`` a
  JSON list of [host, score sum, pages], ``l`` one of [host, log sum, links, mask] if
  any), trimmed to about ``LEARNT_KEEP`` entries: what each worker's strategy reads
  of the other workers' pages and links (``learnt``);
* ``alive`` hash — owner → ``<time> <machine>``, its last heartbeat (every second) and
  its machine (``spitag.machine``): how many workers share a machine; an owner silent
  for an hour is dropped, a closing one removes itself; a starting worker takes back the
  leases of every owner not alive (``recover``);
* ``cfg`` hash — ``layout`` and the crawl's host ranking the scripts read (``mode``,
  ``k``, ``w``, ``half``, ``prior``: ``spitag.ranking``), written by every crawl worker at open;
* ``leases`` sorted set — ``host<TAB>member`` by expiry; ``lo`` hash — its
  ``owner|priority code``; ``tr`` hash — the same key → its failed downloads, while
  it waits to be tried again (``retry_later``; deleted at its ack or when its retries
  are used up); ``n`` hash — queued / leased / done counters (and ``r``, the
  number of pushes that summed priorities); ``stop`` — set by ``scrapy stop``;
  ``setup`` hash — the strategy and seeds digest the last worker started with
  (``record_setup``).

Every operation is one Lua script (``lua/``), atomic: push-or-raise, pop-and-lease, ack,
release, renew, retry-later, reap, recover, revive, mark-done, learn, top, hosts (``learnt``
reads: one MULTI of reads at first, then XREAD). Times are Redis' own clock
(``TIME``), so workers on machines whose clocks differ still agree on leases and
politeness. A crawl written by another layout is refused at open (``BadInputError``):
layout 2 differed only in storing priorities as doubles and a ``|`` before the parent's
fingerprint.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import redis

from spitag.errors import BackendUnavailableError, BadInputError, FrontierUnavailableError
from spitag.frontier.records import Entry, Limits, Politeness
from spitag.frontier.redis.scripts import source
from spitag.ranking import HostRanking
from spitag.urls import redact

LAYOUT = "3"
ALIVE_SECONDS = 10  # a worker whose heartbeat (every second) is older is not counted
TRANSIENT = (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError, OSError)


class RedisDB:
    """The connection, the crawl's key prefix and what the five contracts share."""

    def __init__(self, url: str, crawl: str, owner: str, *, lease_seconds: float, politeness: Politeness,
                 ranking: HostRanking | None, machine: str | None, limits: Limits) -> None:
        from spitag.frontier.owners import host_of

        self.url = url
        self.crawl = crawl
        self.owner = owner
        self.lease_seconds = lease_seconds
        self.politeness = politeness
        self.limits = limits
        self.machine = machine or host_of(owner)  # whose CPUs this owner shares
        self.prefix = f"spitag:{crawl}:"
        self.redis = connect(url)
        self._scripts: dict[str, Any] = {}
        params = [v for pair in ranking.params().items() for v in pair] if ranking is not None else []
        try:
            layout = self.redis.eval(source("open"), 0, self.prefix, LAYOUT, *params)
        except (redis.RedisError, OSError) as exc:
            raise BackendUnavailableError(f"frontier {redact(url)}: Redis unreachable: {redact(str(exc))}") from None
        layout = layout.decode() if isinstance(layout, bytes) else str(layout)
        if layout != LAYOUT:
            raise BadInputError(
                f"frontier {redact(url)}: crawl {crawl!r} was written by an earlier SpiTag (Redis key "
                f"layout {layout}, this one reads layout {LAYOUT}): finish it with that version, or "
                f"start a new crawl name (its keys are spitag:{crawl}:*)"
            )

    def run(self, name: str, *args: Any) -> Any:
        """Run script ``name`` (``lua/<name>.lua``) with the crawl's prefix and ``args``."""
        script = self._scripts.get(name)
        if script is None:
            script = self._scripts[name] = self.redis.register_script(source(name))
        return script(args=[self.prefix, *args])

    def unavailable(self, exc: BaseException) -> FrontierUnavailableError:
        return FrontierUnavailableError(f"frontier {redact(self.url)}: Redis unavailable: {redact(str(exc))}")

    def close(self) -> None:
        try:
            self.redis.hdel(self.prefix + "alive", self.owner)
        except (redis.RedisError, OSError):
            pass  # unreachable: the entry goes stale by itself
        self.redis.close()


def transient(method: Any) -> Any:
    """Turn a lost connection into FrontierUnavailableError: callers ride the outage out."""

    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except TRANSIENT as exc:
            raise self.db.unavailable(exc) from None

    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return wrapper


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


# -- URLs and records -------------------------------------------------------------------
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


def lease_key(url: str) -> str:
    host, member = encode_member(url)
    return f"{host}\t{member}"


# Priorities in the zsets: integer codes, round(ln(p) · PRIORITY_SCALE) for p > 0,
# PRIORITY_ZERO for 0, PRIORITY_NEG − round(ln(−p) · PRIORITY_SCALE) for p < 0 (the Lua
# ``enc``/``dec`` of common.lua; Lua encodes, since sums are combined inside the scripts).
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


MAX_RECORD = 60  # a record longer than the listpack value limit (64) would bloat its bucket


def _number(value: float) -> str:
    return repr(float(value)).removesuffix(".0")


def entry_args(e: Entry, revisit: dict[str, Any] | None = None) -> list[Any]:
    """An entry as the scripts' 8-tuple: host, member, priority, depth, parent score,
    parent host, parent member, side JSON (what the compact record cannot say). The
    priority goes in as a float's text (the scripts encode it)."""
    host, member = encode_member(e.url)
    head = [host, member, repr(float(e.priority)), str(int(e.depth))]
    compact = _compact(e) if not revisit and not e.note else None
    if compact is None:
        side = {"p": e.parent, "s": e.parent_score, "n": e.note, "v": revisit}
        return head + ["", "", "", json.dumps({k: v for k, v in side.items() if v is not None},
                                              separators=(",", ":"), default=str)]
    return head + [*compact, ""]


def _compact(e: Entry) -> tuple[str, str, str] | None:
    """(parent score, parent host, parent member), or None when the parent does not
    come back exactly from them (then the side hash keeps it)."""
    score, parent = e.parent_score, e.parent
    if score is None and parent is None:
        return "", "", ""
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score)):
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
    if len(str(e.depth)) + len(text) + 2 + 16 > MAX_RECORD:
        return None
    return text, phost, pmember


def entries(flat: Sequence[Any]) -> list[Entry]:
    """Entries from the scripts' 8-tuples (the priority an integer code)."""
    out = []
    for i in range(0, len(flat), 8):
        host, member, prio, depth, score, phost, pmember, side = (
            x.decode() if isinstance(x, bytes) else str(x) for x in flat[i : i + 8]
        )
        e = Entry(decode_member(host, member), host, int(depth or 0), decode_priority(prio))
        if score == "~":
            data = json.loads(side) if side else {}
            if "r" in data:  # written by an earlier SpiTag: {"r": reason, "v": revisit}
                e = Entry.from_about(e.url, host, e.depth, e.priority, data.get("r"), data.get("v"))
            else:
                e.parent, e.parent_score, e.note, e.revisit = data.get("p"), data.get("s"), data.get("n"), data.get("v")
        else:
            e.parent = decode_member(phost, pmember) if pmember else None
            e.parent_score = float(score) if score else None
        out.append(e)
    return out
