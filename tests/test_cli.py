"""The mnemo command: configuration errors are one sentence, undo works from the shell."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.cli import main
from memory.embedder import make_embedder
from memory.store import MemoryStore


def test_a_wrong_setting_is_one_sentence_and_exit_code_2(monkeypatch: pytest.MonkeyPatch, capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MNEMO_TIMEZONE", "Mars/Olympus")
    monkeypatch.setenv("MNEMO_DATA_DIR", str(tmp_path))
    assert main(["--env-file", str(tmp_path / "none.env"), "console"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("mnemo: MNEMO_TIMEZONE is not valid") and "\n" not in err


def test_undo_from_the_shell_restores_a_forgotten_note(monkeypatch: pytest.MonkeyPatch, capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MNEMO_DATA_DIR", str(tmp_path))

    async def forget() -> int:
        async with await MemoryStore.open(tmp_path, make_embedder()) as store:
            scope = await store.scope("mnemo", "tg:42")
            note = (await store.notes.add(scope, "Anna mag Tee")).note
            await store.notes.delete(scope, note.id)
            return note.id

    note_id = asyncio.run(forget())
    assert main(["--env-file", str(tmp_path / "none.env"), "undo", "--user", "tg:42"]) == 0
    assert f"undone: delete note #{note_id}" in capsys.readouterr().out

    async def texts() -> list[str]:
        async with await MemoryStore.open(tmp_path, make_embedder()) as store:
            scope = await store.scope("mnemo", "tg:42")
            return [n.text for n in await store.notes.list(scope)]

    assert asyncio.run(texts()) == ["Anna mag Tee"]
