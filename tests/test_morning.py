"""The morning brief and the yearly dates through the real scheduler on a simulated clock (pure facts first)."""
from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.errors import LLMUnavailable
from bot.llm.writer import LLMWriter
from bot.open_meteo import OpenMeteo
from memory.ledgers import audit
from memory.models import Scope
from memory.records.kinship import PersonDraft
from memory.records.person_dates import YearlyDate
from memory.records.preferences import Preferences
from memory.store import MemoryStore
from scheduler.delivery import verdict
from scheduler.morning import (
    BriefFacts,
    brief_ahead,
    brief_carries_dates,
    brief_facts,
    brief_today,
    dates_to_push,
    item_lines,
)
from scheduler.service import Scheduler
from scheduler.yearly_dates import DueDate
from tests.fakes.llm import Call, ScriptedLLM
from tests.fakes.open_meteo import FakeOpenMeteo
from tests.test_scheduler import Clock, RecordingSender

BERLIN = ZoneInfo("Europe/Berlin")
OPENING = "Guten Morgen, du Frühaufsteherin!"


def voice(call: Call) -> str:
    """The chat model: an opening for the brief, a line for a date, else a check-in."""
    if "morning brief" in call.prompt:
        return OPENING
    if "yearly date" in call.prompt:
        return "Denk an Miriam heute!"
    return "Na, wie geht's?"


class World:
    """One person who wrote once, the engine on scripted models, and a scheduler on a simulated clock."""

    def __init__(self, store: MemoryStore, tmp_path: Path, start: datetime) -> None:
        self.store, self.tmp_path = store, tmp_path
        self.clock = Clock(start.timestamp())
        self.chat, self.background = ScriptedLLM("chat"), ScriptedLLM("background")
        self.chat.responder = voice
        self.engine = Engine(store, self.chat, self.background, EngineConfig(zone=BERLIN), clock=self.clock)
        self.sender = RecordingSender(self.clock)
        self.scope: Scope
        self.weather: OpenMeteo | None = None

    def scheduler(self) -> Scheduler:
        return Scheduler(self.store, "mnemo", LLMWriter(self.background), self.engine, self.sender, BERLIN,
                         self.tmp_path, silence=timedelta(days=400), clock=self.clock, weather=self.weather)

    async def person(self, user: str = "tg:1", **prefs: object) -> Scope:
        await self.engine.handle(Incoming(user, "Hallo!"))
        self.scope = await self.engine.scope_for(user)
        await self.store.preferences.set(self.scope, "checkins", False)
        for key, value in prefs.items():
            await self.store.preferences.set(self.scope, key, value)
        return self.scope

    async def birthday(self, month: int, day: int, year: int | None = None, scope: Scope | None = None) -> None:
        p = audit.new_processing("test")
        miriam = await self.store.people.observe(scope or self.scope, PersonDraft("Miriam", relation="Schwester"),
                                                 processing=p)
        await self.store.person_dates.note(scope or self.scope, miriam.id, YearlyDate("birthday", month, day, year),
                                           processing=p)

    async def drive(self, until: datetime, scheduler: Scheduler | None = None) -> None:
        scheduler = scheduler or self.scheduler()
        while self.clock.now < until.timestamp():
            # Steps end on the quarter hours, so the sender's clock reads the time the jobs ran at.
            start, self.clock.now = self.clock.now, min(self.clock.now // 900 * 900 + 900, until.timestamp())
            await scheduler.run_due(start, self.clock.now)

    def sent(self) -> list[tuple[str, str]]:
        return [(datetime.fromtimestamp(at, BERLIN).strftime("%Y-%m-%d %H:%M"), text)
                for at, _, text in self.sender.sent]


@pytest.fixture
async def world(store: MemoryStore, tmp_path: Path) -> AsyncIterator[World]:
    w = World(store, tmp_path, datetime(2026, 11, 23, 20, 0, tzinfo=BERLIN))
    yield w
    await w.engine.close()


# --- pure ----------------------------------------------------------------------------------------------------


def test_the_briefs_facts_are_the_local_days_and_its_lines_carry_the_times() -> None:
    from memory.models import OpenTopic
    from memory.records.reminders import StoredReminder

    now = datetime(2026, 3, 29, 7, 30, tzinfo=BERLIN)  # the morning after the switch to summer time
    at = lambda d, h, m=0: datetime(2026, 3, d, h, m, tzinfo=BERLIN)  # noqa: E731
    reminders = [StoredReminder(1, "Zahnarzt", at(29, 14), "", "active", at(20, 9)),
                 StoredReminder(2, "Steuer", at(30, 0, 30), "", "active", at(20, 9))]
    topics = [OpenTopic(1, "Wie war das Vorstellungsgespräch?", at(29, 9), "conversation", "open", at(27, 9)),
              OpenTopic(2, "Wie war der Umzug?", at(31, 9), "conversation", "open", at(27, 9))]
    dates = [DueDate("Miriam", "Schwester", "birthday", date(2026, 3, 30), 40)]
    facts = brief_facts(now, reminders, topics, dates, "Wetter: klar, 3–12 °C")
    assert item_lines(facts, "de") == ["🎂 Morgen: Geburtstag von Miriam (Schwester) – 40 Jahre", "⏰ 14:00 Zahnarzt",
                                       "💬 Wie war das Vorstellungsgespräch?", "🌤 Wetter: klar, 3–12 °C"]
    assert item_lines(facts, "en")[0] == "🎂 Tomorrow: Miriam (Schwester)'s birthday – 40 years"
    assert BriefFacts(now.date(), weather="Wetter: klar").empty, "the weather alone is no news"


def test_the_brief_carries_the_dates_so_the_date_push_stays_quiet() -> None:
    today = date(2027, 3, 3)
    due = [DueDate("Miriam", "", "birthday", today, None), DueDate("Jonas", "", "anniversary", date(2027, 3, 4), 5)]
    assert dates_to_push(Preferences(), today, due, brief_carries=False) == due[:1]
    assert dates_to_push(Preferences(date_notice="eve"), today, due, brief_carries=False) == due[1:]
    assert dates_to_push(Preferences(), today, due, brief_carries=True) == []
    assert not brief_today(Preferences(), reads_in_the_morning=True), "off unless asked for"
    assert brief_today(Preferences(morning="07:30", morning_days="daily"), reads_in_the_morning=False)
    assert not brief_today(Preferences(morning="07:30"), reads_in_the_morning=False)


def test_the_date_push_stands_aside_only_for_a_brief_that_carries_the_dates() -> None:
    at = lambda h, m=0: datetime(2027, 3, 3, h, m, tzinfo=BERLIN)  # noqa: E731
    daily = Preferences(morning="10:00", morning_days="daily")
    assert brief_ahead(daily, False, at(9)) and brief_ahead(daily, False, at(10)), "at 10:00 the brief takes them"
    assert not brief_ahead(daily, False, at(10, 15)), "its time passed and it was not made"
    assert not brief_ahead(Preferences(morning="10:00"), False, at(9)), "not on a day she does not read mornings"
    assert not brief_ahead(Preferences(), True, at(9)), "no brief asked for"
    assert [brief_carries_dates(status, ahead=False) for status in ("pending", "sent", "dropped", "failed", None)] == [
        True, True, False, False, False]
    assert brief_carries_dates(None, ahead=True) and not brief_carries_dates("dropped", ahead=True)


def test_a_brief_before_the_active_hours_goes_out_on_time_and_not_at_noon() -> None:
    written = datetime(2026, 3, 29, 7, 30, tzinfo=BERLIN)
    assert verdict("morning", written, None, written + timedelta(minutes=5), (9, 21)).action == "send"
    assert verdict("morning", written, None, written + timedelta(hours=2), (9, 21)).action == "send"
    assert verdict("morning", written, None, written + timedelta(hours=4), (9, 21)).action == "drop"
    assert verdict("date", written, None, written, (9, 21)).action == "wait"
    assert verdict("date", written, None, written + timedelta(hours=2), (9, 21)).action == "send"


# --- through the scheduler ------------------------------------------------------------------------------------


async def test_the_brief_on_a_day_with_nothing_to_say_greets_or_stays_silent(world: World) -> None:
    await world.person(morning="07:30", morning_days="daily")
    await world.drive(datetime(2026, 11, 24, 12, 0, tzinfo=BERLIN))
    assert world.sent() == [("2026-11-24 07:30", OPENING)]

    world.chat.responder = lambda call: (_ for _ in ()).throw(LLMUnavailable("down"))  # the model fails
    await world.drive(datetime(2026, 11, 25, 12, 0, tzinfo=BERLIN))
    assert world.sent()[1] == ("2026-11-25 07:30", "Guten Morgen! Heute steht nichts an – hab einen schönen Tag.")

    await world.store.preferences.set(world.scope, "morning_empty", "nothing")
    await world.drive(datetime(2026, 11, 27, 12, 0, tzinfo=BERLIN))
    assert len(world.sent()) == 2, "nothing to say, and the person chose silence"
    assert await world.store.messages.last_proactive(world.scope) is None, "the brief is no check-in"


@pytest.mark.parametrize("start", [datetime(2027, 3, 26, 12, tzinfo=BERLIN), datetime(2026, 10, 23, 12, tzinfo=BERLIN)])
async def test_the_brief_is_at_7_30_local_on_both_sides_of_a_dst_switch(world: World, start: datetime) -> None:
    world.clock.now = start.timestamp()
    await world.person(morning="7:30", morning_days="daily")
    await world.drive(start + timedelta(days=4))
    times = [datetime.fromtimestamp(at, BERLIN) for at, _, _ in world.sender.sent]
    assert [f"{t:%H:%M}" for t in times] == ["07:30"] * 4
    assert len({t.utcoffset() for t in times}) == 2, "the switch lies between the briefs"


async def test_a_restart_at_7_29_sends_the_brief_once(world: World) -> None:
    await world.person(morning="07:30", morning_days="daily")
    await world.drive(datetime(2026, 11, 24, 7, 29, tzinfo=BERLIN))
    assert world.sent() == []
    await world.drive(datetime(2026, 11, 24, 8, 0, tzinfo=BERLIN), world.scheduler())  # a new scheduler, same data
    again = world.scheduler()  # another restart at 8:00 whose missed job runs once more
    await again.run(kind="morning", scope_id=world.scope.id, now=world.clock.now)
    assert world.sent() == [("2026-11-24 07:30", OPENING)]


async def test_a_brief_and_a_birthday_the_same_day_are_one_message(world: World) -> None:
    await world.person(morning="07:30", morning_days="daily")
    await world.birthday(11, 25, 1986)
    await world.drive(datetime(2026, 11, 25, 22, 0, tzinfo=BERLIN))
    assert world.sent() == [
        ("2026-11-24 07:30", f"{OPENING}\n\n🎂 Morgen: Geburtstag von Miriam (Schwester) – 40 Jahre"),
        ("2026-11-25 07:30", f"{OPENING}\n\n🎂 Heute: Geburtstag von Miriam (Schwester) – 40 Jahre")]


async def test_the_date_push_on_the_day_or_the_eve_and_never_to_a_group(world: World) -> None:
    await world.person()
    await world.birthday(11, 25)
    group = await world.person("tg:group:-100")
    await world.birthday(11, 25, scope=group)
    await world.drive(datetime(2026, 11, 25, 22, 0, tzinfo=BERLIN))
    pushed = "Denk an Miriam heute!\n\n🎂 Heute: Geburtstag von Miriam (Schwester)"
    assert world.sent() == [("2026-11-25 09:00", pushed)]
    assert {user for _, user, _ in world.sender.sent} == {"tg:1"}

    await world.store.preferences.set(await world.engine.scope_for("tg:1"), "date_notice", "eve")
    world.chat.responder = lambda call: ""  # the model declines: the computed line alone
    world.clock.now = datetime(2027, 11, 23, 22, 0, tzinfo=BERLIN).timestamp()
    await world.drive(datetime(2027, 11, 25, 22, 0, tzinfo=BERLIN))
    assert world.sent()[1:] == [("2027-11-24 09:00", "🎂 Morgen: Geburtstag von Miriam (Schwester)")]


async def test_a_person_who_never_reads_mornings_gets_the_brief_only_when_asked_for_every_day(world: World) -> None:
    await world.person(morning="07:30")
    for day in range(14):  # two weeks of evenings
        moment = datetime(2026, 11, 9, 20, 0, tzinfo=BERLIN) + timedelta(days=day)
        await world.store.rhythm.observe(world.scope, moment.timestamp(), BERLIN, answered=False)
    await world.drive(datetime(2026, 11, 25, 12, 0, tzinfo=BERLIN))
    assert world.sent() == []
    await world.store.preferences.set(world.scope, "morning_days", "daily")
    await world.drive(datetime(2026, 11, 26, 12, 0, tzinfo=BERLIN))
    assert world.sent() == [("2026-11-26 07:30", OPENING)]


async def test_one_line_of_weather_from_an_open_meteo_endpoint_and_none_when_it_fails(world: World) -> None:
    async with FakeOpenMeteo() as meteo:
        world.weather = OpenMeteo(meteo.url)
        await world.person(morning="07:30", morning_days="daily", place="52.52,13.40")
        await world.drive(datetime(2026, 11, 24, 12, 0, tzinfo=BERLIN))
        meteo.status = 500
        await world.drive(datetime(2026, 11, 25, 12, 0, tzinfo=BERLIN))
    assert world.sent() == [("2026-11-24 07:30", f"{OPENING}\n\n🌤 Wetter: Regen, 8–14 °C, Regenrisiko 70 %"),
                            ("2026-11-25 07:30", OPENING)]
    assert meteo.requests[0] | {"daily": ""} == {"latitude": "52.52", "longitude": "13.4", "daily": "",
                                                 "timezone": "Europe/Berlin", "start_date": "2026-11-24",
                                                 "end_date": "2026-11-24"}


async def test_the_brief_after_a_crisis_is_written_under_the_safety_rules(world: World) -> None:
    await world.person(morning="07:30", morning_days="daily")
    await world.engine.handle(Incoming("tg:1", "ich will mich umbringen"))
    await world.drive(datetime(2026, 11, 24, 8, 0, tzinfo=BERLIN))
    brief = next(call for call in world.chat.calls if "morning brief" in call.prompt)
    assert "SAFETY FIRST" in brief.system[0].text
    assert len(world.sent()) == 1


class DownSender(RecordingSender):
    """A channel that accepts nothing until `up_at` (a messenger down in the early morning)."""

    def __init__(self, clock: Clock, up_at: datetime) -> None:
        super().__init__(clock)
        self.up_at = up_at.timestamp()

    async def deliver(self, scope: Scope, text: str) -> bool:
        return self.clock.now >= self.up_at and await super().deliver(scope, text)


async def test_a_birthday_arrives_when_the_brief_that_carried_it_is_dropped(world: World) -> None:
    world.clock.now = datetime(2026, 11, 24, 22, 0, tzinfo=BERLIN).timestamp()
    await world.person(morning="05:30", morning_days="daily")
    await world.birthday(11, 25, 1986)
    world.sender = DownSender(world.clock, datetime(2026, 11, 25, 8, 0, tzinfo=BERLIN))
    await world.drive(datetime(2026, 11, 25, 22, 0, tzinfo=BERLIN))
    kinds = {item.kind: item.status for item in await world.store.outbox.items(world.scope)}
    assert kinds == {"morning": "dropped", "date": "sent"}, "at 9:00 the brief of 5:30 is no news any more"
    assert world.sent() == [("2026-11-25 09:00", "Denk an Miriam heute!\n\n🎂 Heute: Geburtstag von Miriam (Schwester)"
                                                 " – 40 Jahre")]


async def test_after_a_restart_past_both_times_the_birthday_is_said_once(world: World) -> None:
    world.clock.now = datetime(2026, 11, 24, 22, 0, tzinfo=BERLIN).timestamp()
    await world.person(morning="10:00", morning_days="daily")
    await world.birthday(11, 25, 1986)
    await world.drive(datetime(2026, 11, 25, 8, 0, tzinfo=BERLIN))
    world.clock.now = datetime(2026, 11, 25, 11, 0, tzinfo=BERLIN).timestamp()  # down from 8:00 to 11:00
    again = world.scheduler()  # the restart runs both missed jobs: the date push's (9:00) first, then the brief's
    await again.run(kind="dates", scope_id=world.scope.id, now=world.clock.now)
    await again.run(kind="morning", scope_id=world.scope.id, now=world.clock.now)
    sent = world.sent()
    assert [when for when, _ in sent] == ["2026-11-25 11:00", "2026-11-25 11:00"]
    assert [text for _, text in sent if "Geburtstag von Miriam" in text] == [
        "Denk an Miriam heute!\n\n🎂 Heute: Geburtstag von Miriam (Schwester) – 40 Jahre"]


async def test_a_29_february_birthday_is_pushed_on_28_february_in_a_year_without_one(world: World) -> None:
    world.clock.now = datetime(2027, 2, 27, 22, 0, tzinfo=BERLIN).timestamp()
    await world.person()
    await world.birthday(2, 29, 2000)
    await world.drive(datetime(2027, 3, 1, 22, 0, tzinfo=BERLIN))
    assert world.sent() == [("2027-02-28 09:00", "Denk an Miriam heute!\n\n🎂 Heute: Geburtstag von Miriam (Schwester)"
                                                 " – 27 Jahre")]


async def test_a_person_in_new_york_gets_the_date_push_and_the_brief_at_their_own_local_times(world: World) -> None:
    new_york = ZoneInfo("America/New_York")  # on 20 March 2027 five hours behind Berlin (the US switched first)
    world.clock.now = datetime(2027, 3, 19, 22, 0, tzinfo=new_york).timestamp()
    await world.person(timezone="America/New_York")
    await world.birthday(3, 20)
    await world.drive(datetime(2027, 3, 20, 22, 0, tzinfo=new_york))
    await world.store.preferences.set(world.scope, "morning", "07:30")
    await world.store.preferences.set(world.scope, "morning_days", "daily")
    await world.drive(datetime(2027, 3, 21, 12, 0, tzinfo=new_york))
    local = [(f"{datetime.fromtimestamp(at, new_york):%Y-%m-%d %H:%M}", text) for at, _, text in world.sender.sent]
    assert local == [("2027-03-20 09:00", "Denk an Miriam heute!\n\n🎂 Heute: Geburtstag von Miriam (Schwester)"),
                     ("2027-03-21 07:30", OPENING)]
    assert [when for when, _ in world.sent()] == ["2027-03-20 14:00", "2027-03-21 12:30"], "not Berlin's 9:00, 7:30"
