"""Yearly dates of the people in a user's life: birthdays, anniversaries and other days, the year when known.

A date is checked in code before it is stored (`yearly_date`): a real month and day (29 February
allowed), a year that is not in the future. A person has one birthday: a new one replaces the old. Every
change is audited and undoable; merging people takes the dates along, forgetting a person erases them
(`memory.account.erasure.erase_person`).
"""
from __future__ import annotations

import calendar
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memory.ledgers import audit
from memory.models import AuditEntry, Scope
from memory.storage.db import Database, Tx

KINDS = ("birthday", "anniversary", "other")
_COLS = "d.id, d.person_id, p.name, p.relation, d.kind, d.month, d.day, d.year"


@dataclass(frozen=True)
class YearlyDate:
    """A day that comes back every year; `year` is the first one (born, married) when known."""

    kind: str  # one of KINDS
    month: int
    day: int
    year: int | None = None


@dataclass(frozen=True)
class PersonDate:
    """A stored yearly date with the person it belongs to."""

    id: int
    person_id: int
    person: str
    relation: str
    date: YearlyDate


def yearly_date(kind: Any, month: Any, day: Any, year: Any = None, *, this_year: int) -> YearlyDate | None:
    """The date if it is a real one (29 February allowed; a year not after this_year), else None."""
    def number(value: Any) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    month, day, year = number(month), number(day), number(year) if year not in (None, "", 0) else None
    if kind not in KINDS or month is None or day is None or not 1 <= month <= 12:
        return None
    if not 1 <= day <= calendar.monthrange(2000, month)[1]:  # 2000 is a leap year: 29 February is real
        return None
    if year is not None and (not 1900 <= year <= this_year or (month, day) == (2, 29) and not calendar.isleap(year)):
        return None
    return YearlyDate(kind, month, day, year)


def _row(row: Sequence[Any]) -> PersonDate:
    id_, person_id, name, relation, kind, month, day, year = row
    return PersonDate(id_, person_id, name, relation, YearlyDate(kind, month, day, year))


class PersonDates:
    """Store, list and undo the yearly dates of people."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def all(self, scope: Scope) -> list[PersonDate]:
        """The dates of the scope's current people, by month and day."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                f"SELECT {_COLS} FROM person_dates d JOIN people p ON p.id = d.person_id"
                " WHERE d.scope_id = ? AND p.valid_to IS NULL ORDER BY d.month, d.day, d.id", (scope.id,))
        return [_row(r) for r in rows]

    async def of(self, scope: Scope, person_id: int) -> list[PersonDate]:
        """One person's dates, by month and day."""
        return [d for d in await self.all(scope) if d.person_id == person_id]

    async def note(self, scope: Scope, person_id: int, date: YearlyDate, *, processing: str, reason: str = "",
                   now: float | None = None) -> PersonDate | None:
        """Remember a date of a person: a known one may gain its year, a birthday replaces an older one.

        Returns the stored date, or None when nothing changed.
        """
        now = time.time() if now is None else now
        async with self.db.transaction() as tx:
            rows = await tx.fetchall(
                "SELECT id, kind, month, day, year FROM person_dates WHERE scope_id = ? AND person_id = ? AND kind = ?",
                (scope.id, person_id, date.kind))
            same = next((r for r in rows if (r[2], r[3]) == (date.month, date.day)), None)
            if same is not None and (same[4] == date.year or date.year is None):
                return None
            old = same or (rows[0] if date.kind == "birthday" and rows else None)
            if old is not None:
                before = {"kind": old[1], "month": old[2], "day": old[3], "year": old[4]}
                await tx.execute("UPDATE person_dates SET month = ?, day = ?, year = ? WHERE id = ?",
                                 (date.month, date.day, date.year, old[0]))
                await audit.record(tx, scope.id, processing, "update", "person_date", old[0], before,
                                   _fields(date, person_id), reason)
                date_id = old[0]
            else:
                date_id = await tx.execute(
                    "INSERT INTO person_dates(scope_id, person_id, kind, month, day, year, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)", (scope.id, person_id, date.kind, date.month, date.day, date.year,
                                                     now))
                await audit.record(tx, scope.id, processing, "create", "person_date", date_id,
                                   after=_fields(date, person_id), reason=reason)
        return next(d for d in await self.all(scope) if d.id == date_id)

    async def revert(self, scope: Scope, entry: AuditEntry, processing: str) -> None:
        """Undo one audited change to a date."""
        before = entry.before or {}
        async with self.db.transaction() as tx:
            if entry.action == "create":
                await tx.execute("DELETE FROM person_dates WHERE id = ? AND scope_id = ?", (entry.item_id, scope.id))
            elif entry.action == "update":
                await tx.execute("UPDATE person_dates SET month = ?, day = ?, year = ? WHERE id = ? AND scope_id = ?",
                                 (before["month"], before["day"], before["year"], entry.item_id, scope.id))
            await audit.record(tx, scope.id, processing, "revert", "person_date", entry.item_id, after=before,
                               reason=f"undo {entry.action}")


def _fields(date: YearlyDate, person_id: int) -> dict[str, Any]:
    return {"person_id": person_id, "kind": date.kind, "month": date.month, "day": date.day, "year": date.year}


async def move(tx: Tx, keep: int, other: int) -> list[int]:
    """Give the other record's dates to `keep` (a merge); returns the ids moved."""
    ids = [r[0] for r in await tx.fetchall("SELECT id FROM person_dates WHERE person_id = ?", (other,))]
    await tx.execute("UPDATE person_dates SET person_id = ? WHERE person_id = ?", (keep, other))
    return ids
