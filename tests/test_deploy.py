"""The systemd unit passes `systemd-analyze verify` where systemd is installed."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

UNIT = Path(__file__).resolve().parent.parent / "deploy" / "systemd" / "mnemo.service"


def test_unit_has_the_promised_settings() -> None:
    text = UNIT.read_text()
    for line in ("User=mnemo", "StateDirectory=mnemo", "EnvironmentFile=/etc/mnemo/mnemo.env", "Restart=on-failure",
                 "ProtectSystem=strict", "NoNewPrivileges=yes", "PrivateTmp=yes"):
        assert line in text.splitlines(), line


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_unit_verifies(tmp_path: Path) -> None:
    # The program itself is installed under /opt/mnemo on a server; verify everything else here.
    unit = tmp_path / "mnemo.service"
    unit.write_text(UNIT.read_text().replace("/opt/mnemo/.venv/bin/mnemo", "/bin/true"))
    result = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
