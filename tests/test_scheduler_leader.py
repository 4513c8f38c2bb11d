"""One scheduler across several workers: the worker holding the lease `scheduler` runs the jobs, another takes over
when the lease runs out, and a due reminder and the planner fire once although two workers keep job stores."""
from __future__ import annotations

import asyncio
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.llm.writer import LLMWriter
from memory.leases import SCHEDULER
from memory.models import Scope
from memory.store import MemoryStore
from scheduler.leader import HOLD_SECONDS, SchedulerLeader, leader_action
from scheduler.service import Scheduler
from tests.fakes.clock import Clock
from tests.fakes.llm import ScriptedLLM

BERLIN = ZoneInfo("Europe/Berlin")


class RecordingSender:
    def __init__(self) -> None:
        self.sent: list[str] = []

    async def deliver(self, scope: Scope, text: str, buttons: object = ()) -> bool:
        self.sent.append(text)
        return True


class JobCounts:
    """The metrics' port: which jobs ran, shared by every worker of the test."""

    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()

    def job_ran(self, job: str, outcome: str) -> None:
        self.runs[job] += 1


class Composer:
    async def compose_checkin(self, scope: Scope, topics: list[str], reason: str) -> str:
        return ""


def worker(store: MemoryStore, folder: Path, name: str, counts: JobCounts, clock: Clock) -> SchedulerLeader:
    """One worker's scheduler (its own job store in its own data directory) behind the lease."""
    background = ScriptedLLM("background")
    scheduler = Scheduler(store, "mnemo", LLMWriter(background), Composer(), RecordingSender(), BERLIN,  # type: ignore[arg-type]
                          folder, silence=timedelta(hours=48), job_runs=counts)
    return SchedulerLeader(scheduler, store.leases, name, clock)


def test_the_lease_decides_whether_a_scheduler_runs() -> None:
    assert leader_action(held=True, running=False) == "start"
    assert leader_action(held=True, running=True) == "sync"
    assert leader_action(held=False, running=True) == "stop"
    assert leader_action(held=False, running=False) == "wait"


async def test_one_worker_runs_the_scheduler_and_another_takes_over_when_its_lease_runs_out(
        store: MemoryStore, second_store: MemoryStore, tmp_path: Path) -> None:
    clock, counts = Clock(time.time()), JobCounts()
    one = worker(store, tmp_path / "w1", "w1", counts, clock)
    two = worker(second_store, tmp_path / "w2", "w2", counts, clock)
    try:
        assert await one.step() == "start"
        assert await two.step() == "wait"
        clock.now += HOLD_SECONDS / 2
        assert await one.step() == "sync"
        assert await two.step() == "wait"

        clock.now += HOLD_SECONDS  # w1 stalls (or died) and renews nothing meanwhile
        assert await two.step() == "start"
        assert await one.step() == "stop"  # back: it finds the lease taken and stops its scheduler
        assert (one.scheduler.running, two.scheduler.running) == (False, True)
        assert (await store.leases.current(SCHEDULER, clock.now)).holder == "w2"  # type: ignore[union-attr]
    finally:
        await one.scheduler.stop()
        await two.scheduler.stop()


async def test_two_workers_fire_a_due_reminder_and_the_planner_once(
        store: MemoryStore, second_store: MemoryStore, tmp_path: Path) -> None:
    clock, counts = Clock(time.time()), JobCounts()
    scope = await store.scope("mnemo", "tg:1")
    await store.messages.add(scope, "user", "Hallo!")
    early = await store.reminders.add(scope, "Tabletten nehmen", time.time() + 1.5)
    workers = [worker(store, tmp_path / "w1", "w1", counts, clock),
               worker(second_store, tmp_path / "w2", "w2", counts, clock)]
    try:
        assert sorted([await each.step() for each in workers]) == ["start", "wait"]
        leader = next(each for each in workers if each.scheduler.running)
        aps = leader.scheduler._aps  # noqa: SLF001 (the planner's quarter hour brought forward)
        assert aps is not None
        aps.modify_job("planner", next_run_time=datetime.now(BERLIN))
        other_store = second_store if leader is workers[0] else store
        late = await other_store.reminders.add(scope, "Blumen gießen", time.time() + 1.0)  # set on the other worker
        assert await leader.step() == "sync"  # the leader's jobs now hold it
        for _ in range(100):
            if counts.runs["reminder"] >= 2 and counts.runs["planner"] >= 1:
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.5)  # time for a second run, were there one
    finally:
        for each in workers:
            await each.scheduler.stop()
    assert counts.runs == {"planner": 1, "reminder": 2}
    pushed = [item.text for item in await store.outbox.items(scope) if item.kind == "reminder"]
    assert len(pushed) == 2 and {early.text, late.text} == {text.removeprefix("⏰ ") for text in pushed}
    assert [r.id for r in await store.reminders.active(scope)] == []
