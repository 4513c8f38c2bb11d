"""The learned rhythm: the decaying histogram in the store, and the pure decisions made from it."""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memory.records.rhythm_weights import HALF_LIFE, Histogram, bucket, decayed
from memory.store import MemoryStore
from scheduler.planner import CheckinFacts, decide_checkin, next_chance
from scheduler.rhythm import describe, likely_hours, reads_in_morning, spans, week_of_likely_hours

pytestmark = pytest.mark.both_backends("the rhythm's histogram in the store")

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY = datetime(2026, 11, 23, tzinfo=BERLIN)
DAY = 86400.0


def at(day: int, hour: int, minute: int = 0) -> float:
    return (MONDAY + timedelta(days=day, hours=hour, minutes=minute)).timestamp()


def test_a_weight_halves_every_half_life() -> None:
    assert decayed(1.0, 0.0, HALF_LIFE) == pytest.approx(0.5)
    assert decayed(8.0, 0.0, 3 * HALF_LIFE) == pytest.approx(1.0)
    assert decayed(1.0, 5.0, 5.0) == 1.0


def test_the_bucket_is_the_local_weekday_and_hour_on_both_sides_of_the_switch() -> None:
    before = datetime(2027, 3, 27, 20, 0, tzinfo=BERLIN).timestamp()  # Saturday, winter time
    after = datetime(2027, 3, 28, 20, 0, tzinfo=BERLIN).timestamp()  # Sunday, summer time
    assert bucket(before, BERLIN) == (5, 20) and bucket(after, BERLIN) == (6, 20)
    assert after - before == 23 * 3600, "the night of the switch is an hour short"


async def test_observe_fades_what_was_and_adds_one(store: MemoryStore) -> None:
    anna = await store.scope("mnemo", "anna")
    await store.rhythm.observe(anna, at(0, 20), BERLIN, answered=False)
    await store.rhythm.observe(anna, at(21, 20), BERLIN, answered=True)  # three weeks later, also a Monday
    hist = await store.rhythm.histogram(anna, at(21, 20, 30))
    assert hist.wrote[0][20] == pytest.approx(1.5, rel=1e-3)
    assert hist.answered[0][20] == pytest.approx(1.0, rel=1e-3)
    later = await store.rhythm.histogram(anna, at(42, 20))
    assert later.wrote[0][20] == pytest.approx(0.75, rel=1e-3), "reading fades to the moment asked for"
    assert later.total() == pytest.approx(0.75, rel=1e-3)


async def test_an_older_message_adds_less_and_keeps_the_row_current(store: MemoryStore) -> None:
    anna = await store.scope("mnemo", "anna")
    await store.rhythm.observe(anna, at(21, 9), BERLIN, answered=False)
    await store.rhythm.observe(anna, at(0, 9), BERLIN, answered=False)  # an import of an old message
    assert (await store.rhythm.histogram(anna, at(21, 9))).wrote[0][9] == pytest.approx(1.5, rel=1e-3)


async def test_time_zones_the_weights_shift_around_the_week_and_share_a_half_hour(store: MemoryStore) -> None:
    anna, bob = await store.scope("mnemo", "anna"), await store.scope("mnemo", "bob")
    await store.rhythm.observe(anna, at(0, 2), BERLIN, answered=True)  # Monday 02:00
    await store.rhythm.observe(bob, at(0, 2), BERLIN, answered=False)
    await store.rhythm.shift(anna, -6.0, at(1, 0))  # six hours earlier: Sunday 20:00, across the week's start
    hist = await store.rhythm.histogram(anna, at(1, 0))
    assert hist.wrote[6][20] == pytest.approx(decayed(1.0, at(0, 2), at(1, 0)), rel=1e-6)
    assert hist.answered[6][20] == hist.wrote[6][20] and hist.wrote[0][2] == 0.0
    await store.rhythm.shift(anna, 5.5, at(1, 0))  # India's half hour: the weight shares two hours
    hist = await store.rhythm.histogram(anna, at(1, 0))
    assert hist.wrote[0][1] == pytest.approx(hist.wrote[0][2]) and hist.total() == pytest.approx(
        decayed(1.0, at(0, 2), at(1, 0)), rel=1e-6)
    assert (await store.rhythm.histogram(bob, at(1, 0))).wrote[0][2] > 0, "another person's weights stay"


async def test_the_rhythm_travels_with_an_export(store: MemoryStore) -> None:
    anna, copy = await store.scope("mnemo", "anna"), await store.scope("mnemo", "copy")
    await store.rhythm.observe(anna, at(2, 19), BERLIN, answered=True)
    data = await store.export(anna)
    assert [(r["weekday"], r["hour"], r["wrote"]) for r in data["rhythm"]] == [(2, 19, 1.0)]
    assert await store.rhythm.restore(copy, data["rhythm"] + [{"weekday": 9, "hour": 1}]) == 1
    assert await store.rhythm.histogram(copy, at(3, 0)) == await store.rhythm.histogram(anna, at(3, 0))


def test_an_empty_histogram_weighs_nothing() -> None:
    assert Histogram.empty().total() == 0 and Histogram.of({(1, 2): (3.0, 1.0)}).wrote[1][2] == 3.0


async def test_the_engine_counts_each_message_and_whether_it_answered_a_checkin(chat, background, store) -> None:  # type: ignore[no-untyped-def]
    from bot.conversation.engine import Engine, EngineConfig
    from bot.exchange import Incoming

    clock_at = [at(0, 20)]
    engine = Engine(store, chat, background, EngineConfig(zone=BERLIN, relevance_floor=0.0), clock=lambda: clock_at[0])
    try:
        chat.enqueue("Schön!")
        await engine.handle(Incoming("anna", "Hallo!", channel="test", channel_message_id="1"))
        anna = await engine.scope_for("anna")
        await store.messages.add(anna, "assistant", "Wie geht's?", channel="proactive", created_at=at(1, 18),
                                 proactive=True)
        for n, hour in enumerate((21, 22), start=2):
            clock_at[0] = at(1, hour)
            chat.enqueue("Gut.")
            await engine.handle(Incoming("anna", "Gut, danke.", channel="test", channel_message_id=str(n)))
    finally:
        await engine.drain()
        await engine.close()
    assert (await store.rhythm.histogram(anna, at(1, 22))) == Histogram.of({
        (0, 20): (decayed(1.0, at(0, 20), at(1, 22)), 0.0),
        (1, 21): (decayed(1.0, at(1, 21), at(1, 22)), decayed(1.0, at(1, 21), at(1, 22))),  # answered the check-in
        (1, 22): (1.0, 0.0),  # the second message after it did not
    })


# --- the pure decisions --------------------------------------------------------------------------------------

EVENINGS = Histogram.of({(day, 20): (4.0, 1.0) for day in range(7)})
ACTIVE = (9, 21)


def test_a_newcomer_is_treated_as_today_every_active_hour() -> None:
    assert likely_hours(Histogram.empty(), 0, ACTIVE) == frozenset(range(9, 21))
    one_long_evening = Histogram.of({(0, 20): (30.0, 0.0)})
    assert likely_hours(one_long_evening, 0, ACTIVE) == frozenset(range(9, 21)), "one day teaches nothing yet"
    assert reads_in_morning(Histogram.empty(), 0, 7)


def test_someone_who_writes_in_the_evenings_is_likely_to_read_in_the_evening_within_the_active_hours() -> None:
    assert likely_hours(EVENINGS, 2, ACTIVE) == {19, 20}, "21 is outside the active hours"
    assert likely_hours(EVENINGS, 2, (9, 23)) == {19, 20, 21}
    assert not reads_in_morning(EVENINGS, 2, 7)


def test_each_weekday_is_learned_on_its_own_and_a_thin_day_follows_its_kind_of_day() -> None:
    hist = Histogram.of({**{(day, 19): (5.0, 0.0) for day in range(5)}, (5, 10): (5.0, 0.0), (6, 10): (1.0, 0.0)})
    assert likely_hours(hist, 0, ACTIVE) == {18, 19, 20}
    assert likely_hours(hist, 5, ACTIVE) == {9, 10, 11}, "Saturday mornings"
    assert likely_hours(hist, 6, ACTIVE) == {9, 10, 11}, "Sunday has too little of its own: the weekend's hours"
    assert reads_in_morning(hist, 5, 9) and not reads_in_morning(hist, 0, 7)


def test_a_thin_kind_of_day_follows_the_whole_week() -> None:
    hist = Histogram.of({**{(day, 19): (5.0, 0.0) for day in range(5)}, (6, 10): (1.0, 0.0)})
    assert likely_hours(hist, 6, ACTIVE) == {18, 19, 20}, "a weekend of one message: the week's hours"


# Weekday evenings and weekend late mornings, a light user: each day a message or two, faded (as in bench/month.py).
MIXED = Histogram.of({
    **{(day, hour): (w, a) for day in range(5) for hour, w, a in ((19, 0.6, 0.0), (20, 0.7, 0.3), (21, 0.4, 0.1))},
    (5, 10): (1.2, 0.3), (5, 11): (0.6, 0.0), (6, 10): (0.8, 0.0), (6, 11): (0.9, 0.2),
})


def test_weekend_mornings_do_not_leak_into_weekdays_of_a_light_user() -> None:
    assert all(sum(MIXED.wrote[day]) + sum(MIXED.answered[day]) < 3.0 for day in range(7)), "every day is thin"
    week = week_of_likely_hours(MIXED, ACTIVE)
    assert week[:5] == (frozenset({19, 20}),) * 5, "weekdays: evenings, no morning"
    assert week[5:] == (frozenset({9, 10, 11, 12}),) * 2, "weekends: late mornings, no evening"
    assert not reads_in_morning(MIXED, 1, 9) and reads_in_morning(MIXED, 6, 9)


def test_a_checkin_for_a_light_user_on_a_weekday_waits_for_the_evening() -> None:
    tuesday = datetime(2027, 3, 16, 9, 0, tzinfo=BERLIN)
    facts = CheckinFacts(now=tuesday, zone=BERLIN, last_user_message=tuesday - timedelta(days=3),
                         last_message=tuesday - timedelta(days=3), last_proactive=None, proactive_unanswered=False,
                         active_hours=ACTIVE, likely_hours=week_of_likely_hours(MIXED, ACTIVE))
    assert [decide_checkin(replace(facts, now=tuesday.replace(hour=h))).reason for h in (9, 11, 12)] == [
        "not a likely hour"] * 3
    assert next_chance(facts) == tuesday.replace(hour=19)


def test_someone_who_writes_only_at_night_keeps_every_active_hour() -> None:
    nights = Histogram.of({(day, 2): (5.0, 0.0) for day in range(7)})
    assert likely_hours(nights, 0, ACTIVE) == frozenset(range(9, 21))
    assert likely_hours(nights, 0, (22, 4)) == {1, 2, 3}, "active hours across midnight"


def test_the_weights_fade_so_a_new_habit_takes_over() -> None:
    old = {(day, 10): (decayed(6.0, 0, 8 * 7 * DAY), 0.0) for day in range(7)}  # mornings, two months ago
    new = {(day, 20): (4.0, 0.0) for day in range(7)}  # evenings, lately
    assert likely_hours(Histogram.of({**old, **new}), 0, ACTIVE) == {19, 20}


def test_the_description_groups_days_with_the_same_hours() -> None:
    names = ("Mo", "Di", "Mi", "Do", "Fr", "Sa", "So")
    hist = Histogram.of({**{(day, 19): (5.0, 0.0) for day in range(5)}, (5, 10): (5.0, 0.0), (6, 10): (5.0, 0.0)})
    assert describe(week_of_likely_hours(hist, ACTIVE), names) == "Mo–Fr 18–21, Sa–So 9–12"
    assert spans(frozenset({9, 10, 14})) == [(9, 11), (14, 15)]
