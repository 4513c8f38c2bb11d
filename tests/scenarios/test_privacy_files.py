"""File modes: the data folder is 0700 and every file mnemo writes there 0600, new or left by an older version."""
from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.llm.writer import LLMWriter
from memory.storage.backup import backup, backup_name
from memory.store import MemoryStore
from scheduler.service import Scheduler
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.llm import ScriptedLLM


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def modes(folder: Path) -> dict[str, int]:
    """Every folder and file under folder (itself as '.') with its permission bits."""
    found = {".": mode(folder)}
    found.update({str(p.relative_to(folder)): mode(p) for p in folder.rglob("*")})
    return found


async def run_mnemo_once(data: Path) -> None:
    """A message answered and learned from, a backup, and the scheduler started and stopped."""
    async with await MemoryStore.open(data, FakeEmbedder()) as store:
        background = ScriptedLLM("background")
        background.responder = lambda call: '{"facts": [], "content": [], "profile": []}'
        engine = Engine(store, ScriptedLLM("chat"), background, EngineConfig())
        await engine.handle(Incoming("tg:1", "Hallo, ich bin Anna."))
        await engine.drain()
        await backup(store.db, backup_name(data / "backups"))
        scheduler = Scheduler(store, "mnemo", LLMWriter(background), engine, None,  # type: ignore[arg-type]
                              ZoneInfo("Europe/Berlin"), data)
        await scheduler.start()
        await scheduler.stop()
        assert {"mnemo.sqlite3-wal", "mnemo.sqlite3-shm"} <= {p.name for p in data.iterdir()}
        seen = modes(data)  # while the database is open: with its write-ahead log and shared memory
        await engine.close()
    assert seen == {**{name: 0o600 for name in seen}, ".": 0o700, "backups": 0o700}, seen


async def test_a_new_data_folder_and_every_file_in_it_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)  # the usual umask, under which SQLite makes files readable by everyone
    try:
        await run_mnemo_once(tmp_path / "data")
    finally:
        os.umask(old)
    names = set(modes(tmp_path / "data"))
    assert {"mnemo.sqlite3", "jobs.sqlite3", "backups"} <= names and any(n.startswith("backups/mnemo-") for n in names)


async def test_files_an_older_version_left_readable_are_tightened_at_start_with_one_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    data = tmp_path / "data"
    await run_mnemo_once(data)
    for path in [data, *data.rglob("*")]:  # as version 0.x left them
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    (data / "notes.txt").write_text("not mnemo's")
    os.chmod(data / "notes.txt", 0o644)

    with caplog.at_level(logging.WARNING, logger="memory.storage.db"):
        async with await MemoryStore.open(data, FakeEmbedder()):
            pass
    lines = [r.getMessage() for r in caplog.records if r.name == "memory.storage.db"]
    assert len(lines) == 1 and "private" in lines[0] and "jobs.sqlite3" in lines[0], lines
    theirs = {name: m for name, m in modes(data).items() if name != "notes.txt"}
    assert theirs == {**{name: 0o600 for name in theirs}, ".": 0o700, "backups": 0o700}
    assert mode(data / "notes.txt") == 0o644, "a file mnemo did not write is left as it is"
