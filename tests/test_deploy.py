"""The systemd units (one process; one of several workers) pass `systemd-analyze verify` where systemd is
installed."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

UNIT = Path(__file__).resolve().parent.parent / "deploy" / "systemd" / "mnemo.service"
WORKER = UNIT.with_name("mnemo@.service")


@pytest.mark.parametrize("unit", [UNIT, WORKER], ids=["single", "worker"])
def test_unit_has_the_promised_settings(unit: Path) -> None:
    text = unit.read_text()
    for line in ("User=mnemo", "EnvironmentFile=/etc/mnemo/mnemo.env", "Restart=on-failure",
                 "ProtectSystem=strict", "NoNewPrivileges=yes", "PrivateTmp=yes"):
        assert line in text.splitlines(), line
    assert ("StateDirectory=mnemo" if unit == UNIT else "StateDirectory=mnemo/worker-%i") in text.splitlines()


def test_a_worker_takes_its_port_name_and_data_directory_from_the_instance() -> None:
    start = next(line for line in WORKER.read_text().splitlines() if line.startswith("ExecStart="))
    for part in ("MNEMO_TELEGRAM_WEBHOOK_PORT=%i", "MNEMO_WORKER_NAME=%H-%i",
                 "MNEMO_DATA_DIR=/var/lib/mnemo/worker-%i"):
        assert part in start.split(), part


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
@pytest.mark.parametrize(("source", "name"), [(UNIT, "mnemo.service"), (WORKER, "mnemo@8441.service")],
                         ids=["single", "worker"])
def test_unit_verifies(tmp_path: Path, source: Path, name: str) -> None:
    # The program itself is installed under /opt/mnemo on a server; verify everything else here.
    unit = tmp_path / name
    unit.write_text(source.read_text().replace("/opt/mnemo/.venv/bin/mnemo", "/bin/true"))
    result = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
