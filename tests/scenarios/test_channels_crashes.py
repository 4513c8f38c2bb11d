"""Crashes meet commands, buttons and streamed replies on Telegram: a real SIGKILL of the channel, then a replay.

The channel runs in a child process (tests/scenarios/telegram_child.py) against the fake Bot API and is killed
at the moment named by each test; the restart runs in this process on the same database.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
from bot.channels.telegram.messages import face_text
from bot.commands.runner import Commands
from bot.conversation.engine import Engine
from bot.texts import t
from memory.store import MemoryStore
from scheduler.service import Scheduler
from tests.fakes.llm import ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram
from tests.scenarios.telegram_child import STREAMED, writer_answer

pytestmark = [pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
              pytest.mark.both_backends("the inbox replayed after a kill")]

ROOT = Path(__file__).resolve().parents[2]
USER = 42


class Writer:
    """The background writer of the restarted process; counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, instructions: str, material: str, *, max_tokens: int = 800) -> str:
        self.calls += 1
        return await writer_answer(instructions, material, max_tokens=max_tokens)


@contextlib.asynccontextmanager
async def child(tg: FakeTelegram, store: MemoryStore, mode: str) -> AsyncIterator[asyncio.subprocess.Process]:
    """The channel in a child process on the store's database, ready and polling; killed (SIGKILL) on exit if
    still alive."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.scenarios.telegram_child", str(store.db.path), tg.base_url, mode,
        store.db.url or "", cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    try:
        assert (await asyncio.wait_for(proc.stdout.readline(), 60)).strip() == b"ready"
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


@contextlib.asynccontextmanager
async def restarted(tg: FakeTelegram, engine: Engine, writer: Writer, tmp_path: Path,
                    streaming: bool = False) -> AsyncIterator[TelegramChannel]:
    """The channel after the crash, in this process, with commands that can reflect and write the diary."""
    commands = Commands(engine)
    zone = ZoneInfo("Europe/Berlin")
    commands.scheduler = Scheduler(engine.store, "mnemo", writer, engine, None, zone, tmp_path)  # type: ignore[arg-type]
    channel = TelegramChannel(engine, commands, TelegramConfig(
        token=tg.token, base_url=tg.base_url, allowed_users=frozenset({str(USER)}), streaming=streaming))
    await channel.start()
    try:
        yield channel
    finally:
        await channel.stop()


async def until(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 20) -> None:
    """Wait until an async check holds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.02)


async def count(store: MemoryStore, sql: str) -> int:
    async with store.db.reading() as tx:
        return int((await tx.fetchone(sql))[0])


async def settled(tg: FakeTelegram) -> None:
    await tg.wait_until(lambda: not tg.pending, what="the fake's queue to be fetched")
    await asyncio.sleep(0.3)


async def test_a_kill_after_each_command_runs_none_of_them_twice_and_its_answer_arrives_once(
    tg: FakeTelegram, engine: Engine, store: MemoryStore, tmp_path: Path,
) -> None:
    scope = await engine.scope_for(f"tg:{USER}")
    await store.notes.add(scope, "Anna mag Parks.")
    await store.notes.add(scope, "Anna hat einen Hund namens Bruno.")
    await store.messages.add(scope, "user", "Ich war heute mit Bruno im Park.")
    writer = Writer()
    effects: dict[str, tuple[str, int, str]] = {  # command -> (what it changes, the count after, its answer)
        "/undo": ("SELECT count(*) FROM notes WHERE valid_to IS NULL", 1, t("de", "undo_done")),
        "/writediary": ("SELECT count(*) FROM diary_entries", 1, "📔"),
        "/think": ("SELECT count(*) FROM thoughts", 1, t("de", "thoughts_head")),
    }
    for command, (changed, after, answer) in effects.items():
        sent_before = len(tg.sent)
        async with child(tg, store, "normal"):
            tg.hangs["sendmessage"] = 1  # the answer is recorded, then the process hangs sending it
            tg.send_text(USER, command)
            await until(lambda: _answered_runs(store), f"{command} to run and record its answer")
            await tg.wait_until(lambda: tg.hangs["sendmessage"] == 0, what="the child to hang sending the answer")
        assert len(tg.sent) == sent_before  # killed: nothing reached the chat
        async with restarted(tg, engine, writer, tmp_path):
            await tg.wait_for_sent(sent_before + 1)
            await settled(tg)
        assert len(tg.sent) == sent_before + 1, command  # the recorded answer, once
        assert tg.sent[-1]["text"].startswith(answer), (command, tg.sent[-1]["text"])
        assert await count(store, changed) == after, command  # the command took effect once
    assert writer.calls == 0  # the restart delivered what was recorded and ran nothing again
    assert await count(store, "SELECT count(*) FROM command_runs WHERE reply IS NOT NULL") == 0  # answers dropped


async def _answered_runs(store: MemoryStore) -> bool:
    return await count(store, "SELECT count(*) FROM command_runs WHERE state = 'answered'") > 0


async def test_a_command_cut_off_by_a_kill_is_not_run_again_and_the_user_is_told(
    tg: FakeTelegram, engine: Engine, store: MemoryStore, tmp_path: Path,
) -> None:
    scope = await engine.scope_for(f"tg:{USER}")
    await store.messages.add(scope, "user", "Ich war heute im Park.")
    async with child(tg, store, "writer-hangs") as proc:
        tg.send_text(USER, "/writediary")
        assert proc.stdout is not None
        assert (await asyncio.wait_for(proc.stdout.readline(), 20)).strip() == b"writer called"
    writer = Writer()
    async with restarted(tg, engine, writer, tmp_path):
        (told,) = await tg.wait_for_sent(1)
        assert told["text"] == t("de", "command_interrupted")
        assert writer.calls == 0 and await count(store, "SELECT count(*) FROM diary_entries") == 0
        tg.send_text(USER, "/writediary")  # asked again: now it runs
        await tg.wait_for_sent(2)
        await settled(tg)
    assert tg.sent[1]["text"].startswith("📔") and len(tg.sent) == 2
    assert writer.calls == 1 and await count(store, "SELECT count(*) FROM diary_entries") == 1


async def test_a_press_killed_before_its_answer_answers_the_same_after_the_restart_and_forgets_once(
    tg: FakeTelegram, engine: Engine, store: MemoryStore, tmp_path: Path,
) -> None:
    scope = await engine.scope_for(f"tg:{USER}")
    note = (await store.notes.add(scope, "Anna mag Parks.")).note
    await store.notes.add(scope, "Anna hat einen Hund.")
    async with child(tg, store, "normal"):
        tg.send_text(USER, f"/forget {note.id}")
        (confirm,) = await tg.wait_for_sent(1)
        await until(lambda: _choice_recorded(store), "the question's buttons to be recorded")
        tg.hangs["answercallbackquery"] = 1  # the note is forgotten, the answer recorded, then the process hangs
        tg.press_button(USER, confirm["message_id"], f"forget:{note.id}")
        await until(lambda: _answered_runs(store), "the press to run and record its answer")
        await tg.wait_until(lambda: tg.hangs["answercallbackquery"] == 0, what="the child to hang answering")
    assert tg.callback_answers == [] and tg.edits == []
    async with restarted(tg, engine, Writer(), tmp_path):
        await tg.wait_until(lambda: bool(tg.callback_answers) and bool(tg.edits), what="the replayed press")
        await settled(tg)
    done = t("de", "forget_done", text="Anna mag Parks.")
    assert [a.get("text") for a in tg.callback_answers] == [done]  # not "that choice doesn't exist"
    finished = tg.messages[confirm["message_id"]]
    assert finished["text"] == done and "reply_markup" not in finished
    assert await store.notes.count(scope) == 1 and len(tg.sent) == 1


async def _choice_recorded(store: MemoryStore) -> bool:
    return await count(store, "SELECT count(*) FROM choices") > 0


async def test_a_streamed_reply_cut_off_by_a_kill_goes_on_from_the_words_it_showed(
    tg: FakeTelegram, engine: Engine, store: MemoryStore, chat: ScriptedLLM, tmp_path: Path,
) -> None:
    async with child(tg, store, "stream-hangs"):
        tg.send_text(USER, "Ich war heute im Park.")
        await tg.wait_until(lambda: bool(tg.sent) and len(_shown(tg).split()) >= 8, timeout=20,
                            what="the preview to show eight words")
        await until(lambda: _recorded_as_shown(store, _shown(tg)), "the shown words to be recorded")
    at_kill = _shown(tg)
    edits_before = len(tg.edits)
    chat.chunks, chat.chunk_delay = 12, 0.1  # the model writes the reply again from its first word
    chat.enqueue(STREAMED)
    async with restarted(tg, engine, Writer(), tmp_path, streaming=True):
        await tg.wait_until(lambda: _shown(tg) == STREAMED, timeout=20, what="the finished reply")
        await settled(tg)
    after = [e["text"] for e in tg.edits[edits_before:]]
    assert len(tg.sent) == 1 and after and after[-1] == STREAMED  # the same message, finished in place
    assert all(len(text) > len(at_kill) for text in after), (at_kill, after)  # never back to fewer words
    assert len(chat.calls) == 1 and chat.calls[0].streamed


def _shown(tg: FakeTelegram) -> str:
    return str(tg.messages[tg.sent[0]["message_id"]].get("text", "")) if tg.sent else ""


async def _recorded_as_shown(store: MemoryStore, text: str) -> bool:
    async with store.db.reading() as tx:
        row = await tx.fetchone("SELECT shown_texts FROM inbox WHERE handled_at IS NULL")
    faces: list[Any] = json.loads(row[0]) if row else []
    return bool(faces) and face_text(faces[0]) == text
