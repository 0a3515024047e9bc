"""Who holds a lease, and whether that process is known to be gone.

An owner is ``host:pid:space:start:random``. ``space`` names the process table the pid
belongs to: a hash of the kernel's boot id and the pid namespace (``/proc/self/ns/pid``).
``start`` is the process' start time (clock ticks since boot, ``/proc/<pid>/stat``), so
that a pid used again by a new process is not taken for the old one. ``random`` tells
apart two frontiers opened by one process.

A worker can judge an owner only when both live in the same process table. Containers
that share a host name (``--network host``) each have a pid namespace of their own, so
a pid missing here may be a live worker there: such an owner is never judged gone. Nor
is an owner written by an older SpiTag (``host:pid:random``), whose process table is
unknown. Their leases come back when their heartbeat stops (Redis) or they expire.
Without ``/proc`` (not Linux) the space is the host name's and the start unknown: the
pid alone is checked.
"""

from __future__ import annotations

import hashlib
import os
import socket
import uuid
from functools import cache
from pathlib import Path

PROC = Path("/proc")


def _hash(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:8]


@cache
def this_space() -> str:
    """The process table of this process, as a short hash: kernel boot and pid namespace."""
    try:
        boot = (PROC / "sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink(PROC / "self/ns/pid")
    except OSError:
        return "h" + _hash(socket.gethostname())  # no /proc: one process table per host
    return _hash(f"{boot} {namespace}")


def started(pid: int) -> str | None:
    """When process ``pid`` of this process table started (clock ticks since boot),
    ``""`` where that cannot be read, ``None`` when there is no such process, or only
    its zombie (killed, not yet reaped by its parent: it runs nothing)."""
    if not PROC.joinpath("self").exists():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except (PermissionError, OverflowError):
            pass
        return ""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except FileNotFoundError:
        return None
    except OSError:
        return ""
    fields = stat.rsplit(")", 1)[-1].split()  # after the command name, which may hold spaces
    if fields and fields[0] in ("Z", "X"):  # field 3: state, zombie or dead
        return None
    return fields[19] if len(fields) > 19 else ""  # field 22: starttime


def new_owner() -> str:
    """``host:pid:space:start:random`` for this process (see the module docstring)."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{this_space()}:{started(pid) or ''}:{uuid.uuid4().hex[:8]}"


def host_of(owner: str) -> str:
    """The host name an owner was made on; an owner string of another form is a
    host of its own."""
    parts = owner.split(":")
    return parts[0] if len(parts) in (3, 5) else owner


def short_name(owner: str) -> str:
    """``host:pid`` of an owner, for people; an owner string of another form as it is."""
    parts = owner.split(":")
    return ":".join(parts[:2]) if len(parts) in (3, 5) else owner


def is_gone(owner: str) -> bool:
    """The process that made ``owner`` is known to have ended: it belonged to this
    process table and its pid is gone, or now names a process started at another time.
    Any owner that cannot be judged here is taken as alive."""
    parts = owner.split(":")
    if len(parts) != 5 or parts[2] != this_space() or not parts[1].isdigit():
        return False
    now = started(int(parts[1]))
    if now is None:
        return True
    return bool(parts[3] and now and now != parts[3])
