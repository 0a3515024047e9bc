"""Debian's Chromium, headless, for tests that look at a page as a browser shows it.

``dump_dom`` runs the page's scripts for ``wait_ms`` of virtual time (timers and
fetches included) and returns the DOM they left; ``screenshot`` saves it as PNG. No
proxy, no background traffic (updates, sync, metrics): only the page's own requests.
tests/run.sh installs the ``chromium`` package when it is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
    "--disable-default-apps", "--metrics-recording-only", "--mute-audio", "--hide-scrollbars", "--no-proxy-server",
)


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise RuntimeError("Chromium not found: install Debian's chromium package (tests/run.sh does)")


def _run(url: str, *args: str, wait_ms: int, timeout: float) -> str:
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    with tempfile.TemporaryDirectory(prefix="spitag-chromium-") as profile:
        done = subprocess.run(
            [chromium(), *FLAGS, f"--user-data-dir={profile}", f"--virtual-time-budget={wait_ms}", *args, url],
            capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL,
        )
    if done.returncode != 0:
        raise RuntimeError(f"chromium exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def dump_dom(url: str, wait_ms: int = 3000, timeout: float = 90) -> str:
    return _run(url, "--dump-dom", wait_ms=wait_ms, timeout=timeout)


def screenshot(url: str, path: Path, width: int = 1200, height: int = 1400, wait_ms: int = 3000,
               timeout: float = 90) -> Path:
    _run(url, f"--screenshot={path}", f"--window-size={width},{height}", wait_ms=wait_ms, timeout=timeout)
    return path
