"""Workers whose clocks disagree: the inbox's and the outbox's claims are judged on the database's clock, as leases are
(a worker whose clock runs 30 s ahead takes no conversation or message another worker still holds; one whose clock
runs behind writes no claim that has run out already). And /healthz names the worker holding the scheduler's lease."""
from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import pytest

from bot.web_page.health import Running, health
from memory.storage.leases import SCHEDULER
from memory.store import MemoryStore
from scheduler.delivery import OutboxSender
from tests.fakes.clock import Clock
from tests.test_scheduler_leader import HOLD_SECONDS, JobCounts, worker
from tests.test_workers import Recorder

pytestmark = pytest.mark.both_backends("claims and leases across workers")

SKEW = 30.0


def skewed(store: MemoryStore, seconds: float) -> Clock:
    """This store's worker reads every clock `seconds` off; the clock it reads from."""
    clock = Clock(time.time() + seconds)
    store.leases.clock = lambda: time.time() + seconds
    return clock


def postgres_only(store: MemoryStore) -> None:
    if store.db.dialect != "postgres":
        pytest.skip("SQLite is one process with one clock")


async def test_a_worker_whose_clock_runs_30_s_ahead_takes_no_conversation_another_worker_holds(
        store: MemoryStore, second_store: MemoryStore) -> None:
    postgres_only(store)
    now = time.time()
    await store.inbox.record("telegram", [("u1", "{}")], now, threads={"u1": "chat:1"})
    assert [e.event_id for e in await store.inbox.claim("telegram", "w1", now, 25)] == ["u1"]  # 25 s more
    ahead = skewed(second_store, SKEW)
    assert await second_store.inbox.claim("telegram", "w2", ahead(), 60) == [], "w1's claim still stands"
    assert not await second_store.inbox.keep("telegram", "u1", "w2", ahead(), 60)
    ahead.now += 25  # 25 s on, w1's claim ran out
    assert [e.event_id for e in await second_store.inbox.claim("telegram", "w2", ahead(), 60)] == ["u1"]


async def test_a_worker_whose_clock_runs_30_s_ahead_takes_no_message_another_worker_sends(
        store: MemoryStore, second_store: MemoryStore) -> None:
    postgres_only(store)
    scope = await store.scope("mnemo", "tg:1")
    first = OutboxSender(store, Recorder([]))
    first.worker, first.claim_seconds = "w1", 25.0
    item = await store.outbox.record(scope, "checkin", "Wie geht es dir?", time.time(), claim=await first.claim())
    ahead = skewed(second_store, SKEW)
    assert await second_store.outbox.claim_due("w2", ahead(), 60) == [], "w1 sends it: w2 leaves it alone"
    ahead.now += 25
    assert [each.id for each in await second_store.outbox.claim_due("w2", ahead(), 60)] == [item.id]


async def test_a_worker_whose_clock_runs_30_s_behind_writes_no_claim_that_ran_out_already(
        store: MemoryStore, second_store: MemoryStore) -> None:
    postgres_only(store)
    scope = await store.scope("mnemo", "tg:1")
    behind = skewed(second_store, -SKEW)
    late = OutboxSender(second_store, Recorder([]), behind)
    late.worker, late.claim_seconds = "w2", 20.0
    await second_store.outbox.record(scope, "checkin", "Wie geht es dir?", behind(), claim=await late.claim())
    assert await store.outbox.claim_due("w1", time.time(), 60) == [], "w2 holds it 20 s on every clock"


async def test_healthz_names_the_worker_holding_the_scheduler_lease(
        store: MemoryStore, second_store: MemoryStore, tmp_path: Path) -> None:
    clock, counts = Clock(time.time()), JobCounts()
    one = worker(store, tmp_path / "w1", "w1", counts, clock)
    two = worker(second_store, tmp_path / "w2", "w2", counts, clock)
    nobody = await health(Running(second_store, scheduler=two.scheduler, worker="w2", clock=clock))
    assert nobody[1]["scheduler_lease"] is None
    try:
        assert (await one.step(), await two.step()) == ("start", "wait")
        status, body = await health(Running(second_store, scheduler=two.scheduler, worker="w2", clock=clock))
    finally:
        await one.scheduler.stop()
    assert status == 200 and body["scheduler"] is False and body["worker"] == "w2"
    lease = body["scheduler_lease"]
    assert lease["holder"] == "w1"
    until = datetime.fromisoformat(lease["until"]).timestamp()
    assert lease["until"].endswith("Z") and abs(until - (clock.now + HOLD_SECONDS)) <= 1.5
    held = await store.leases.current(SCHEDULER, clock.now)
    assert held is not None and held.holder == "w1"
    _, one_process = await health(Running(store, scheduler=one.scheduler, clock=clock))
    assert "scheduler_lease" not in one_process, "one process (SQLite): nothing to tell"
