"""/settings on every worker, with the real worker processes: three workers in webhook mode on one PostgreSQL database,
ten people sending ten `/settings morgen HH:MM` each, posted to the workers in turn. Every command is answered
"Gespeichert." (the issue's figure: 100 of 100), workers that do not hold the scheduler's lease answer some of them,
and the leader's job store holds each person's brief at their last choice a few renew steps later."""
from __future__ import annotations

import asyncio
import signal
import sqlite3
import time
from collections import Counter
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import aiohttp
import pytest

from bot.texts import t
from memory.storage.leases import SCHEDULER
from memory.store import MemoryStore
from tests import postgres_kit
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.telegram_api import FakeTelegram
from tests.scenarios.worker_child import USERS
from tests.scenarios.worker_pool import free_ports, post, start_worker

PEOPLE, ROUNDS = USERS[:10], 10


@pytest.fixture
async def database() -> AsyncIterator[str]:
    url = await postgres_kit.fresh_database()
    yield url
    await asyncio.to_thread(postgres_kit.drop, url)


def choice(round_: int, person: int) -> str:
    return f"07:{round_ * 5 + person % 5:02d}"


def leaders_briefs(jobs: Path) -> dict[str, str]:
    """The morning jobs in a worker's job store: job id -> its next run's time of day in Berlin."""
    with sqlite3.connect(jobs) as db:
        rows = db.execute("SELECT id, next_run_time FROM apscheduler_jobs WHERE id LIKE 'morning:%'").fetchall()
    return {job: f"{datetime.fromtimestamp(at, ZoneInfo('Europe/Berlin')):%H:%M}" for job, at in rows}


async def test_a_hundred_settings_over_three_worker_processes_are_all_answered(
        tg: FakeTelegram, database: str, tmp_path: Path) -> None:
    store = await MemoryStore.open(tmp_path / "test", FakeEmbedder(), database_url=database)
    ports = free_ports(3)
    workers = [await start_worker(tg, database, tmp_path / f"w{n}", port, f"w{n}") for n, port in enumerate(ports)]
    try:
        async with aiohttp.ClientSession() as session:
            for round_ in range(-1, ROUNDS):  # first each says hello: the scheduler has jobs for people who wrote
                for person in PEOPLE:
                    tg.send_text(person, f"/settings morgen {choice(round_, person)}" if round_ >= 0 else "Hallo")
                batch, tg.pending[:] = list(tg.pending), []
                await asyncio.gather(*(post(session, ports, round_ + n, update) for n, update in enumerate(batch)))
                deadline = time.monotonic() + 60  # a person's next command after this one's answer
                while len(tg.sent) < (round_ + 2) * len(PEOPLE) and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
        lease = await store.leases.current(SCHEDULER, time.time())
        assert lease is not None
        scopes = {person: await store.scope("mnemo", f"tg:{person}") for person in PEOPLE}
        wanted = {f"morning:{scopes[p].id}": choice(ROUNDS - 1, p) for p in PEOPLE}
        deadline = time.monotonic() + 15  # the leader renews (and looks at the settings) every second here
        while time.monotonic() < deadline:
            briefs = leaders_briefs(tmp_path / lease.holder / "jobs.sqlite3")
            if all(briefs.get(job) == at for job, at in wanted.items()):
                break
            await asyncio.sleep(0.25)
        async with store.db.reading() as tx:
            handled = await tx.fetchall("SELECT claimed_by FROM inbox WHERE handled_at IS NOT NULL ORDER BY rowid", ())
        answered_by = Counter(str(r[0]) for r in handled[len(PEOPLE):])  # the commands, after the hellos
    finally:
        for proc in workers:
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
        await store.close()
    saved = [m for m in tg.sent if m["text"].startswith(t("de", "settings_saved"))]
    print(f"/settings answered: {len(saved)} of {ROUNDS * len(PEOPLE)}; handled by {dict(answered_by)},"
          f" the scheduler's leader {lease.holder}")
    assert len(saved) == len(tg.sent) - len(PEOPLE) == ROUNDS * len(PEOPLE)
    assert sum(n for w, n in answered_by.items() if w != lease.holder) > 0, "the other workers took some"
    assert briefs == wanted, "the leader's jobs: each person's last choice"
