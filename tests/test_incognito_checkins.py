"""Incognito and the check-in planner: a simulated week of incognito chatting at varying times, on a fake clock.

The planner sees only that the person talks in incognito (a count and times, `incognito_activity`): no check-in
arrives while they do, and their incognito answers are no ignored check-ins (the back-off does not grow).
"""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.conversation.help_lines import crisis_help
from bot.conversation.model_answer import CRISIS_MARK
from bot.llm.writer import LLMWriter
from memory import Scope
from memory.store import MemoryStore
from scheduler.checkin import LAST_DECISION, gather
from scheduler.service import Scheduler
from tests.fakes.llm import ScriptedLLM
from tests.test_scheduler import QUARTER, Clock, RecordingSender, background_model

pytestmark = pytest.mark.both_backends("the incognito_activity row is written with an upsert")

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY = datetime(2026, 11, 23, 0, 0, tzinfo=BERLIN)
# (day, hour, minute) each session starts, and how many messages it has, 30 minutes apart: a different time each day
SECRET = "Quokkamondschein"  # a word of the incognito crisis, searched for everywhere afterwards
SESSIONS = [(1, 10, 0, 5), (2, 17, 15, 4), (3, 12, 30, 6), (4, 19, 45, 3), (5, 9, 15, 4), (6, 14, 0, 5)]


async def anna_incognito(store: MemoryStore, tmp_path: Path, clock: Clock, chat: ScriptedLLM
                         ) -> tuple[Engine, Scheduler, RecordingSender, Scope]:
    """Anna said hello and switched incognito on; the engine and the scheduler (with a background model that writes
    check-ins) on the test's clock, in Berlin."""
    background = ScriptedLLM("background")
    background.responder = background_model(None)  # type: ignore[assignment]
    engine = Engine(store, chat, background, EngineConfig(zone=BERLIN), clock=clock)
    sender = RecordingSender(clock)
    scheduler = Scheduler(store, "mnemo", LLMWriter(background), engine, sender, BERLIN, tmp_path,
                          silence=timedelta(hours=24), clock=clock)
    await engine.handle(Incoming("tg:1", "Hallo, ich bin Anna."))
    await engine.drain()
    scope = await engine.scope_for("tg:1")
    await engine.incognito.switch_on(scope, None)
    return engine, scheduler, sender, scope


def sessions() -> list[list[float]]:
    """The incognito messages' times, per session."""
    return [[(MONDAY + timedelta(days=d, hours=h, minutes=m + 30 * i)).timestamp() for i in range(n)]
            for d, h, m, n in SESSIONS]


async def test_a_week_of_incognito_chatting_gets_no_checkin_during_it_and_no_backoff(
        store: MemoryStore, tmp_path: Path) -> None:
    clock = Clock((MONDAY + timedelta(hours=10)).timestamp())
    chat = ScriptedLLM("chat")
    count = iter(range(1000))
    chat.responder = lambda call: (f"Wie geht es dir heute? ({next(count)})" if "has not written" in call.prompt
                                   else "Erzähl weiter.")
    engine, scheduler, sender, scope = await anna_incognito(store, tmp_path, clock, chat)
    try:
        talks = sorted(at for session in sessions() for at in session)
        streaks: list[int] = []

        async def after(kind: str, scope_id: int, at: float) -> None:
            if kind == "planner":
                streaks.append(int((await store.state.get(scope, LAST_DECISION))["streak"]))

        end = (MONDAY + timedelta(days=7)).timestamp()
        while clock.now < end:
            start, clock.now = clock.now, clock.now + QUARTER
            while talks and talks[0] <= clock.now:
                clock.now = talks.pop(0)
                reply = await engine.handle(Incoming("tg:1", "Nur unter uns: mir geht es so lala."))
                assert reply is not None and not reply.failed
            await scheduler.run_due(start, clock.now, after)

        during = [datetime.fromtimestamp(at, BERLIN) for at, _, _ in sender.sent
                  if any(s[0] <= at <= s[-1] for s in sessions())]
        assert during == [], "a check-in arrived in the middle of an incognito conversation"
        assert len(sender.sent) >= 2, "between the conversations the planner still writes first"
        assert streaks and max(streaks) == 0, "answers in incognito are no ignored check-ins"
        assert [m.text for m in await store.messages.recent(scope, 50) if m.role == "user"] == ["Hallo, ich bin Anna."]
        facts = await gather(store, scope, clock.now, BERLIN, timedelta(hours=24))
        assert facts.ignored_streak == 0 and not facts.proactive_unanswered
        activity = await store.incognito.activity(scope)
        assert activity is not None and activity.messages == sum(n for *_, n in SESSIONS)
    finally:
        await engine.close()


async def test_the_planner_counts_incognito_answers_as_answers_not_as_ignored_checkins(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "tg:2")
    start = (MONDAY + timedelta(hours=12)).timestamp()
    await store.messages.add(scope, "user", "Hallo", created_at=start)
    for day in (1, 2, 3):  # a check-in a day, each answered in incognito within the hour
        sent = start + day * 86400
        await store.messages.add(scope, "assistant", f"Wie geht's? {day}", created_at=sent, proactive=True)
        await store.incognito.note(scope, sent + 1800, answered_checkin=sent)
    facts = await gather(store, scope, start + 3 * 86400 + 14 * 3600, BERLIN, timedelta(hours=24))
    assert facts.ignored_streak == 0
    assert not facts.proactive_unanswered
    assert facts.last_incognito is not None and facts.last_incognito.timestamp() == start + 3 * 86400 + 1800


async def tables_holding(store: MemoryStore, word: str) -> list[str]:
    """The tables of the store's database with a row holding the word (in any column, as text)."""
    listing = ("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()" if store.db.url
               else "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'")
    found = []
    async with store.db.reading() as tx:
        for (table,) in await tx.fetchall(listing):
            if any(word in str(row) for row in await tx.fetchall(f'SELECT * FROM "{table}"')):
                found.append(str(table))
    return found


async def test_a_crisis_in_incognito_makes_the_next_days_checkin_careful_and_keeps_none_of_its_words(
        store: MemoryStore, tmp_path: Path) -> None:
    clock = Clock((MONDAY + timedelta(hours=10)).timestamp())
    chat = ScriptedLLM("chat")
    chat.responder = lambda call: ("Hey, ich denke an dich. Wie geht es dir heute?" if "has not written" in call.prompt
                                   else "Ich bin da. Bist du gerade in Sicherheit?")
    engine, scheduler, sender, scope = await anna_incognito(store, tmp_path, clock, chat)
    try:
        clock.now += 3600
        reply = await engine.handle(Incoming("tg:1", f"{SECRET}: ich will mir heute nacht das Leben nehmen"))
        assert reply is not None and reply.bubbles == (crisis_help("DE", "de"),
                                                       "Ich bin da. Bist du gerade in Sicherheit?")
        crisis_at = clock.now
        await engine.incognito.switch_off(scope)

        end = crisis_at + 3 * 86400
        while not sender.sent and clock.now < end:
            start, clock.now = clock.now, clock.now + QUARTER
            await scheduler.run_due(start, clock.now)
        assert sender.sent, "a check-in came within three days"
        [(sent_at, _, text)] = sender.sent
        assert text == "Hey, ich denke an dich. Wie geht es dir heute?"
        assert datetime.fromtimestamp(sent_at, BERLIN).date() > datetime.fromtimestamp(crisis_at, BERLIN).date()
        composed = [call for call in chat.calls if "has not written" in call.prompt]
        assert composed and all("SAFETY FIRST" in call.system[0].text for call in composed), "a careful check-in"

        assert await store.state.get(scope, CRISIS_MARK) == crisis_at  # a time, no words
        assert [m.text for m in await store.messages.recent(scope, 50) if m.role == "user"] == ["Hallo, ich bin Anna."]
        assert not any(SECRET in call.prompt for call in composed), "the check-in's model never read the words"
        assert await tables_holding(store, SECRET) == []  # no row of the database holds them
        assert "messages" in await tables_holding(store, "ich bin Anna"), "the search finds what is stored"
    finally:
        await engine.close()
