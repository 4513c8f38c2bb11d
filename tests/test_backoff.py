"""Pure: the ignored streak and the back-off, the learned hours in the planner, and the next chance."""
from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from scheduler.backoff import backoff_factor, ignored_streak
from scheduler.checkin import chances, explained
from scheduler.planner import CheckinFacts, Decision, decide_checkin, facts_from_state, facts_to_state, next_chance

BERLIN = ZoneInfo("Europe/Berlin")
H = 3600.0
MONDAY = datetime(2026, 11, 23, tzinfo=BERLIN)
EVENINGS = tuple(frozenset({19, 20}) for _ in range(7))


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return MONDAY + timedelta(days=day, hours=hour, minutes=minute)


def test_a_checkin_not_answered_within_twelve_hours_is_ignored() -> None:
    sent = [0.0, 100 * H]
    assert ignored_streak(sent, [], now=200 * H) == 2
    assert ignored_streak(sent, [111 * H], now=200 * H) == 0, "the newest one was answered in time"
    assert ignored_streak(sent, [113 * H], now=200 * H) == 2, "an answer after 12 hours is too late"
    assert ignored_streak(sent, [5 * H], now=200 * H) == 1, "the older answer in time ends the streak there"
    assert ignored_streak(sent, [], now=105 * H) == 1, "the newest still has time: it counts neither way"
    assert ignored_streak([], [1.0], now=5.0) == 0


def test_the_factor_doubles_from_the_second_ignored_checkin_up_to_eight() -> None:
    assert [backoff_factor(n) for n in range(7)] == [1, 1, 2, 4, 8, 8, 8]


BASE = CheckinFacts(now=at(2, 19), zone=BERLIN, last_user_message=at(0, 20), last_message=at(0, 20),
                    last_proactive=None, proactive_unanswered=False, silence_threshold=timedelta(hours=36))


def test_checkins_only_in_the_likely_hours_of_the_day() -> None:
    assert decide_checkin(replace(BASE, likely_hours=EVENINGS)).reason == "silence"
    assert decide_checkin(replace(BASE, now=at(2, 10), likely_hours=EVENINGS)).reason == "not a likely hour"
    assert decide_checkin(replace(BASE, now=at(2, 10))).send, "no learned hours: every active hour"
    late = replace(BASE, now=at(2, 22), likely_hours=tuple(frozenset({22}) for _ in range(7)))
    assert decide_checkin(late).reason == "outside active hours", "the active hours bound what is learned"


def test_two_ignored_checkins_double_the_silence_and_an_answer_resets_it() -> None:
    assert decide_checkin(replace(BASE, ignored_streak=1)).send
    doubled = replace(BASE, ignored_streak=2)
    assert decide_checkin(doubled).reason == "nothing to say" and doubled.silence_needed == timedelta(hours=72)
    assert decide_checkin(replace(doubled, now=at(3, 20))).send, "72 hours after her last message"
    assert replace(BASE, ignored_streak=9).silence_needed == timedelta(hours=36 * 8)


def test_the_next_chance_steps_the_rules_forward_with_the_facts_held() -> None:
    early = replace(BASE, now=at(1, 9), likely_hours=EVENINGS)
    assert next_chance(early) == at(2, 19), "36 h after Monday 20:00 is Wednesday 8:00; the evening is likely"
    assert next_chance(replace(early, ignored_streak=2)) == at(3, 20), "72 h: Thursday 20:00"
    assert next_chance(replace(early, proactive_unanswered=True)) is None, "only her answer changes that"
    assert next_chance(replace(early, checkins_enabled=False)) is None


def test_the_next_chance_counts_real_hours_across_the_switch_to_summer_time() -> None:
    saturday = datetime(2027, 3, 27, 20, 0, tzinfo=BERLIN)  # her last message, winter time
    facts = replace(BASE, now=saturday + timedelta(hours=1), last_user_message=saturday, last_message=saturday,
                    silence_threshold=timedelta(hours=23), likely_hours=EVENINGS)
    chance = next_chance(facts)
    assert chance is not None and (chance.day, chance.hour, chance.minute) == (28, 20, 0), \
        "23 real hours end at 20:00 summer time (19:00 on the wall clock would be only 22)"
    assert chance.utcoffset() == timedelta(hours=2)


def test_a_decision_is_explained_later_on_the_facts_it_was_made_on() -> None:
    early = replace(BASE, now=at(1, 9), likely_hours=EVENINGS, away_until=at(1, 0).date(), welcome_back="x",
                    due_topic="Wie war der Zahnarzt?")
    assert facts_from_state(json.loads(json.dumps(facts_to_state(early)))) == early
    record = explained(replace(early, away_until=None), Decision(False, "not a likely hour"))
    assert chances(json.loads(json.dumps(record))) == (at(1, 19).timestamp(), None), "the due topic: that evening"
    held = explained(replace(early, proactive_unanswered=True),
                     Decision(False, "previous proactive message unanswered"))
    assert chances(held) == (None, "previous proactive message unanswered")
    assert chances({**record, "send": True}) == (None, None)


async def test_checkins_answers_bad_words_groups_and_newcomers_shortly_and_changes_nothing(engine) -> None:  # type: ignore[no-untyped-def]
    from bot.commands.runner import Commands
    from bot.texts import t
    from scheduler.checkin import LAST_DECISION

    commands, store = Commands(engine), engine.store
    anna = await engine.scope_for("anna")
    for text, key in (("/checkins", "checkins_none"), ("/checkins warum", "checkins_none"),
                      ("/checkins blabla", "checkins_usage"), ("/checkins " + "x" * 500, "checkins_usage")):
        reply = await commands.run("anna", text)
        assert reply is not None and reply.bubbles == (t("de", key),), text
    group = await commands.run("tg:group:-100", "/checkins warum")
    assert group is not None and group.bubbles == (t("de", "checkins_group"),)
    assert await store.state.get(anna, LAST_DECISION) is None
    settings = await commands.run("anna", "/settings")
    assert settings is not None and t("de", "settings_rhythm_none") in settings.bubbles[0].splitlines()


async def test_checkins_why_in_english(engine) -> None:  # type: ignore[no-untyped-def]
    from bot.commands.runner import Commands
    from scheduler.checkin import LAST_DECISION

    anna = await engine.scope_for("anna")
    await engine.store.state.put(anna, LAST_DECISION, {
        "at": at(2, 10).timestamp(), "send": False, "reason": "nothing to say", "next": at(3, 20).timestamp(),
        "held_by": None, "zone": "Europe/Berlin", "active_hours": [9, 21], "likely_hours": [19, 20], "streak": 3,
        "factor": 4, "answer_within_hours": 12.0, "silence_hours": 144.0})
    engine.config = replace(engine.config, language="en")
    reply = await Commands(engine).run("anna", "/checkins why")
    assert reply is not None and reply.bubbles[0].splitlines() == [
        "Last checked: Wed 25 Nov at 10:00.",
        "There was nothing in particular, and it hadn't been quiet long enough: I wait 144 hours after your last"
        " message.",
        "You didn't answer my last 3 messages within 12 hours – so I wait 4 times as long as usual. An answer resets"
        " that.",
        "The earliest I'd write to you: Thu 26 Nov at 20:00.",
    ]
