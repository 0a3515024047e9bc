"""Which workers of a crawl share CPUs: the name of this worker's machine.

Workers that share a machine share its profile backlog (``spitag.pace``), so the name
must be equal exactly for workers that compete for the same CPUs. The host name is not
that: containers on one kernel (``docker compose up --scale worker=4``) each have their
own host name and share every CPU. So the default is the kernel's boot id, the same in
every container of one kernel and different on every other machine or VM, unless this
process has CPUs of its own — a CPU quota of its control group (a Kubernetes limit,
``docker run --cpus``) — when it is a machine of its own: its host name. Outside Linux
(no boot id) it is the host name too. ``SPITAG_MACHINE`` names the machine outright.
"""

from __future__ import annotations

import socket
from pathlib import Path

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
CPU_QUOTAS = (
    Path("/sys/fs/cgroup/cpu.max"),  # cgroup v2: "max 100000", or "<quota> <period>"
    Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),  # cgroup v1: -1, or the quota
)


def has_cpu_quota(files: tuple[Path, ...] = CPU_QUOTAS) -> bool:
    """This process' control group may use only part of the machine's CPUs."""
    for path in files:
        try:
            quota = path.read_text().split()[0]
        except (OSError, IndexError):
            continue
        return quota not in ("max", "-1")
    return False


def this_machine(setting: str | None = None, boot_id: Path = BOOT_ID,
                 quotas: tuple[Path, ...] = CPU_QUOTAS) -> str:
    """The machine's name: ``setting`` (``SPITAG_MACHINE``) when given; else the host
    name for a process with a CPU quota; else the kernel's boot id; else the host name."""
    if setting and setting.strip():
        return setting.strip()
    if not has_cpu_quota(quotas):
        try:
            boot = boot_id.read_text().strip()
        except OSError:
            boot = ""
        if boot:
            return f"boot:{boot}"
    return socket.gethostname()
