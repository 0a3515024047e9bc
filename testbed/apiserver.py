"""``scrapy serve`` in a process of its own, on 127.0.0.1 and a free port, for the tests
and benchmarks of the web service: started, waited for until it answers, stopped.

Its environment has no ``SPITAG_*`` variable of the developer's and no proxy: it
reads exactly the store and frontier it is given, and its clients reach it directly.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from testbed.redisserver import free_port

REPO = Path(__file__).resolve().parents[1]  # where scrapy.cfg is
PROXY_VARIABLES = ("http_proxy", "https_proxy", "no_proxy", "all_proxy")


class ApiServer:
    """``base`` is its address (``http://127.0.0.1:PORT``); its log goes to ``log``."""

    def __init__(self, store: str, frontier: str, log: Path, *, settings: Mapping[str, str] | None = None,
                 args: Sequence[str] = (), timeout: float = 60.0) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = log
        cmd = [sys.executable, "-m", "scrapy", "serve", *args, "-s", f"SPITAG_STORE={store}",
               "-s", f"SPITAG_FRONTIER={frontier}", "-s", f"SPITAG_SERVE=127.0.0.1:{self.port}"]
        for name, value in (settings or {}).items():
            cmd += ["-s", f"{name}={value}"]
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("SPITAG_") and k.lower() not in PROXY_VARIABLES}
        self.proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=log.open("wb"))
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(self.base + "/openapi.json", timeout=5).read()
                return
            except (urllib.error.URLError, ConnectionError):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"scrapy serve did not start: {log.read_text()[-3000:]}") from None
                time.sleep(0.2)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
