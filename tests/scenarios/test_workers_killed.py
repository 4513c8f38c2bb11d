"""Three worker processes on one PostgreSQL database behind one webhook URL, the fake Bot API's updates spread over
them: 50 people write 10 messages each; one worker is killed (SIGKILL) half-way. Every message is answered exactly
once and each person's in order, and a reminder due during the run is sent once."""
from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from memory.store import MemoryStore
from tests import postgres_kit
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.telegram_api import FakeTelegram
from tests.scenarios.worker_child import SECRET, USERS

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 10


@pytest.fixture
async def database() -> AsyncIterator[str]:
    url = await postgres_kit.fresh_database()
    yield url
    await asyncio.to_thread(postgres_kit.drop, url)


async def start_worker(tg: FakeTelegram, url: str, folder: Path, port: int, name: str
                       ) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.scenarios.worker_child", url, str(folder), tg.base_url, str(port), name,
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    assert (await asyncio.wait_for(proc.stdout.readline(), 60)).strip() == b"ready"
    return proc


async def post(session: aiohttp.ClientSession, ports: list[int], first: int, update: object) -> None:
    """Post to the worker whose turn it is; one that does not answer is skipped, as a load balancer would."""
    for step in range(len(ports) * 3):
        port = ports[(first + step) % len(ports)]
        try:
            async with session.post(f"http://127.0.0.1:{port}/hook", json=update,
                                    headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}) as response:
                if response.status == 200:
                    return
        except aiohttp.ClientError:
            await asyncio.sleep(0.05)
    raise AssertionError(f"no worker took {update}")


def free_ports(n: int) -> list[int]:
    import socket

    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [int(s.getsockname()[1]) for s in sockets]
    for s in sockets:
        s.close()
    return ports


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
                for user in USERS:
                    tg.send_text(user, f"Nachricht {round_} von {user}")
                batch, tg.pending[:] = list(tg.pending), []
                await asyncio.gather(*(post(session, ports, n, update) for n, update in enumerate(batch)))
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
