"""Owners of leases: a process known to be gone is one of this process table whose pid
ended or was used again; any other owner is taken as alive. Real processes, no mocks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

from spitag.frontier.owners import host_of, is_gone, new_owner, started, this_space

SHOW_OWNER = "from spitag.frontier.owners import new_owner; print(new_owner(), flush=True)"


def test_a_running_process_is_not_gone_and_one_that_ended_is() -> None:
    assert not is_gone(new_owner())
    proc = subprocess.Popen([sys.executable, "-c", SHOW_OWNER + "; import sys; sys.stdin.read()"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    owner = proc.stdout.readline().strip()
    assert owner.split(":")[1] == str(proc.pid)
    assert not is_gone(owner)  # still running
    proc.kill()
    deadline = time.monotonic() + 10
    while started(proc.pid) is not None:  # a zombie until reaped: gone already
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert is_gone(owner)
    proc.wait(10)
    assert is_gone(owner)


def test_a_pid_used_again_by_a_later_process_is_not_the_same_owner() -> None:
    me = os.getpid()
    host, pid, space, start, tag = new_owner().split(":")
    assert (host, pid, space, start) == (socket.gethostname(), str(me), this_space(), started(me))
    assert start and start.isdigit()
    earlier = ":".join([host, pid, space, str(int(start) - 1), tag])  # this pid, started before us
    assert is_gone(earlier)


def test_an_owner_of_another_process_table_or_form_is_never_judged_gone() -> None:
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True).stdout.strip()
    here = socket.gethostname()
    assert is_gone(f"{here}:{ended}:{this_space()}:1:x")
    assert not is_gone(f"{here}:{ended}:0ther5ce:1:x")  # a container with pids of its own
    assert not is_gone(f"{here}:{ended}:x")  # an owner of an older SpiTag: table unknown
    for odd in ("", "w1", "a:b:c:d:e", f"{here}:-1:{this_space()}:1:x"):
        assert not is_gone(odd)


def test_the_host_of_an_owner() -> None:
    assert host_of(new_owner()) == socket.gethostname()
    assert host_of("box:12:x") == "box"  # older form
    assert host_of("worker-1") == "worker-1"  # any other string is a host of its own
