"""When nobody is talking: two simulated days of jobs, the budget, and a restart with a missed diary."""
from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.channels.push import ChannelSender
from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.llm.writer import LLMWriter
from memory.models import Scope
from memory.store import MemoryStore
from scheduler.service import Scheduler
from tests.fakes.llm import Call, ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram

BERLIN = ZoneInfo("Europe/Berlin")
DAY1 = datetime(2026, 11, 24, 0, 0, tzinfo=BERLIN)
QUARTER = 15 * 60


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class RecordingSender:
    """A channel that records what it delivered, with the simulated time."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.sent: list[tuple[float, str, str]] = []

    async def deliver(self, scope: Scope, text: str) -> bool:
        self.sent.append((self.clock.now, scope.user_id, text))
        return True


def background_model(topic_due: datetime | None, concern: str = "") -> object:
    """Extraction yields one topic; reflection yields a thought (and a concern); the diary gets a text."""
    def respond(call: Call) -> str:
        system = call.system[0].text
        if "extract memories" in system:
            ids = [int(i) for i in re.findall(r"^\[(\d+)\] user:", call.messages[0].content, re.M)]
            topics = [{"text": "Wie war der Zahnarzttermin?", "due": topic_due.isoformat(), "source_ids": ids[:1]}] \
                if topic_due and ids else []
            return json.dumps({"facts": [], "content": [], "profile": [], "topics": topics})
        if "reflecting privately" in system:
            return json.dumps({"thoughts": ["Anna ist vor Arztterminen nervös."], "concern": concern})
        if "diary" in system:
            return "Heute hat Anna mir von ihrem Zahnarzttermin erzählt."
        return json.dumps({"facts": [], "content": [], "profile": []})
    return respond


@pytest.fixture
async def world(store: MemoryStore,
                tmp_path: Path) -> AsyncIterator[tuple[Engine, Scheduler, RecordingSender, Clock, ScriptedLLM]]:
    clock = Clock(DAY1.timestamp())
    chat, background = ScriptedLLM("chat"), ScriptedLLM("background")
    chat.responder = lambda call: ("Wie ist es beim Zahnarzt gelaufen?" if "has not written" in call.prompt
                                   else "Alles Gute!")
    engine = Engine(store, chat, background, EngineConfig(zone=BERLIN), clock=clock)
    sender = RecordingSender(clock)
    scheduler = Scheduler(store, "mnemo", LLMWriter(background), engine, sender, BERLIN, tmp_path,
                          silence=timedelta(hours=48), clock=clock)
    yield engine, scheduler, sender, clock, background
    await engine.close()


async def drive(scheduler: Scheduler, clock: Clock, until: datetime) -> None:
    """Advance the simulated clock in 15-minute steps, running every job that falls due."""
    while clock.now < until.timestamp():
        start, clock.now = clock.now, clock.now + QUARTER
        await scheduler.run_due(start, clock.now)


async def learnt(engine: Engine, user_id: str, replies: int = 1) -> None:
    """Wait until the turn of the last message ended and its learning ran. The channel streams: the reply's first
    bubble is out before the turn logs the reply and schedules the learning, so `drain` alone may come too early."""
    scope = await engine.scope_for(user_id)
    for _ in range(1000):
        logged = [m for m in await engine.store.messages.recent(scope, 50) if m.role == "assistant"]
        if len(logged) >= replies:
            await engine.drain()
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the turn of {user_id}'s message never ended")


@asynccontextmanager
async def on_telegram(store: MemoryStore, data_dir: Path, clock: Clock, chat: ScriptedLLM, background: ScriptedLLM,
                      silence: timedelta | None = None) -> AsyncIterator[tuple[FakeTelegram, Engine, Scheduler]]:
    """Telegram user 42 and the companion on `clock`: the engine, the channel against the fake Bot API, the
    scheduler."""
    engine = Engine(store, chat, background, EngineConfig(zone=BERLIN), clock=clock)
    async with FakeTelegram(token="123:ABC") as tg:
        channel = TelegramChannel(engine, Commands(engine), TelegramConfig(
            token=tg.token, base_url=tg.base_url, allowed_users=frozenset({"42"})))
        await channel.start()
        try:
            yield tg, engine, Scheduler(store, "mnemo", LLMWriter(background), engine,
                                        ChannelSender({"telegram": channel}), BERLIN, data_dir, silence=silence,
                                        clock=clock)
        finally:
            await channel.stop()
            await engine.close()


async def test_two_days_of_jobs_end_to_end(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, scheduler, sender, clock, background = world
    background.responder = background_model(DAY1 + timedelta(days=1, hours=12))  # type: ignore[assignment]
    clock.now = (DAY1 + timedelta(hours=10)).timestamp()
    await engine.handle(Incoming("tg:1", "Morgen um 10 habe ich einen Zahnarzttermin."))
    await engine.drain()
    scope = await engine.scope_for("tg:1")
    assert [tp.text for tp in await store.topics.list(scope)] == ["Wie war der Zahnarzttermin?"]

    await drive(scheduler, clock, DAY1 + timedelta(days=2))

    assert [(datetime.fromtimestamp(at, BERLIN).strftime("%d. %H:%M"), text) for at, _, text in sender.sent] == [
        ("25. 12:00", "Wie ist es beim Zahnarzt gelaufen?")]
    reflections = [th for th in await store.thoughts.latest(scope, 10) if th.origin == "reflection"]
    # Anna wrote on the 24th only: the companion's own check-in of the 25th is no news to reflect on.
    assert [th.created_at.astimezone(BERLIN).strftime("%d. %H:%M") for th in reflections] == ["24. 22:00"]
    entries = await store.diary.latest(scope, 5)
    assert [e.day for e in entries] == ["2026-11-24"], "no diary on a day without a conversation"
    assert (await store.topics.list(scope, "raised"))[0].text == "Wie war der Zahnarzttermin?"
    proactive = await store.messages.last_proactive(scope)
    assert proactive is not None and proactive.text == "Wie ist es beim Zahnarzt gelaufen?"


async def test_the_20_hour_budget_holds_when_every_reason_fires(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, scheduler, sender, clock, background = world
    background.responder = background_model(DAY1 + timedelta(hours=19), concern="Anna wirkte erschöpft.")  # type: ignore[assignment]
    clock.now = (DAY1 - timedelta(days=2, hours=-9)).timestamp()  # two days of silence before
    await engine.handle(Incoming("tg:1", "Heute Abend ist mein Zahnarzttermin."))
    await engine.drain()
    await drive(scheduler, clock, DAY1 + timedelta(days=2))
    times = [at for at, _, _ in sender.sent]
    assert times, "something was due"
    assert all(b - a >= 20 * 3600 for a, b in zip(times, times[1:]))
    assert len(times) == 1, "never twice in a row without a reply"
    for at in times:
        assert 9 <= datetime.fromtimestamp(at, BERLIN).hour < 21, "no push outside active hours"


async def test_no_push_outside_active_hours(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, scheduler, sender, clock, background = world
    background.responder = background_model(DAY1 + timedelta(hours=21, minutes=30))  # type: ignore[assignment]
    clock.now = (DAY1 + timedelta(hours=8)).timestamp()
    await engine.handle(Incoming("tg:1", "Heute spät habe ich noch einen Termin."))
    await engine.drain()
    scope = await engine.scope_for("tg:1")
    await store.preferences.set(scope, "active_hours", "10-20")
    await drive(scheduler, clock, DAY1 + timedelta(days=1, hours=10))
    assert [datetime.fromtimestamp(at, BERLIN).strftime("%d. %H:%M") for at, _, _ in sender.sent] == ["25. 10:00"]


async def test_a_restart_keeps_the_jobs_and_runs_a_missed_diary_once(world, store: MemoryStore, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    engine, scheduler, sender, clock, background = world
    background.responder = background_model(None)  # type: ignore[assignment]
    clock.now = datetime.now(BERLIN).timestamp() - 3600
    await engine.handle(Incoming("tg:1", "Heute war ein langer Tag."))
    await engine.drain()
    scope = await engine.scope_for("tg:1")
    await scheduler.start()
    await scheduler.stop()
    assert (tmp_path / "jobs.sqlite3").exists()

    await asyncio.sleep(0.1)  # let callbacks queued before the shutdown finish

    # While mnemo was down, tonight's diary time passed: move the stored job's next run into the past
    # (straight in the job store: a second scheduler in this process would process the job itself).
    jobstore = SQLAlchemyJobStore(url=scheduler.jobs_url)
    jobstore.start(AsyncIOScheduler(), "default")
    assert {job.id for job in jobstore.get_all_jobs()} == {"planner", f"reflect:{scope.id}", f"diary:{scope.id}"}
    job = jobstore.lookup_job(f"diary:{scope.id}")
    job._modify(next_run_time=datetime.now(BERLIN) - timedelta(hours=2))  # noqa: SLF001
    jobstore.update_job(job)
    jobstore.shutdown()

    clock.now = datetime.now(BERLIN).timestamp()
    await scheduler.start()
    try:
        for _ in range(50):
            if await store.diary.count(scope):
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.3)
        assert await store.diary.count(scope) == 1
        job = scheduler._aps.get_job(f"diary:{scope.id}") if scheduler._aps else None  # noqa: SLF001
        assert job is not None and job.next_run_time > datetime.now(BERLIN)
    finally:
        await scheduler.stop()


class FlakySender:
    """A channel that fails a number of times before it accepts messages."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.delivered: list[str] = []

    async def deliver(self, scope: Scope, text: str) -> bool:
        if self.failures > 0:
            self.failures -= 1
            raise ConnectionError("503 from the messenger")
        self.delivered.append(text)
        return True


async def test_outbox_retries_with_backoff_and_delivers_exactly_once_across_a_restart(store: MemoryStore) -> None:
    from scheduler.delivery import BACKOFF, OutboxSender

    clock = Clock((DAY1 + timedelta(hours=10)).timestamp())  # within the active hours: a check-in fits
    scope = await store.scope("mnemo", "tg:1")
    await store.messages.add(scope, "user", "Hallo", created_at=clock.now)
    flaky = FlakySender(failures=2)
    outbox = OutboxSender(store, flaky, clock)
    assert not await outbox.deliver(scope, "Wie geht es dir?")
    assert await outbox.flush([scope]) == 0, "not due before the backoff"
    clock.now += BACKOFF[0]
    assert await outbox.flush([scope]) == 0  # second failure
    restarted = OutboxSender(store, flaky, clock)  # a restart: only the database carries the message
    clock.now += BACKOFF[1]
    assert await restarted.flush([scope]) == 1
    clock.now += 3600
    assert await restarted.flush([scope]) == 0
    assert flaky.delivered == ["Wie geht es dir?"]
    assert [(i.status, i.attempts) for i in await store.outbox.items(scope)] == [("sent", 3)]
    assert (await store.messages.last_proactive(scope)).text == "Wie geht es dir?"  # type: ignore[union-attr]


async def test_when_the_model_fails_nothing_is_sent(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    from bot.errors import LLMUnavailable

    engine, scheduler, sender, clock, background = world
    clock.now = (DAY1 + timedelta(hours=10)).timestamp()
    await engine.handle(Incoming("tg:1", "Hallo"))
    await engine.drain()
    chat = engine.chat
    assert isinstance(chat, ScriptedLLM)
    chat.responder = lambda call: (_ for _ in ()).throw(LLMUnavailable("down"))  # type: ignore[assignment]
    await drive(scheduler, clock, DAY1 + timedelta(days=3))
    assert sender.sent == []
    scope = await engine.scope_for("tg:1")
    assert await store.outbox.items(scope) == []
