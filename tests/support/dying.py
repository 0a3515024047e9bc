"""Jobs for a ProcessPoolExecutor's worker that kill that worker at a chosen moment
(tests/test_offload.py, tests/test_compat.py)."""

from __future__ import annotations

import os
import signal
import struct
import sys


def die_halfway_through_the_result() -> None:
    """Send the first bytes of a result message, then die (kill -9): the executor's
    reader waits for the rest. The result queue is ``_process_worker``'s argument,
    found on the stack (the worker keeps no other reference to it)."""
    frame = sys._getframe()
    while frame is not None and frame.f_code.co_name != "_process_worker":
        frame = frame.f_back
    assert frame is not None, "not run by a ProcessPoolExecutor worker"
    results = frame.f_locals["result_queue"]
    results._writer._send(struct.pack("!i", 1000) + b"partial")  # a 1,000-byte message, 7 sent
    os.kill(os.getpid(), signal.SIGKILL)
