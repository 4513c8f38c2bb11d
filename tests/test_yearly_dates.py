"""Yearly dates of people: checked in code, leap years and zones at midnight, stored with undo, merge and forget."""
from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.learning.extraction import accept_dates, accept_people
from memory.account.erasure import scoped_tables
from memory.ledgers import audit
from memory.ledgers.undo import undo_latest
from memory.models import Message
from memory.records.kinship import PersonDraft
from memory.records.person_dates import PersonDate, YearlyDate, yearly_date
from memory.store import MemoryStore
from scheduler.yearly_dates import dates_ahead, dates_on, falls_on

pytestmark = pytest.mark.both_backends("dates stored with undo, merge and forget")

BERLIN, NEW_YORK = ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York")


def stored(person: str, kind: str, month: int, day: int, year: int | None = None) -> PersonDate:
    return PersonDate(1, 1, person, "Schwester", YearlyDate(kind, month, day, year))


@pytest.mark.parametrize("args", [
    ("birthday", 13, 1, None), ("birthday", 4, 31, None), ("birthday", 0, 10, None), ("birthday", "3", 3, None),
    ("birthday", True, 3, None), ("feast", 3, 3, None), ("birthday", 2, 30, None), ("birthday", 2, 29, 2023),
    ("birthday", 3, 3, 2031), ("birthday", 3, 3, 1200), ("birthday", 3.5, 3, None), (None, 3, 3, None),
])
def test_the_models_garbage_is_no_date(args: tuple[object, ...]) -> None:
    assert yearly_date(*args, this_year=2026) is None


def test_real_dates_pass_and_29_february_is_one() -> None:
    assert yearly_date("birthday", 2, 29, None, this_year=2026) == YearlyDate("birthday", 2, 29)
    assert yearly_date("birthday", 2, 29, 2000, this_year=2026) == YearlyDate("birthday", 2, 29, 2000)
    assert yearly_date("anniversary", 6, 12, 0, this_year=2026) == YearlyDate("anniversary", 6, 12)
    assert yearly_date("other", 12, 31, 2026, this_year=2026) == YearlyDate("other", 12, 31, 2026)


def test_29_february_falls_on_28_february_in_other_years_only() -> None:
    leap = YearlyDate("birthday", 2, 29, 2000)
    assert falls_on(leap, date(2027, 2, 28)) and not falls_on(leap, date(2027, 3, 1))
    assert not falls_on(leap, date(2028, 2, 28)) and falls_on(leap, date(2028, 2, 29))
    assert [d.years for d in dates_on([stored("Miriam", "birthday", 2, 29, 2000)], date(2027, 2, 28))] == [27]


def test_the_age_only_when_the_year_is_known_and_past() -> None:
    assert [d.years for d in dates_on([stored("Miriam", "birthday", 3, 3, 1986)], date(2027, 3, 3))] == [41]
    assert [d.years for d in dates_on([stored("Miriam", "birthday", 3, 3)], date(2027, 3, 3))] == [None]
    assert [d.years for d in dates_on([stored("Jonas", "anniversary", 6, 12, 2026)], date(2026, 6, 12))] == [None]


def test_the_day_is_the_persons_local_day_at_midnight() -> None:
    birthday = [stored("Miriam", "birthday", 3, 3)]
    moment = datetime(2027, 3, 3, 0, 30, tzinfo=BERLIN).timestamp()  # still 2 March 18:30 in New York
    assert [(d.person, d.day) for d in dates_ahead(birthday, moment, BERLIN)] == [("Miriam", date(2027, 3, 3))]
    assert [d.day for d in dates_ahead(birthday, moment, NEW_YORK)] == [date(2027, 3, 3)]  # tomorrow there
    assert dates_ahead(birthday, moment - 3600, BERLIN)[0].fact(date(2027, 3, 2)).startswith("Miriam (Schwester): "
                                                                                            "birthday tomorrow")
    assert dates_ahead(birthday, moment + timedelta(days=1).total_seconds(), BERLIN) == []


def test_extraction_keeps_only_real_dates_of_a_person() -> None:
    proposed = [{"kind": "birthday", "month": 3, "day": 3}, {"kind": "birthday", "month": 2, "day": 30},
                {"kind": "anniversary", "month": "June", "day": 12}, "12.06.", {"kind": "other", "month": 9, "day": 1,
                                                                                 "year": 2099}]
    assert accept_dates(proposed, 2026) == (YearlyDate("birthday", 3, 3),)
    assert accept_dates("3. März", 2026) == ()
    message = Message(7, "user", "Miriam hat am 3. März Geburtstag", datetime(2026, 3, 10, tzinfo=BERLIN))
    people = accept_people({"people": [{"name": "Miriam", "relation": "Schwester", "source_ids": [7],
                                        "dates": [{"kind": "birthday", "month": 3, "day": 3, "year": 1986}]}]},
                           [message], 2026)
    assert people[0].dates == (YearlyDate("birthday", 3, 3, 1986),)


async def test_a_birthday_is_stored_replaced_and_undone(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    p = audit.new_processing("test")
    miriam = await store.people.observe(scope, PersonDraft("Miriam", relation="Schwester"), processing=p)
    await store.person_dates.note(scope, miriam.id, YearlyDate("birthday", 3, 3), processing=p)
    assert await store.person_dates.note(scope, miriam.id, YearlyDate("birthday", 3, 3), processing=p) is None
    await store.person_dates.note(scope, miriam.id, YearlyDate("birthday", 3, 3, 1986),
                                  processing=audit.new_processing("test"))
    await store.person_dates.note(scope, miriam.id, YearlyDate("anniversary", 6, 12),
                                  processing=audit.new_processing("test"))
    assert [d.date for d in await store.person_dates.of(scope, miriam.id)] == [
        YearlyDate("birthday", 3, 3, 1986), YearlyDate("anniversary", 6, 12)]
    await store.person_dates.note(scope, miriam.id, YearlyDate("birthday", 3, 4), processing=audit.new_processing("t"))
    assert [d.date for d in await store.person_dates.of(scope, miriam.id)][0] == YearlyDate("birthday", 3, 4)
    await undo_latest(store, scope)  # 3 March is back
    await undo_latest(store, scope)  # the anniversary goes
    assert [d.date for d in await store.person_dates.of(scope, miriam.id)] == [YearlyDate("birthday", 3, 3, 1986)]


async def test_merge_takes_the_dates_along_and_undo_gives_them_back(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    p = audit.new_processing("test")
    miri = await store.people.observe(scope, PersonDraft("Miri"), processing=p)
    miriam = await store.people.observe(scope, PersonDraft("Miriam", relation="Schwester"), processing=p)
    await store.person_dates.note(scope, miri.id, YearlyDate("birthday", 3, 3), processing=p)
    await store.people.merge(scope, miriam.id, miri.id)
    assert [(d.person, d.date.month) for d in await store.person_dates.all(scope)] == [("Miriam", 3)]
    await undo_latest(store, scope)
    assert [(d.person_id, d.person) for d in await store.person_dates.all(scope)] == [(miri.id, "Miri")]


async def test_forget_and_deleteme_take_the_dates(store: MemoryStore) -> None:
    anna, ben = await store.scope("mnemo", "anna"), await store.scope("mnemo", "ben")
    p = audit.new_processing("test")
    for scope in (anna, ben):
        person = await store.people.observe(scope, PersonDraft("Miriam"), processing=p)
        await store.person_dates.note(scope, person.id, YearlyDate("birthday", 3, 3, 1986), processing=p)
    jonas = await store.people.observe(anna, PersonDraft("Jonas", relation="Partner"), processing=p)
    await store.person_dates.note(anna, jonas.id, YearlyDate("anniversary", 6, 12), processing=p)
    await store.people.forget(anna, jonas.id)
    assert [d.person for d in await store.person_dates.all(anna)] == ["Miriam"]
    entries = [e for e in await store.audit_log(anna) if e.item_type == "person_date"]
    assert any(e.after == {"erased": True} for e in entries), "the forgotten date's audit entry keeps no date"
    async with store.db.reading() as tx:
        assert "person_dates" in await scoped_tables(tx), "every table with a scope id is erased by /deleteme"
    await store.delete_scope(anna)
    assert await store.person_dates.all(anna) == []
    assert [d.person for d in await store.person_dates.all(ben)] == ["Miriam"]
