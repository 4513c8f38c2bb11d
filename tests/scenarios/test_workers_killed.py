"""Three worker processes on one PostgreSQL database behind one webhook URL, the fake Bot API's updates spread over
them: 50 people write 10 messages each; one worker is killed (SIGKILL) half-way. Every message is answered exactly
once and each person's in order, and a reminder due during the run is sent once."""
from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from memory.store import MemoryStore
from tests import postgres_kit
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.telegram_api import FakeTelegram
from tests.scenarios.worker_child import USERS
from tests.scenarios.worker_pool import free_ports, post_round, start_worker

ROUNDS = 10


@pytest.fixture
async def database() -> AsyncIterator[str]:
    url = await postgres_kit.fresh_database()
    yield url
    await asyncio.to_thread(postgres_kit.drop, url)


async def test_three_workers_one_killed_answer_every_message_once_in_order(
        tg: FakeTelegram, database: str, tmp_path: Path) -> None:
    store = await MemoryStore.open(tmp_path / "test", FakeEmbedder(), database_url=database)
    scope = await store.scope("mnemo", f"tg:{USERS[0]}")
    await store.messages.add(scope, "user", "Erinnere mich bitte.")
    await store.reminders.add(scope, "Tabletten nehmen", time.time() + 6)
    ports = free_ports(3)
    workers = [await start_worker(tg, database, tmp_path / f"w{n}", port, f"w{n}") for n, port in enumerate(ports)]
    try:
        async with aiohttp.ClientSession() as session:
            for round_ in range(ROUNDS):
                await post_round(tg, session, ports, USERS, round_)
                if round_ == ROUNDS // 2:
                    workers[1].send_signal(signal.SIGKILL)  # killed in the middle, with chats in hand
        answers = [m for m in tg.sent if not m["text"].startswith("⏰")]
        deadline = time.monotonic() + 120
        while len(answers) < len(USERS) * ROUNDS and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            answers = [m for m in tg.sent if not m["text"].startswith("⏰")]
        await asyncio.sleep(7)  # the reminder's time has come; a second answer or push would show meanwhile
    finally:
        for proc in workers:
            if proc.returncode is None:
                proc.send_signal(signal.SIGKILL)
            await proc.wait()
        await store.close()
    answers = [m for m in tg.sent if not m["text"].startswith("⏰")]
    for user in USERS:
        assert [m["text"] for m in answers if m["chat_id"] == user] == [
            f"Antwort auf Nachricht {n} von {user}" for n in range(ROUNDS)], user
    assert len(answers) == len(USERS) * ROUNDS
    assert [m["chat_id"] for m in tg.sent if "Tabletten nehmen" in m["text"]] == [USERS[0]]
