"""One scheduler across several workers: the worker holding the lease `scheduler` runs the jobs, another takes over
when the lease runs out, and a due reminder and the planner fire once although two workers keep job stores: a job
store left from an earlier turn as leader fires no planner slot again, and a new leader runs the slot its predecessor
was cut off in at once."""
from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.llm.writer import LLMWriter
from memory.models import Scope
from memory.storage.leases import SCHEDULER
from memory.store import MemoryStore
from scheduler.checkin import LAST_DECISION
from scheduler.delivery import OutboxSender
from scheduler.leader import HOLD_SECONDS, SchedulerLeader, leader_action
from scheduler.reminder_pushes import push_due
from scheduler.service import Scheduler
from tests.fakes.clock import Clock
from tests.fakes.llm import ScriptedLLM

pytestmark = pytest.mark.both_backends("the scheduler's lease")

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
        self.outcomes: Counter[tuple[str, str]] = Counter()

    def job_ran(self, job: str, outcome: str) -> None:
        self.runs[job] += 1
        self.outcomes[job, outcome] += 1


class Composer:
    async def compose_checkin(self, scope: Scope, topics: list[str], reason: str) -> str:
        return ""


def worker(store: MemoryStore, folder: Path, name: str, counts: JobCounts, clock: Clock,
           planner_every: timedelta = timedelta(minutes=15)) -> SchedulerLeader:
    """One worker's scheduler (its own job store in its own data directory) behind the lease."""
    background = ScriptedLLM("background")
    scheduler = Scheduler(store, "mnemo", LLMWriter(background), Composer(), RecordingSender(), BERLIN,  # type: ignore[arg-type]
                          folder, silence=timedelta(hours=48), job_runs=counts, planner_every=planner_every)
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


async def until(done: Callable[[], bool], seconds: float = 10.0) -> None:
    """Wait until `done()` holds (the schedulers run in real time)."""
    for _ in range(int(seconds / 0.05)):
        if done():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("waited in vain")


async def test_a_job_store_from_an_earlier_turn_as_leader_runs_no_planner_slot_again(
        store: MemoryStore, second_store: MemoryStore, tmp_path: Path) -> None:
    clock, counts, every = Clock(time.time()), JobCounts(), timedelta(seconds=2)
    one = worker(store, tmp_path / "w1", "w1", counts, clock, every)
    two = worker(second_store, tmp_path / "w2", "w2", counts, clock, every)
    try:
        assert await one.step() == "start"
        await until(lambda: counts.runs["planner"] == 1)  # w1 runs a slot; its job store keeps the next one
        clock.now += HOLD_SECONDS  # w1 stalls; back, it finds the lease run out and taken
        assert await two.step() == "start"
        assert await one.step() == "stop"
        await until(lambda: counts.runs["planner"] == 2)  # w2 runs that next slot
        clock.now += HOLD_SECONDS  # w2 stalls; w1 leads again and its job store fires the slot it kept, late
        assert await one.step() == "start"
        assert await two.step() == "stop"
        await until(lambda: counts.runs["planner"] == 3)
    finally:
        for each in (one, two):
            await each.scheduler.stop()
    assert counts.outcomes == {("planner", "ok"): 2, ("planner", "skipped"): 1}
    slots = await store.job_slots.since("planner", 0.0)
    assert [s.worker for s in slots] == ["w1", "w2"] and slots[1].slot - slots[0].slot == every.total_seconds()


async def test_a_new_leader_runs_the_planner_slot_its_predecessor_was_cut_off_in_at_once(
        store: MemoryStore, second_store: MemoryStore, tmp_path: Path) -> None:
    clock, counts = Clock(time.time()), JobCounts()
    one = worker(store, tmp_path / "w1", "w1", counts, clock)
    two = worker(second_store, tmp_path / "w2", "w2", counts, clock)
    assert await one.step() == "start"
    await one.scheduler.stop()  # w1 dies in the middle of the planner's run: the slot is claimed, never done
    assert await store.job_slots.claim("planner", one.scheduler.planner_slot(time.time()), "w1", time.time())
    clock.now += HOLD_SECONDS
    try:
        assert await two.step() == "start"  # a fresh job store: its planner's next slot is a quarter of an hour away
        await until(lambda: counts.runs["planner"] == 1)
        await asyncio.sleep(0.3)  # time for a second run, were there one
    finally:
        await two.scheduler.stop()
    assert counts.outcomes == {("planner", "ok"): 1}
    latest = await store.job_slots.latest("planner")
    assert latest is not None and latest.worker == "w2" and latest.done_at is not None


async def test_a_planner_run_whose_slot_the_next_leader_took_over_stops_at_the_next_user(
        store: MemoryStore, second_store: MemoryStore, tmp_path: Path) -> None:
    clock, counts = Clock(time.time()), JobCounts()
    one = worker(store, tmp_path / "w1", "w1", counts, clock)
    scope = await store.scope("mnemo", "tg:1")
    await store.messages.add(scope, "user", "Hallo!")
    slot = one.scheduler.planner_slot(clock.now)
    assert await store.leases.take(SCHEDULER, "w1", clock.now, HOLD_SECONDS)
    assert await store.job_slots.claim("planner", slot, "w1", clock.now)  # w1 stalls in its run, the lease runs out
    assert await second_store.leases.take(SCHEDULER, "w2", clock.now + HOLD_SECONDS, HOLD_SECONDS)
    assert await second_store.job_slots.claim("planner", slot, "w2", clock.now + HOLD_SECONDS)
    assert not await one.scheduler.plan(clock.now, slot)  # w1 goes on: it decides for nobody
    assert await store.state.get(scope, LAST_DECISION) is None
    assert await one.scheduler.plan(clock.now)  # without a slot (a simulated clock's run): everybody
    assert await store.state.get(scope, LAST_DECISION) is not None


async def test_two_schedulers_pushing_one_due_reminder_at_once_send_it_once(
        store: MemoryStore, second_store: MemoryStore) -> None:
    """A leader that lost its lease without knowing it yet and the next one may both push the same reminder: it is
    fired (moved on and its message recorded) in one conditional transaction, so only one of them sends it."""
    scope = await store.scope("mnemo", "tg:1")
    due = await store.reminders.add(scope, "Tabletten nehmen", time.time() - 1)
    channels = [RecordingSender(), RecordingSender()]
    senders = [OutboxSender(each, channel) for each, channel in zip((store, second_store), channels)]
    for name, sender in zip(("w1", "w2"), senders):
        sender.worker = name
    pushed = await asyncio.gather(*(push_due(each, sender, scope, time.time(), BERLIN, "de")
                                    for each, sender in zip((store, second_store), senders)))
    assert sorted(pushed) == [0, 1]
    assert sum(len(channel.sent) for channel in channels) == 1
    assert [(i.kind, i.status) for i in await store.outbox.items(scope)] == [("reminder", "sent")]
    assert (await store.reminders.get(scope, due.id)).status == "done"
    again = await store.reminders.fire(scope, due, None, time.time(), "⏰ Tabletten nehmen", (), None)
    assert again is None and len(await store.outbox.items(scope)) == 1, "fired once, never again"


async def test_a_leader_keeps_its_lease_while_writing_the_jobs_of_many_people(
        store: MemoryStore, second_store: MemoryStore, tmp_path: Path) -> None:
    """Starting a scheduler writes each person's jobs to its job store, which can take longer than the lease is
    held: the leader renews it meanwhile, so no second worker starts a scheduler beside it. The lease's clock is
    the test's: 12 seconds pass every 0.05 s while the leader renews every 0.01 s and holds 60 (a renewal may come
    a quarter of a second late, as on a loaded two-core CI machine, where 25 s a step left 0.12 s)."""
    for n in range(200):
        await store.messages.add(await store.scope("mnemo", f"tg:{n}"), "user", "Hallo!")
    clock, counts = Clock(time.time()), JobCounts()
    one = worker(store, tmp_path / "w1", "w1", counts, clock)
    two = worker(second_store, tmp_path / "w2", "w2", counts, clock)
    one.every = 0.01
    seen: list[str] = []
    started = asyncio.Event()

    async def leader() -> str:
        action = await one.step()
        started.set()
        return action

    async def meanwhile() -> None:
        while not started.is_set():
            await asyncio.sleep(0.05)
            clock.now += 12
            seen.append(await two.step())

    try:
        first, _ = await asyncio.gather(leader(), meanwhile())
        assert first == "start" and len(seen) >= 6, f"{len(seen)} steps: the start was over before the lease ran out"
        assert set(seen) == {"wait"}, seen
    finally:
        await one.scheduler.stop()
        await two.scheduler.stop()


class TakingOverComposer:
    """Writes a check-in; while the first worker writes its own, the second takes the lease and plans the slot."""

    def __init__(self, name: str, sent: list[str]) -> None:
        self.name, self.sent = name, sent
        self.meanwhile: Callable[[], object] | None = None

    async def compose_proactive(self, scope: Scope, reason: str, detail: str) -> str:
        if self.meanwhile is not None:
            takeover, self.meanwhile = self.meanwhile, None
            await takeover()  # type: ignore[misc]
        return f"Wie geht es dir? ({self.name})"


async def lost_lease_in_the_middle_of_a_person(store: MemoryStore, second_store: MemoryStore,
                                                folder: Path) -> list[str]:
    """Two workers on one database and a fake clock: w1 plans a slot and, while it writes Anna's check-in, loses the
    lease; w2 takes it and plans the same slot. What Anna got."""
    start = datetime(2026, 11, 25, 12, 0, 10, tzinfo=BERLIN).timestamp()
    scope = await store.scope("mnemo", "tg:1")
    await store.messages.add(scope, "user", "Hallo!", created_at=start - 3 * 86400)
    sent: list[str] = []
    schedulers = []
    for name, its_store in (("w1", store), ("w2", second_store)):
        composer = TakingOverComposer(name, sent)
        sender = RecordingSender()
        sender.sent = sent
        scheduler = Scheduler(its_store, "mnemo", LLMWriter(ScriptedLLM("background")), composer,  # type: ignore[arg-type]
                              sender, BERLIN, folder / name, silence=timedelta(hours=48), clock=Clock(start))
        scheduler.worker = name
        schedulers.append((scheduler, composer))
    (one, first), (two, _) = schedulers

    async def takeover() -> None:  # w1's lease ran out while it waited for the model
        assert await second_store.leases.take(SCHEDULER, "w2", start + HOLD_SECONDS, HOLD_SECONDS)
        assert await two.plan_once(start + HOLD_SECONDS) == "ok"

    first.meanwhile = takeover
    assert await store.leases.take(SCHEDULER, "w1", start, HOLD_SECONDS)
    await one.plan_once(start)
    return sent


async def test_a_worker_losing_the_lease_in_the_middle_of_a_person_sends_one_checkin(
        store: MemoryStore, second_store: MemoryStore, tmp_path: Path) -> None:
    sent = await lost_lease_in_the_middle_of_a_person(store, second_store, tmp_path)
    assert sent == ["Wie geht es dir? (w1)"], "one check-in per person and slot"
    scope = await store.scope("mnemo", "tg:1")
    assert [m.text for m in await store.messages.recent(scope, 10) if m.proactive] == sent


async def test_a_worker_whose_clock_runs_30_s_ahead_cannot_steal_a_live_lease(
        store: MemoryStore, second_store: MemoryStore) -> None:
    if store.db.dialect != "postgres":
        pytest.skip("SQLite is one process with one clock")
    def ahead() -> float:
        return time.time() + 30

    second_store.leases.clock = ahead  # w2's machine: every clock it reads runs 30 s ahead
    assert await store.leases.take(SCHEDULER, "w1", time.time(), 25)  # w1 holds it 25 s more
    assert not await second_store.leases.take(SCHEDULER, "w2", ahead(), HOLD_SECONDS), "w1's lease still stands"
    seen = await second_store.leases.current(SCHEDULER, ahead())
    assert seen is not None and seen.holder == "w1"
    assert 20 < seen.until - ahead() <= 25, "its end, told on w2's clock"
    assert not await second_store.job_slots.claim("planner", 0.0, "w2", ahead()), "nor run a slot meanwhile"
    assert await second_store.leases.take(SCHEDULER, "w2", ahead() + 25, HOLD_SECONDS), "25 s on, it ran out"


async def test_the_database_clock_is_asked_once_a_minute_not_at_every_lease(
        store: MemoryStore, second_store: MemoryStore) -> None:
    """A worker waiting for a learning lock asks for it every 50 ms: each ask is one statement, the database's clock
    is read once a minute (and again at once for another process clock)."""
    if store.db.dialect != "postgres":
        pytest.skip("SQLite is one process with one clock")
    reads, since = [], [0.0]

    def clock() -> float:
        reads.append(time.time())
        return time.time() + 30  # this machine's clock runs 30 s ahead

    leases = second_store.leases
    leases.clock, leases.monotonic = clock, lambda: since[0]
    assert await store.leases.take(SCHEDULER, "w1", time.time(), 25)
    for _ in range(20):
        assert not await leases.take(SCHEDULER, "w2", clock(), HOLD_SECONDS), "w1's lease still stands"
    asked = len(reads) - 20  # the twenty reads the loop made itself aside
    assert asked == 2, "one measurement: the clock read before and after the server's"
    since[0] = 59.0
    assert (await leases.current(SCHEDULER, clock())) is not None and len(reads) - 21 == 2
    since[0] = 60.0  # a minute on: asked again
    assert (await leases.current(SCHEDULER, clock())) is not None and len(reads) - 22 == 4
    leases.clock = time.time  # another clock (a test's, a corrected one): asked at once, and told right
    lease = await leases.current(SCHEDULER, time.time())
    assert lease is not None and 20 < lease.until - time.time() <= 25


async def test_a_reminder_one_leader_is_sending_is_not_sent_again_by_the_next_leaders_flush(
        store: MemoryStore, second_store: MemoryStore, tmp_path: Path) -> None:
    """The CI failure of the killed-workers scenario: a leader fires a reminder and, while its push is under way (the
    messenger slow under load), loses the lease; the next leader's planner retries the outbox at once. Workers made
    the way every worker is (behind `SchedulerLeader`) claim what they send, so the retry leaves it alone."""
    clock, counts = Clock(time.time()), JobCounts()
    first, second = (worker(each, tmp_path / name, name, counts, clock)
                     for each, name in ((store, "w1"), (second_store, "w2")))
    scope = await store.scope("mnemo", "tg:1")
    await store.reminders.add(scope, "Tabletten nehmen", clock() - 1)
    sent: list[str] = []
    retried: list[int] = []

    class Slow(RecordingSender):
        async def deliver(self, scope: Scope, text: str, buttons: object = ()) -> bool:
            retried.append(await second.scheduler.outbox.flush([scope]))  # the next leader's planner, meanwhile
            sent.append(text)
            return True

    first.scheduler.outbox.channel = Slow()
    second.scheduler.outbox.channel = RecordingSender()
    assert await push_due(store, first.scheduler.outbox, scope, clock(), BERLIN, "de") == 1
    assert retried == [0] and sent == ["⏰ Tabletten nehmen"]
    assert second.scheduler.outbox.channel.sent == []  # type: ignore[attr-defined]
