"""Scrapy imports every command module (COMMANDS_MODULE) before it installs its asyncio
reactor: none of our modules may import ``twisted.internet.reactor`` at import time,
or every crawl fails with "The installed reactor … does not match"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHECK = """
import importlib, pkgutil, sys
import spitag, spitag.commands, spitag.frontier, pipelines, spiders
for package in (spitag, pipelines, spiders):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(info.name)
print("reactor" if "twisted.internet.reactor" in sys.modules else "clean")
"""


def test_no_module_installs_a_reactor_on_import() -> None:
    run = subprocess.run([sys.executable, "-c", CHECK], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "clean"
