"""`mnemo safety-check` through the real CLI entry: one message a line in, `1<TAB>text` or `0<TAB>text` out, in order;
with a moderation service set, its yes counts too and its failure is reported on standard error."""
from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from bot.cli import main
from tests.fakes.moderation_api import FakeModeration

LINES = [
    "Ich will nicht mehr leben",
    "Er schlägt mich immer beim Schach.",
    "die Hitze bringt mich um",
    "Heute Nacht mache ich Schluss, die Tabletten liegen bereit.",
    "ich sterbe vor Lachen 😂",
    "",
    "I took all my pills",
]


def run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, lines: list[str]) -> int:
    monkeypatch.setenv("MNEMO_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(f"{line}\n" for line in lines)))
    env = tmp_path / "empty.env"
    env.write_text("", encoding="utf-8")
    return main(["--env-file", str(env), "safety-check"])


def test_each_line_gets_its_verdict_in_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("MNEMO_MODERATION_URL", raising=False)
    assert run(monkeypatch, tmp_path, LINES) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["1\tIch will nicht mehr leben", "0\tEr schlägt mich immer beim Schach.",
                   "0\tdie Hitze bringt mich um",
                   "1\tHeute Nacht mache ich Schluss, die Tabletten liegen bereit.", "0\tich sterbe vor Lachen 😂",
                   "0\t", "1\tI took all my pills"]


async def test_a_moderation_service_adds_its_yes_and_its_failures_are_reported(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    async with FakeModeration(lambda text: "Mittwoch" in text) as service:
        monkeypatch.setenv("MNEMO_MODERATION_URL", service.base_url)
        code = await _in_thread(monkeypatch, tmp_path, ["Am Mittwoch ist alles egal", "Am Donnerstag auch"])
        assert code == 0
        assert capsys.readouterr().out.splitlines() == ["1\tAm Mittwoch ist alles egal", "0\tAm Donnerstag auch"]
        service.status = 503
        code = await _in_thread(monkeypatch, tmp_path, ["Am Mittwoch ist alles egal"])
        captured = capsys.readouterr()
        assert code == 0 and captured.out.splitlines() == ["0\tAm Mittwoch ist alles egal"]
        assert "moderation.error x1" in captured.err


async def _in_thread(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, lines: list[str]) -> int:
    """The CLI runs its own event loop: off this test's loop, which serves the fake."""
    import asyncio

    return await asyncio.to_thread(run, monkeypatch, tmp_path, lines)
