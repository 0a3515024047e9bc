"""Run a Python command in this process under cProfile, every thread profiled.

    python bench/throughput_profile.py OUT.pstats -m scrapy crawl spitag …
    python bench/throughput_profile.py OUT.pstats bench/throughput_crawl.py a http://…

The main thread and every thread started afterwards (SpiTag's store writer, Twisted's
thread pool…) get a ``cProfile.Profile`` each; at exit the main thread's goes to
``OUT.pstats``, the other threads' merged to ``OUT.threads.pstats``, and each thread's
profiled seconds to ``OUT.threads.json``. Timer:
``time.perf_counter`` (wall time per thread: a thread's waits show as the time of
the call that waits — ``epoll.poll`` in the reactor thread, ``Queue.get`` and lock
waits in pool threads).
"""

from __future__ import annotations

import cProfile
import json
import os
import pstats
import runpy
import sys
import threading
import time

PROFILES: list[tuple[str, cProfile.Profile, float]] = []
_lock = threading.Lock()


def _thread_hook(frame, event, arg):  # noqa: ANN001 — a sys.setprofile hook
    """First call in a new thread: replace this hook by a profiler of the thread's own."""
    sys.setprofile(None)
    prof = cProfile.Profile()
    with _lock:
        PROFILES.append((threading.current_thread().name, prof, time.thread_time()))
    prof.enable()


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    out = sys.argv[1]
    command = sys.argv[2:]
    main_prof = cProfile.Profile()
    PROFILES.append(("MainThread", main_prof, 0.0))
    threading.setprofile(_thread_hook)
    started, cpu0 = time.perf_counter(), time.process_time()
    code = 0
    main_prof.enable()
    try:
        if command[0] == "-m":
            sys.argv = [command[1], *command[2:]]
            runpy.run_module(command[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = command
            runpy.run_path(command[0], run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        main_prof.disable()
        threading.setprofile(None)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu0
        merged: dict[str, pstats.Stats] = {}
        shares = []
        for name, prof, _ in list(PROFILES):
            try:
                one = pstats.Stats(prof)
            except (TypeError, ValueError):  # a profiler that never recorded anything
                continue
            shares.append({"thread": name, "seconds": one.total_tt})
            key = "main" if name == "MainThread" else "threads"
            if key in merged:
                merged[key].add(one)
            else:
                merged[key] = one
        if "main" in merged:
            merged["main"].dump_stats(out)
        if "threads" in merged:
            merged["threads"].dump_stats(out + ".threads.pstats")
        with open(out + ".threads.json", "w") as f:
            json.dump({"wall": wall, "process_cpu": cpu, "threads": shares, "pid": os.getpid()}, f)
    sys.exit(code)


if __name__ == "__main__":
    main()
