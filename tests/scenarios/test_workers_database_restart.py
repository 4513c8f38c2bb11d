"""Three webhook workers on one PostgreSQL whose server restarts (issue 53): while it is down an update is answered
503 (Telegram sends it again) and every /healthz says 503; once it is back every worker's /healthz is 200 within
10 s, and every worker answers again, the update refused meanwhile among them, once."""
from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from bench.backends import PostgresServer
from tests import postgres_kit
from tests.fakes.telegram_api import FakeTelegram
from tests.scenarios.worker_child import USERS
from tests.scenarios.worker_pool import free_ports, healthy, post_to, start_worker


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    """A server of this test's own: restarting the run's shared one would cut other tests' connections."""
    postgres_kit.server()  # skips (or fails under MNEMO_REQUIRE_POSTGRES) as the other PostgreSQL tests do
    server = PostgresServer()
    yield server
    server.stop()


async def _all_healthy(session: aiohttp.ClientSession, ports: list[int], within: float) -> float:
    """Seconds until every worker's /healthz is 200 (fails after `within`)."""
    started = time.monotonic()
    while not all([await healthy(session, p) for p in ports]):
        assert time.monotonic() - started < within, "not every worker healthy in time"
        await asyncio.sleep(0.2)
    return time.monotonic() - started


async def test_after_a_database_restart_every_worker_answers_again(
        tg: FakeTelegram, own_server: PostgresServer, tmp_path: Path) -> None:
    url = await asyncio.to_thread(own_server.fresh_url, "restart")
    ports, health = free_ports(3), free_ports(3)
    workers = [await start_worker(tg, url, tmp_path / f"w{n}", port, f"w{n}", health_port=health[n])
               for n, port in enumerate(ports)]
    people = USERS[:3]
    try:
        async with aiohttp.ClientSession() as session:
            await _all_healthy(session, health, 10)
            await asyncio.to_thread(own_server.halt)
            try:
                assert not any([await healthy(session, p) for p in health])
                tg.send_text(people[0], "Nachricht im Ausfall")
                refused = tg.pending.pop()
                assert [await post_to(session, port, refused) for port in ports] == [503, 503, 503]
            finally:
                await asyncio.to_thread(own_server.restart)
            assert await _all_healthy(session, health, 10) < 10
            # Telegram sends the refused update again; and each worker takes a new one
            assert await post_to(session, ports[1], refused) == 200
            for n, user in enumerate(people):
                tg.send_text(user, f"Nachricht danach {n}")
                assert await post_to(session, ports[n], tg.pending.pop()) == 200
            await tg.wait_until(lambda: len(tg.sent) >= 4, timeout=30, what="four answers")
            await asyncio.sleep(1)  # a second answer would show meanwhile
    finally:
        for proc in workers:
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
    texts = sorted(m["text"] for m in tg.sent)
    assert texts == sorted(["Antwort auf Nachricht im Ausfall"] + [f"Antwort auf Nachricht danach {n}"
                                                                   for n in range(3)])
