"""Time in one place (issue 52): a person's zone change moves every one of their jobs at once, their learned hours
and repeating reminders with it; /checkins warum tells every time in the person's zone; a relative reminder counts
from when the messenger says the message was sent; the person reads a zone's name, not its IANA id."""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.commands.runner import Commands
from bot.commands.time_zones import zone_label
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.llm.writer import LLMWriter
from bot.texts import t
from memory.ledgers import audit
from memory.records.kinship import PersonDraft
from memory.records.person_dates import YearlyDate
from memory.store import MemoryStore
from scheduler.checkin import LAST_DECISION, check_in
from scheduler.rhythm import week_of_likely_hours
from scheduler.service import Scheduler
from tests.fakes.llm import ScriptedLLM
from tests.test_scheduler import Clock, RecordingSender
from tests.test_times_in_zone import Composer

BERLIN, NEW_YORK = ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York")
WEDNESDAY = datetime(2026, 11, 25, 14, 30, tzinfo=BERLIN)  # 08:30 in New York
LATER = datetime(2030, 11, 27, 14, 30, tzinfo=BERLIN)  # a Wednesday still ahead of the real clock APScheduler runs on


def world(store: MemoryStore, tmp_path: Path, chat: ScriptedLLM, background: ScriptedLLM,
          clock: Clock) -> tuple[Engine, Scheduler, Commands]:
    engine = Engine(store, chat, background, EngineConfig(zone=BERLIN, relevance_floor=0.0), clock=clock)
    scheduler = Scheduler(store, "mnemo", LLMWriter(background), engine, RecordingSender(clock), BERLIN, tmp_path,
                          clock=clock)
    return engine, scheduler, Commands(engine)  # the scheduler's jobs are there once it runs (`start`)


async def test_time_zones_a_zone_change_moves_every_job_of_the_person_at_once(
    store: MemoryStore, tmp_path: Path, chat: ScriptedLLM, background: ScriptedLLM,
) -> None:
    clock = Clock(LATER.timestamp())
    engine, scheduler, commands = world(store, tmp_path, chat, background, clock)
    scope = await engine.scope_for("tg:42")
    await store.messages.add(scope, "user", "Hallo", created_at=clock.now - 3600)
    await store.preferences.set(scope, "timezone", "Europe/Berlin")
    await store.preferences.set(scope, "morning", "07:30")
    p = audit.new_processing("test")
    miriam = await store.people.observe(scope, PersonDraft("Miriam", relation="Schwester"), processing=p)
    await store.person_dates.note(scope, miriam.id, YearlyDate("birthday", 3, 3), processing=p)
    daily = await store.reminders.add(scope, "Tabletten", datetime(2030, 11, 28, 8, 0, tzinfo=BERLIN).timestamp(),
                                      "daily", now=clock.now)
    once = await store.reminders.add(scope, "Zahnarzt", datetime(2030, 11, 29, 9, 0, tzinfo=BERLIN).timestamp(),
                                     now=clock.now)
    await scheduler.start()  # APScheduler with its job store in tmp_path
    commands.scheduler = scheduler
    try:
        reply = await commands.run("tg:42", "/settings zeitzone New York")
        assert reply is not None and reply.bubbles[0].startswith(t("de", "settings_saved"))
        fires = scheduler.next_fires(clock.now)  # as the stored jobs will fire, after the fake clock's now
    finally:
        await scheduler.stop()
        await engine.close()
    local = {job: f"{at.astimezone(NEW_YORK):%a %H:%M}" for job, at in fires.items() if job != "planner"}
    assert local == {
        f"reflect:{scope.id}": "Wed 22:00", f"diary:{scope.id}": "Wed 23:45", f"morning:{scope.id}": "Thu 07:30",
        f"dates:{scope.id}": "Wed 09:00",
        f"reminder:{daily.id}": "Thu 08:00",  # every day at 8 is at 8 on the person's clock wherever they are
        f"reminder:{once.id}": "Fri 03:00",  # a one-time reminder keeps its moment (an appointment does not move)
    }


async def test_time_zones_learned_hours_move_with_a_zone_that_was_never_the_persons(
    store: MemoryStore, tmp_path: Path, chat: ScriptedLLM, background: ScriptedLLM,
) -> None:
    clock = Clock(WEDNESDAY.timestamp())
    engine, _, commands = world(store, tmp_path, chat, background, clock)
    newcomer, mover = await engine.scope_for("tg:1"), await engine.scope_for("tg:2")
    await store.preferences.set(mover, "timezone", "Europe/Berlin")  # chosen by the person: they live by it
    for day in range(7):  # a week of evenings at 20:00 in New York (02:00 in Berlin, the deployment's zone)
        for minute in (0, 30):
            evening = datetime(2026, 11, 16 + day, 20, minute, tzinfo=NEW_YORK).timestamp()
            await store.rhythm.observe(newcomer, evening, BERLIN, answered=False)
            berlin_evening = datetime(2026, 11, 16 + day, 20, minute, tzinfo=BERLIN).timestamp()
            await store.rhythm.observe(mover, berlin_evening, BERLIN, answered=False)
    try:
        for user in ("tg:1", "tg:2"):
            await commands.run(user, "/settings zeitzone New York")
    finally:
        await engine.close()
    # the deployment's zone was never the newcomer's: the evenings were 20:00 on their clock all along
    week = week_of_likely_hours(await store.rhythm.histogram(newcomer, clock.now), (9, 21))
    assert week[2] == frozenset({19, 20}), week
    # the mover lived by Berlin's clock: who reads after work at 20:00 does so in New York too
    week = week_of_likely_hours(await store.rhythm.histogram(mover, clock.now), (9, 21))
    assert week[2] == frozenset({19, 20}), week


async def test_time_zones_checkins_why_tells_every_time_in_the_persons_zone(
    store: MemoryStore, tmp_path: Path, chat: ScriptedLLM, background: ScriptedLLM,
) -> None:
    clock = Clock(WEDNESDAY.replace(hour=22, minute=0).timestamp())  # 22:00 in Berlin: outside the hours 9-21 there
    engine, _, commands = world(store, tmp_path, chat, background, clock)
    scope = await engine.scope_for("tg:42")
    await store.messages.add(scope, "user", "Hallo", created_at=(WEDNESDAY - timedelta(days=3)).timestamp())
    decision = await check_in(store, Composer(), RecordingSender(clock), scope, clock.now, BERLIN)
    assert decision.reason == "outside active hours"
    try:
        await commands.run("tg:42", "/settings zeitzone New York")  # 16:00 there
        reply = await commands.run("tg:42", "/checkins warum")
    finally:
        await engine.close()
    assert reply is not None
    lines = reply.bubbles[0].splitlines()
    # the rule was applied on the old clock, and the answer says so; every time it shows is on the new one
    assert lines[0] == t("de", "checkins_checked_old_zone", when="Mi 25.11. um 16:00"), lines
    assert t("de", "checkins_next", when="Mi 25.11. um 16:15") in lines, "the next chance on New York's clock"
    assert "22:00" not in reply.bubbles[0] and "Do 26.11." not in reply.bubbles[0], lines
    record = await store.state.get(scope, LAST_DECISION)
    assert isinstance(record, dict) and record["zone"] == "Europe/Berlin", "the record stays as it was made"


async def test_time_zones_a_relative_reminder_counts_from_when_the_message_was_sent(
    store: MemoryStore, tmp_path: Path, chat: ScriptedLLM, background: ScriptedLLM,
) -> None:
    clock = Clock(WEDNESDAY.timestamp())
    engine, _, _ = world(store, tmp_path, chat, background, clock)
    sent = clock.now - 120  # a worker reads it two minutes late
    try:
        await engine.handle(Incoming("tg:42", "Erinnere mich in 3 Minuten an den Tee", sent_at=sent))
        await engine.handle(Incoming("tg:43", "Erinnere mich in 3 Minuten an den Tee"))  # no date: from now
    finally:
        await engine.drain()
        await engine.close()
    [tea] = await store.reminders.active(await engine.scope_for("tg:42"))
    assert tea.due_at.timestamp() == sent + 180
    [other] = await store.reminders.active(await engine.scope_for("tg:43"))
    assert other.due_at.timestamp() == clock.now + 180


async def test_time_zones_the_person_reads_a_zones_name_not_its_iana_id(
    store: MemoryStore, tmp_path: Path, chat: ScriptedLLM, background: ScriptedLLM,
) -> None:
    winter = WEDNESDAY.timestamp()
    assert zone_label("America/New_York", "de", winter) == "New York (UTC−5)"
    assert zone_label("America/New_York", "en", datetime(2026, 7, 1, tzinfo=BERLIN).timestamp()) == "New York (UTC−4)"
    assert zone_label("Asia/Tokyo", "de", winter) == "Tokio (UTC+9)"
    assert zone_label("Asia/Tokyo", "en", winter) == "Tokyo (UTC+9)"
    assert zone_label("Europe/Vienna", "de", winter) == "Wien (UTC+1)"
    assert zone_label("Asia/Kolkata", "en", winter) == "Kolkata (UTC+5:30)"
    assert zone_label("America/Argentina/Buenos_Aires", "en", winter) == "Buenos Aires (UTC−3)"
    assert zone_label("UTC", "de", winter) == "UTC"
    clock = Clock(winter)
    engine, _, commands = world(store, tmp_path, chat, background, clock)
    try:
        saved = await commands.run("tg:42", "/settings zeitzone New York")
        shown = await commands.run("tg:42", "/settings")
        back = await commands.run("tg:42", "/settings zeitzone standard")
    finally:
        await engine.close()
    assert saved is not None and shown is not None and back is not None
    zone_line = t("de", "settings_zone", zone="New York (UTC−5)", time="08:30")
    assert zone_line in saved.bubbles[0].splitlines() and zone_line in shown.bubbles[0].splitlines()
    assert t("de", "settings_zone_default", zone="Berlin (UTC+1)") in back.bubbles[0].splitlines()
    zone_lines = [line for b in (saved, shown, back) for line in b.bubbles[0].splitlines()
                  if line.startswith("Zeitzone")]
    assert len(zone_lines) == 3 and not any("/" in line for line in zone_lines), zone_lines
