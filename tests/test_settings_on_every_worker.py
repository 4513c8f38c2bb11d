"""/settings on every worker: a worker that is not the scheduler's leader answers normally, and the leader moves the
person's jobs within one renew step (on the leader itself at once). A zone change moves repeating reminders and
learned hours once, whichever worker took it. Workers here are engines, commands and schedulers behind the lease,
each on its own connection to one database (SQLite and PostgreSQL), with fake clocks for the leases."""
from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from bot.exchange import Reply
from bot.texts import t
from memory.ledgers import audit
from memory.records.kinship import PersonDraft
from memory.records.person_dates import YearlyDate
from memory.store import MemoryStore
from scheduler.leader import SchedulerLeader
from tests.fakes.clock import Clock
from tests.fakes.llm import ScriptedLLM
from tests.test_scheduler_leader import JobCounts, worker

pytestmark = pytest.mark.both_backends("settings reaching the scheduler's leader")

BERLIN, TOKYO = ZoneInfo("Europe/Berlin"), ZoneInfo("Asia/Tokyo")
USER = "tg:42"


@asynccontextmanager
async def workers(stores: Sequence[MemoryStore], folder: Path) -> AsyncIterator[list[tuple[SchedulerLeader, Commands]]]:
    """One worker per store: its scheduler behind the lease and the commands it answers; the first leads."""
    clock, counts = Clock(time.time()), JobCounts()
    made: list[tuple[SchedulerLeader, Commands]] = []
    engines = []
    try:
        for n, store in enumerate(stores, 1):
            leader = worker(store, folder / f"w{n}", f"w{n}", counts, clock)
            engine = Engine(store, ScriptedLLM("chat"), ScriptedLLM("background"),
                            EngineConfig(zone=BERLIN, relevance_floor=0.0))
            engines.append(engine)
            made.append((leader, Commands(engine, leader.scheduler)))
        assert [await each.step() for each, _ in made] == ["start"] + ["wait"] * (len(made) - 1)
        yield made
    finally:
        for each, _ in made:
            await each.scheduler.stop()
        for engine in engines:
            await engine.close()


def saved(reply: Reply | None) -> bool:
    return reply is not None and not reply.failed and reply.bubbles[0].startswith(t("de", "settings_saved"))


async def test_settings_on_a_worker_that_is_not_the_leader_are_answered_and_the_leaders_jobs_move(
        store: MemoryStore, second_store: MemoryStore, tmp_path: Path) -> None:
    scope = await store.scope("mnemo", USER)
    await store.messages.add(scope, "user", "Hallo!")
    p = audit.new_processing("test")
    miriam = await store.people.observe(scope, PersonDraft("Miriam", relation="Schwester"), processing=p)
    await store.person_dates.note(scope, miriam.id, YearlyDate("birthday", 3, 3), processing=p)
    async with workers([store, second_store], tmp_path) as [(leader, _), (other, commands)]:
        assert not other.scheduler.running
        assert saved(await commands.run(USER, "/settings morgen 07:30", channel="tg", ref="1"))
        assert saved(await commands.run(USER, "/settings stunden 8-20", channel="tg", ref="2"))
        assert saved(await commands.run(USER, "/settings tagebuch 21:15", channel="tg", ref="3"))
        assert await leader.step() == "sync"  # one renew step later
        fires = leader.scheduler.next_fires(time.time())
        assert (fires[f"morning:{scope.id}"].hour, fires[f"morning:{scope.id}"].minute) == (7, 30)
        assert fires[f"dates:{scope.id}"].hour == 8
        assert (fires[f"diary:{scope.id}"].hour, fires[f"diary:{scope.id}"].minute) == (21, 15)


async def test_settings_on_the_leader_move_its_jobs_at_once(
        store: MemoryStore, second_store: MemoryStore, tmp_path: Path) -> None:
    scope = await store.scope("mnemo", USER)
    await store.messages.add(scope, "user", "Hallo!")
    async with workers([store, second_store], tmp_path) as [(leader, commands), _]:
        assert saved(await commands.run(USER, "/settings morgen 06:45", channel="tg", ref="1"))
        at = leader.scheduler.next_fires(time.time())[f"morning:{scope.id}"]
        assert (at.hour, at.minute) == (6, 45), "no renew step needed"


async def test_settings_zone_on_a_worker_that_is_not_the_leader_moves_reminders_and_hours_once(
        store: MemoryStore, second_store: MemoryStore, tmp_path: Path) -> None:
    scope = await store.scope("mnemo", USER)
    await store.messages.add(scope, "user", "Hallo!")
    now = time.time()
    eight = datetime.fromtimestamp(now + 2 * 86400, BERLIN).replace(hour=8, minute=0, second=0, microsecond=0)
    daily = await store.reminders.add(scope, "Tabletten", eight.timestamp(), "daily", now=now)
    await store.rhythm.observe(scope, eight.replace(hour=20).timestamp() - 7 * 86400, BERLIN, answered=False)
    before = await store.rhythm.histogram(scope, now)
    async with workers([store, second_store], tmp_path) as [(leader, _), (_, commands)]:
        assert saved(await commands.run(USER, "/settings zeitzone Tokio", channel="tg", ref="1"))
        for _ in range(3):  # the leader's steps move jobs, never the reminders or hours again
            assert await leader.step() == "sync"
        fires = leader.scheduler.next_fires(now)
        assert fires[f"reflect:{scope.id}"].tzinfo == TOKYO and fires[f"reflect:{scope.id}"].hour == 22
        moved = await store.reminders.get(scope, daily.id)
        assert moved.due_at.astimezone(TOKYO).hour == 8, "8:00 on the person's new clock"
        assert abs(fires[f"reminder:{daily.id}"].timestamp() - moved.due_at.timestamp()) < 1
        edits = [e for each in await audit.processings(store.db, scope.id) for e in each.entries
                 if e.item_type == "reminder" and e.action == "update"]
        assert len(edits) == 1, "moved once"
    after = await store.rhythm.histogram(scope, now)
    weekday = eight.weekday()
    assert before.wrote[weekday][20] > 0 and after.wrote[(weekday + 1) % 7][4] == pytest.approx(
        before.wrote[weekday][20]), "20:00 Berlin is 04:00 the next day in Tokyo: shifted 8 hours, once"


async def test_a_hundred_settings_spread_over_three_workers_are_all_answered(
        store: MemoryStore, second_store: MemoryStore, tmp_path: Path, embedder: object,
        database_url: str | None) -> None:
    """The issue's figure: /settings answered on every worker, 100 of 100 (ten people, each command on the next
    worker); after one step the leader's jobs are each person's last choice."""
    third = await MemoryStore.open(tmp_path / "mnemo.sqlite3", embedder, semantic_dedupe=0.97,  # type: ignore[arg-type]
                                   database_url=database_url)
    people = [await store.scope("mnemo", f"tg:{n}") for n in range(10)]
    for scope in people:
        await store.messages.add(scope, "user", "Hallo!")
    try:
        async with workers([store, second_store, third], tmp_path) as made:
            answered, last = 0, {}
            for n in range(100):
                person, (_, commands) = n % 10, made[n % 3]
                key, value = ("morgen", f"07:{n % 60:02d}") if n // 10 % 2 else ("tagebuch", f"21:{n % 60:02d}")
                answered += saved(await commands.run(f"tg:{person}", f"/settings {key} {value}", channel="tg",
                                                     ref=str(n)))
                last[person, key] = value
            assert answered == 100
            leader = made[0][0]
            assert await leader.step() == "sync"
            fires = leader.scheduler.next_fires(time.time())
            for person, scope in enumerate(people):
                for key, job in (("morgen", "morning"), ("tagebuch", "diary")):
                    assert f"{fires[f'{job}:{scope.id}']:%H:%M}" == last[person, key]
    finally:
        await third.close()


async def failing_reminder_moves(store: MemoryStore, on: bool) -> None:
    """A database that refuses to move a reminder (a disk gone, a connection lost half-way): a trigger that raises."""
    async with store.db.transaction() as tx:
        if store.db.dialect == "postgres":
            if on:
                await tx.execute("CREATE FUNCTION refuse_move() RETURNS trigger LANGUAGE plpgsql AS"
                                 " 'BEGIN RAISE EXCEPTION ''refused''; END'", ())
                await tx.execute("CREATE TRIGGER refuse_move BEFORE UPDATE OF due_at ON reminders"
                                 " FOR EACH ROW EXECUTE FUNCTION refuse_move()", ())
            else:
                await tx.execute("DROP TRIGGER refuse_move ON reminders", ())
        elif on:
            await tx.execute("CREATE TRIGGER refuse_move BEFORE UPDATE OF due_at ON reminders"
                             " BEGIN SELECT RAISE(ABORT, 'refused'); END", ())
        else:
            await tx.execute("DROP TRIGGER refuse_move", ())


async def test_a_zone_change_cut_off_half_way_changes_nothing_and_its_retry_moves_everything_once(
        store: MemoryStore, tmp_path: Path) -> None:
    scope = await store.scope("mnemo", USER)
    await store.messages.add(scope, "user", "Hallo!")
    now = time.time()
    eight = datetime.fromtimestamp(now + 2 * 86400, BERLIN).replace(hour=8, minute=0, second=0, microsecond=0)
    daily = await store.reminders.add(scope, "Tabletten", eight.timestamp(), "daily", now=now)
    await store.rhythm.observe(scope, eight.replace(hour=20).timestamp() - 7 * 86400, BERLIN, answered=False)
    before = await store.rhythm.histogram(scope, now)
    engine = Engine(store, ScriptedLLM("chat"), ScriptedLLM("background"), EngineConfig(zone=BERLIN))
    try:
        commands = Commands(engine)
        await failing_reminder_moves(store, on=True)
        with pytest.raises(Exception, match="refused"):
            await commands.run(USER, "/settings zeitzone Tokio")
        assert (await store.preferences.get(scope)).timezone == "", "nothing half done"
        assert (await store.rhythm.histogram(scope, now)).wrote == before.wrote
        await failing_reminder_moves(store, on=False)
        assert saved(await commands.run(USER, "/settings zeitzone Tokio"))  # the person tries again
    finally:
        await engine.close()
    assert (await store.reminders.get(scope, daily.id)).due_at.astimezone(TOKYO).hour == 8
    after = await store.rhythm.histogram(scope, now)
    assert after.wrote[(eight.weekday() + 1) % 7][4] == pytest.approx(before.wrote[eight.weekday()][20])
