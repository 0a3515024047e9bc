"""The settings' promises: every ``SPITAG_*`` setting may be set by an environment
variable of its name (``-s`` still wins), and the README's table names them all."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import settings as project_settings

REPO = Path(__file__).resolve().parents[1]
NAMES = sorted(n for n in vars(project_settings) if n.startswith("SPITAG_"))


def test_every_setting_can_come_from_the_environment() -> None:
    env = {**os.environ, **{name: f"from-env-{name}" for name in NAMES}, "SPITAG_LOG_LEVEL": "WARNING"}
    code = "import json, settings; print(json.dumps({n: str(getattr(settings, n)) for n in NAMES}))"
    read = subprocess.run(
        [sys.executable, "-c", code.replace("NAMES", repr([*NAMES, "LOG_LEVEL"]))],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
    )
    assert read.returncode == 0, read.stderr
    values = json.loads(read.stdout)
    assert {n: v for n, v in values.items() if v != f"from-env-{n}" and n != "LOG_LEVEL"} == {}
    assert values["LOG_LEVEL"] == "WARNING"


def test_the_readme_table_lists_every_setting() -> None:
    readme = (REPO / "README.md").read_text()
    table = readme[readme.index("## Settings"):]
    table = table[: table.index("\n## ", 1)]
    documented = set(re.findall(r"`(SPITAG_[A-Z_]+)`", table))
    assert sorted(set(NAMES) - documented) == []
    assert sorted(documented - set(NAMES) - {"SPITAG_LOG_LEVEL"}) == []
