"""Absences the person announces: parsed by the program, respected by the planner, welcomed back once."""
from __future__ import annotations

import time
from dataclasses import replace
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from bot.conversation.engine import Engine, Incoming
from memory.store import MemoryStore
from scheduler.away import Away, parse_away, says_back
from scheduler.checkin import absence
from scheduler.planner import CheckinFacts, decide_checkin
from tests.fakes.llm import ScriptedLLM
from tests.scenarios.proactive import BERLIN, World
from tests.scenarios.test_proactive_rhythm import command

TUESDAY = date(2026, 12, 1)


@pytest.mark.parametrize(("text", "away"), [
    ("Ich bin zwei Wochen im Urlaub", Away(TUESDAY, date(2026, 12, 15))),
    ("ich bin ab morgen 10 Tage in den Ferien", Away(date(2026, 12, 2), date(2026, 12, 12))),
    ("Ab Montag bin ich eine Woche im Urlaub.", Away(date(2026, 12, 7), date(2026, 12, 14))),
    ("ich bin bis Sonntag weg", Away(TUESDAY, date(2026, 12, 7))),
    ("Ich bin bis zum 12. Dezember verreist", Away(TUESDAY, date(2026, 12, 13))),
    ("Wir fahren bis 3.1. in den Urlaub", Away(TUESDAY, date(2027, 1, 4))),  # the next 3 January
    ("I'll be on holiday for 3 days", Away(TUESDAY, date(2026, 12, 4))),
    ("I’m away until December 20th", Away(TUESDAY, date(2026, 12, 21))),
])
def test_an_announced_absence_is_computed_by_the_program(text: str, away: Away) -> None:
    assert parse_away(text, TUESDAY) == away


@pytest.mark.parametrize("text", [
    "Miriam ist zwei Wochen im Urlaub",  # someone else's
    "Ich war zwei Wochen im Urlaub",  # over
    "Ich bin nicht im Urlaub, ich arbeite zwei Wochen von zu Hause",  # negated
    "Ich bin im Urlaub",  # no end: not guessed
    "So, ich bin weg, bis morgen!",  # a goodbye
    "Ich bin 200 Tage weg",  # longer than any holiday
    "I'm away until March 5th",  # more than three months
    "Ich bin bis zum 31. Februar weg",  # no such day
])
def test_what_is_no_announced_absence_keeps_nothing(text: str) -> None:
    assert parse_away(text, TUESDAY) is None


def test_saying_one_is_back() -> None:
    assert says_back("Ich bin wieder da!") and says_back("i'm back :)")
    assert not says_back("Ich rufe dich zurück") and not says_back("Bin wieder im Büro")


def facts(now: datetime, **changes: object) -> CheckinFacts:
    base = CheckinFacts(now=now, zone=BERLIN, last_user_message=now - timedelta(days=5),
                        last_message=now - timedelta(days=5),
                        last_proactive=None, proactive_unanswered=False, silence_threshold=timedelta(hours=24))
    return CheckinFacts(**{**base.__dict__, **changes})  # type: ignore[arg-type]


def test_the_planner_holds_back_while_away_and_welcomes_once_back() -> None:
    noon = datetime(2026, 12, 10, 12, tzinfo=BERLIN)
    away = Away(TUESDAY, date(2026, 12, 15))
    until, welcome = absence(away, noon.date())
    assert (until, welcome) == (date(2026, 12, 15), "")
    assert decide_checkin(facts(noon, away_until=until, due_topic="Wie war der Zahnarzt?")).reason == "away"
    back = datetime(2026, 12, 15, 12, tzinfo=BERLIN)
    until, welcome = absence(away, back.date())
    assert until is None and "2026-12-01 to 2026-12-14" in welcome
    decision = decide_checkin(facts(back, welcome_back=welcome, due_topic="Wie war der Zahnarzt?"))
    assert (decision.send, decision.reason) == (True, "welcome back")
    held = decide_checkin(facts(back, welcome_back=welcome, proactive_unanswered=True))
    assert not held.send, "the hard rules still hold: never twice unanswered"
    assert absence(Away(date(2026, 12, 20), date(2026, 12, 27)), noon.date()) == (None, "")  # not yet begun
    assert absence(None, noon.date()) == (None, "")


MONDAY = datetime(2026, 11, 23, tzinfo=BERLIN)


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return MONDAY + timedelta(days=day, hours=hour, minutes=minute)


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
async def test_a_holiday_announced_on_telegram_is_respected_and_one_welcome_follows(
    store: MemoryStore, tmp_path: Path,
) -> None:
    async with World(store, tmp_path, at(0, 10)) as world:
        await world.anna_writes("Ab morgen bin ich eine Woche im Urlaub in Portugal!", at(0, 10))
        prompt = world.engine.last_prompt
        assert prompt is not None and "away from Tuesday 2026-11-24 to Monday 2026-11-30" in prompt[1][-1].content
        await world.drive(at(7, 23))  # a silent week: without the holiday, a check-in a day
        assert await world.pushed() == [], "no check-in while Anna is away"
        why = await command(world, "/checkins warum", at(7, 23))
        assert "Du hast gesagt, dass du weg bist; vor dem 01.12. schreibe ich dir nicht von mir aus." in why
        await world.drive(at(8, 12))
        assert [text for _, text in await world.pushed()] == ["Na, wie geht es dir? (1)"]
        assert "welcome back" in world.engine.chat.calls[-1].prompt  # type: ignore[attr-defined]
        await world.anna_writes("Danke, war herrlich!", at(8, 14))
        await world.drive(at(9, 23))
        assert len(await world.pushed()) == 2, "after the welcome, check-ins as before (one more after a day)"
        assert await store.state.get(await world.scope(), "away") is None


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
async def test_writing_from_the_beach_keeps_the_holiday_and_coming_back_early_ends_it(
    store: MemoryStore, tmp_path: Path,
) -> None:
    async with World(store, tmp_path, at(0, 10)) as world:
        await world.anna_writes("Ich bin zwei Wochen im Urlaub.", at(0, 10))
        await world.anna_writes("Das Meer ist so schön hier.", at(3, 11))
        await world.drive(at(5, 20))
        assert await world.pushed() == [], "a message during the holiday does not end it"
        await world.anna_writes("Ich bin wieder da, früher als gedacht.", at(6, 9))
        prompt = world.engine.last_prompt
        assert prompt is not None and "writes again now: welcome them back" in prompt[1][-1].content
        assert await store.state.get(await world.scope(), "away") is None
        await world.drive(at(7, 13))
        assert len(await world.pushed()) == 1, "check-ins as before, and no second welcome"


async def test_a_crisis_message_that_mentions_a_holiday_is_answered_as_a_crisis_and_keeps_nothing(
    store: MemoryStore, tmp_path: Path,
) -> None:
    async with World(store, tmp_path, at(0, 10)) as world:
        await world.anna_writes("Ich bin zwei Wochen weg und will nicht mehr leben.", at(0, 10))
        assert await store.state.get(await world.scope(), "away") is None


async def test_after_a_long_absence_by_stage_the_reply_greets_back_and_may_pick_up_what_was_open(
    store: MemoryStore, engine: Engine, chat: ScriptedLLM,
) -> None:
    now = time.time()

    async def hint_after(user: str, days: float, stage: str = "") -> str:
        scope = await engine.scope_for(user)
        if stage:
            await store.relationships.save(scope, replace(await store.relationships.get(scope), stage=stage), [], "t")
        await store.messages.add(scope, "user", "Morgen ziehe ich um.", created_at=now - days * 86400)
        await store.topics.add(scope, "Wie war der Umzug?", origin="conversation")
        chat.enqueue("Schön, dass du wieder da bist!")
        await engine.handle(Incoming(user, "Hallo!"))
        assert engine.last_prompt is not None
        return engine.last_prompt[1][-1].content

    hint = await hint_after("tg:7", 8)
    assert "long absence for the two of you" in hint and "Wie war der Umzug?" in hint
    assert "long absence" not in await hint_after("tg:8", 3.5), "3.5 days are no long absence for acquaintances"
    assert "long absence" in await hint_after("tg:9", 3.5, stage="confidant"), "but they are for confidants"


async def test_in_a_group_one_members_holiday_holds_nobody_back(store: MemoryStore, engine: Engine) -> None:
    group = await engine.scope_for("tg:group:-1001")
    hint = await engine.absences.note(group, "Ich bin zwei Wochen im Urlaub", datetime(2026, 12, 1, 10, tzinfo=BERLIN))
    assert hint is None and await store.state.get(group, "away") is None
