"""Which workers share CPUs (spitag.machine): the boot id of one kernel, unless the
process has CPUs of its own (a cgroup quota) or the setting names the machine."""

from __future__ import annotations

import socket
from pathlib import Path

from spitag.machine import has_cpu_quota, this_machine


def _files(tmp_path: Path, boot: str | None, v2: str | None = None, v1: str | None = None):
    boot_id = tmp_path / "boot_id"
    if boot is not None:
        boot_id.write_text(boot + "\n")
    quotas = []
    for name, text in (("cpu.max", v2), ("cpu.cfs_quota_us", v1)):
        path = tmp_path / name
        if text is not None:
            path.write_text(text + "\n")
        quotas.append(path)
    return boot_id, tuple(quotas)


def test_containers_of_one_kernel_are_one_machine(tmp_path: Path) -> None:
    boot_id, quotas = _files(tmp_path, "64c5b73c-64e3-409a-bbed-c791fe90df8c", v2="max 100000")
    assert this_machine(None, boot_id, quotas) == "boot:64c5b73c-64e3-409a-bbed-c791fe90df8c"
    v1 = tmp_path / "v1"
    v1.mkdir()
    boot_id, quotas = _files(v1, "k2", v1="-1")  # cgroup v1, no quota
    assert this_machine("", boot_id, quotas) == "boot:k2"


def test_a_process_with_a_cpu_quota_is_a_machine_of_its_own(tmp_path: Path) -> None:
    for v2, v1 in (("200000 100000", None), (None, "50000")):
        folder = tmp_path / f"{v2}-{v1}".replace(" ", "_")
        folder.mkdir()
        boot_id, quotas = _files(folder, "k1", v2=v2, v1=v1)
        assert has_cpu_quota(quotas)
        assert this_machine(None, boot_id, quotas) == socket.gethostname()


def test_the_setting_names_the_machine_and_no_boot_id_means_the_host_name(tmp_path: Path) -> None:
    boot_id, quotas = _files(tmp_path, "k1")
    assert not has_cpu_quota(quotas)  # no cgroup files: no quota
    assert this_machine("  rack7-node3 ", boot_id, quotas) == "rack7-node3"
    outside_linux = tmp_path / "no-proc"
    outside_linux.mkdir()
    missing, quotas = _files(outside_linux, None)
    assert this_machine(None, missing, quotas) == socket.gethostname()
