"""Connections that come back (issue 53): a PostgreSQL store survives a restart of its server and a
pg_terminate_backend of its connection; a transaction cut in the middle fails with a mapped error and leaves nothing
half-written; the database is reachable again (what /healthz reads) within seconds.

The restart tests run a server of their own (restarting the run's shared one would cut other tests' connections).
"""
from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psycopg
import pytest
from telegram import Update
from telegram.ext import ApplicationBuilder

from bench.backends import PostgresServer
from bot.channels.telegram.intake import Intake
from memory import DatabaseUnavailable, PostgresDatabase
from memory.storage.postgres import reconnect_wait
from memory.store import MemoryStore
from tests import postgres_kit
from tests.fakes.clock import Clock
from tests.fakes.embedder import FakeEmbedder
from tests.test_scheduler_leader import JobCounts, worker

TABLE = ("CREATE TABLE IF NOT EXISTS kept (id SERIAL PRIMARY KEY, companion_id TEXT NOT NULL, user_id BIGINT NOT NULL,"
         " body TEXT NOT NULL)")


@pytest.fixture(scope="module")
def own_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server only these tests use, so that they may restart it (in a folder of its own that the
    server's user may enter, as the benchmarks' are)."""
    postgres_kit.server()  # skips (or fails under MNEMO_REQUIRE_POSTGRES) as the other PostgreSQL tests do
    server = PostgresServer()
    yield server
    server.stop()


async def _ready(db: PostgresDatabase) -> PostgresDatabase:
    async with db.transaction() as tx:
        await tx.script(TABLE)
    db.forget_schema()
    return db


@pytest.fixture
async def restarted(own_server: PostgresServer, tmp_path: Path) -> AsyncIterator[PostgresDatabase]:
    db = await PostgresDatabase.connect(await asyncio.to_thread(own_server.fresh_url, "reconnect"), tmp_path)
    yield await _ready(db)
    await db.close()


@pytest.fixture
async def shared(tmp_path: Path) -> AsyncIterator[PostgresDatabase]:
    url = await postgres_kit.fresh_database()
    db = await PostgresDatabase.connect(url, tmp_path)
    yield await _ready(db)
    await db.close()
    await asyncio.to_thread(postgres_kit.drop, url)


async def _write(db: PostgresDatabase, body: str) -> None:
    async with db.transaction() as tx:
        await tx.execute("INSERT INTO kept (companion_id, user_id, body) VALUES (?, ?, ?)", ("c", 1, body))


async def _bodies(db: PostgresDatabase) -> list[str]:
    async with db.reading() as tx:
        return [r[0] for r in await tx.fetchall("SELECT body FROM kept WHERE companion_id = ? AND user_id = ?"
                                                " ORDER BY id", ("c", 1))]


async def _backend_pid(db: PostgresDatabase) -> int:
    async with db.reading() as tx:
        return int((await tx.fetchone("SELECT pg_backend_pid()"))[0])


def _terminate(url: str, pid: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
        for _ in range(100):  # wait until the backend is gone
            if conn.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone() is None:
                return
            time.sleep(0.02)


async def test_a_store_survives_a_restart_of_its_server(own_server: PostgresServer,
                                                           restarted: PostgresDatabase) -> None:
    """After `pg_ctl restart -m fast` the next reading and the next transaction work, on a new connection."""
    await _write(restarted, "vorher")
    await asyncio.to_thread(own_server.restart)
    assert await _bodies(restarted) == ["vorher"]  # the reading block's first statement, run again on a new one
    await asyncio.to_thread(own_server.restart)
    await _write(restarted, "nachher")  # BEGIN failed on the lost connection: the whole block ran on a new one
    assert await _bodies(restarted) == ["vorher", "nachher"]


async def test_the_database_is_reachable_again_within_10_s_of_a_restart(own_server: PostgresServer,
                                                                        restarted: PostgresDatabase) -> None:
    """What /healthz reads (`Database.reachable`) is true again as soon as the server is back."""
    assert await restarted.reachable()
    await asyncio.to_thread(own_server.restart)
    back = time.monotonic()
    while not await restarted.reachable(timeout=2):
        assert time.monotonic() - back < 10, "not reachable 10 s after the server came back"
        await asyncio.sleep(0.2)
    assert time.monotonic() - back < 10


async def test_a_store_survives_a_terminated_backend(shared: PostgresDatabase) -> None:
    """pg_terminate_backend of the store's connection: the next reading and the next transaction work."""
    url = str(shared.url)
    await _write(shared, "eins")
    first = await _backend_pid(shared)
    await asyncio.to_thread(_terminate, url, first)
    assert await _bodies(shared) == ["eins"]
    second = await _backend_pid(shared)
    assert second != first
    await asyncio.to_thread(_terminate, url, second)
    await _write(shared, "zwei")
    assert await _bodies(shared) == ["eins", "zwei"]


async def test_a_transaction_cut_in_the_middle_raises_the_mapped_error_and_leaves_nothing(
        shared: PostgresDatabase) -> None:
    """A connection lost after the block's first write: DatabaseUnavailable (never replayed), nothing written."""
    url = str(shared.url)
    pid = await _backend_pid(shared)
    with pytest.raises(DatabaseUnavailable):
        async with shared.transaction() as tx:
            await tx.execute("INSERT INTO kept (companion_id, user_id, body) VALUES (?, ?, ?)", ("c", 1, "halb"))
            await asyncio.to_thread(_terminate, url, pid)
            await tx.execute("INSERT INTO kept (companion_id, user_id, body) VALUES (?, ?, ?)", ("c", 1, "ganz"))
    assert await _bodies(shared) == []  # the next block runs on a new connection and finds nothing half-written
    await _write(shared, "danach")
    assert await _bodies(shared) == ["danach"]


async def test_while_the_server_is_down_blocks_raise_the_mapped_error_and_the_store_comes_back(
        own_server: PostgresServer, restarted: PostgresDatabase) -> None:
    """`pg_ctl stop -m fast`, then start (the issue's case): meanwhile DatabaseUnavailable, never psycopg's own error;
    afterwards the next reading and transaction work."""
    await _write(restarted, "vorher")
    await asyncio.to_thread(own_server.halt)
    try:
        with pytest.raises(DatabaseUnavailable):
            await _bodies(restarted)
        with pytest.raises(DatabaseUnavailable):
            await _write(restarted, "verloren")
        assert not await restarted.reachable(timeout=2)
    finally:
        await asyncio.to_thread(own_server.restart)
    back = time.monotonic()
    while not await restarted.reachable(timeout=2):
        assert time.monotonic() - back < 10, "not reachable 10 s after the server came back"
        await asyncio.sleep(0.2)
    await _write(restarted, "nachher")
    assert await _bodies(restarted) == ["vorher", "nachher"]


def test_attempts_to_connect_back_off_from_a_quarter_second_to_two_seconds() -> None:
    """While the server is down, blocks do not each try to connect: at most one attempt every 2 s."""
    assert [reconnect_wait(n) for n in range(6)] == [0.0, 0.25, 0.5, 1.0, 2.0, 2.0]


class HeldLease:
    """The lease (`memory.Leases`) as a worker holding it sees it: held, whatever the database says meanwhile."""

    async def take(self, name: str, worker: str, now: float, hold: float) -> bool:
        return True

    async def release(self, name: str, worker: str) -> None:
        return None


async def test_the_scheduler_lease_loop_outlives_a_stopped_server(own_server: PostgresServer,
                                                                  tmp_path: Path) -> None:
    """The worker that leads keeps its lease loop while the server is down (the loop died of a DatabaseUnavailable
    in its step before: no scheduler on that worker ever again, and a worker process built around it exited)."""
    url = await asyncio.to_thread(own_server.fresh_url, "leader")
    store = await MemoryStore.open(tmp_path / "data", FakeEmbedder(), database_url=url)
    leader = worker(store, tmp_path / "w1", "w1", JobCounts(), Clock(time.time()))
    leader.leases = HeldLease()  # type: ignore[assignment]
    leader.every = 0.05
    loop = asyncio.create_task(leader.run())
    try:
        for _ in range(200):
            if leader.scheduler.running:
                break
            await asyncio.sleep(0.05)
        assert leader.scheduler.running
        await asyncio.to_thread(own_server.halt)
        try:
            await asyncio.sleep(1.0)  # twenty steps that cannot read the reminders
            assert not loop.done(), loop.exception() if loop.done() else None
        finally:
            await asyncio.to_thread(own_server.restart)
        while not await store.db.reachable(timeout=2):  # attempts to connect back off up to 2 s
            await asyncio.sleep(0.2)
        await store.reminders.add(await store.scope("mnemo", "tg:1"), "Tabletten nehmen", time.time() + 3600)
        for _ in range(100):  # the next step syncs the reminder set while the server was away
            if leader._seen is not None and leader._seen[0] == await store.reminders.version():
                break
            await asyncio.sleep(0.05)
        assert leader._seen is not None and leader._seen[0] == await store.reminders.version()
        assert leader.scheduler.running and not loop.done()
    finally:
        loop.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await loop
        await store.close()


class AwayLease:
    """The lease while the database is away: every attempt fails as the store maps it."""

    async def take(self, name: str, worker: str, now: float, hold: float) -> bool:
        raise DatabaseUnavailable("cannot connect to PostgreSQL at postgresql://mnemo@db/mnemo: connection refused")

    async def release(self, name: str, worker: str) -> None:
        return None


async def test_a_lease_not_renewed_while_the_database_is_away_is_one_log_line_with_its_cause(
        store: MemoryStore, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Renewed every 20 s on every worker: while the database is away, one line each, not a traceback each."""
    leader = worker(store, tmp_path / "w1", "w1", JobCounts(), Clock(time.time()))
    leader.leases = AwayLease()  # type: ignore[assignment]
    assert await leader.step() == "wait"
    (record,) = [r for r in caplog.records if "scheduler lease" in r.getMessage()]
    assert "connection refused" in record.getMessage() and record.exc_info is None


async def _intake(own_server: PostgresServer, tmp_path: Path, label: str) -> tuple[MemoryStore, Intake]:
    """Worker w1's Telegram intake on a fresh database of the restartable server (PTB's application, no network)."""
    store = await MemoryStore.open(tmp_path, FakeEmbedder(),
                                   database_url=await asyncio.to_thread(own_server.fresh_url, label))

    async def keeps(update: Update) -> bool:
        return True

    return store, Intake(ApplicationBuilder().token("123:ABC").build(), store.inbox, "telegram", time.time, keeps,
                         worker="w1", hold=120.0)


def _said(intake: Intake, n: int) -> Update:
    """Update n: a private "Hallo" from user 40 + n."""
    return Update.de_json({"update_id": n, "message": {
        "message_id": n, "date": 0, "chat": {"id": 40 + n, "type": "private"}, "text": "Hallo",
        "from": {"id": 40 + n, "is_bot": False, "first_name": "Anna"}}}, intake.app.bot)


async def test_an_update_a_worker_could_not_take_up_while_the_database_was_away_is_queued_again(
        own_server: PostgresServer, tmp_path: Path) -> None:
    """A stored update whose turn came while the server restarted (`Intake.ours` could not renew its claim) is not
    processed then, and the next pull after the server is back queues it again: before, it stayed marked as queued,
    the worker kept renewing its claim and never took it up, and nobody answered it (found by the chaos run)."""
    store, intake = await _intake(own_server, tmp_path, "intake")
    app, update = intake.app, _said(intake, 7)
    try:
        await intake.take([update])
        assert app.update_queue.get_nowait().update_id == 7  # stored, claimed and queued
        await asyncio.to_thread(own_server.halt)
        try:
            assert await intake.ours(update) is False, "not processed while its claim cannot be renewed"
        finally:
            await asyncio.to_thread(own_server.restart)
        while not await store.db.reachable(timeout=2):  # past the reconnect back-off
            await asyncio.sleep(0.1)
        await intake.pull()
        assert app.update_queue.get_nowait().update_id == 7, "queued again once the database answers"
    finally:
        await store.close()


async def test_a_turn_that_failed_for_want_of_the_database_is_taken_up_again_not_marked_handled(
        own_server: PostgresServer, tmp_path: Path) -> None:
    """With several workers, a turn that failed because the server was away (`DatabaseUnavailable`) is not told a
    failure and marked handled: the update stays unhandled and the next pull queues it again (the chaos run lost six
    messages sent just before a restart this way); any other failure is handled as before."""
    store, intake = await _intake(own_server, tmp_path, "again")
    app, updates = intake.app, [_said(intake, n) for n in (7, 8)]
    try:
        await intake.take(updates)
        assert sorted(app.update_queue.get_nowait().update_id for _ in updates) == [7, 8]
        assert intake.again(updates[0], DatabaseUnavailable("the server restarts"))
        assert not intake.again(updates[1], ValueError("a bug"))
        for update in updates:
            await intake.handled(update)
        assert app.update_queue.get_nowait().update_id == 7, "queued again by the pull after it"
        assert [e.event_id for e in await store.inbox.unhandled("telegram")] == ["7"]
    finally:
        await store.close()
