"""Which yearly dates of people fall on a local day (pure): 29 February on 28 February in other years, the age."""
from __future__ import annotations

import calendar
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from memory import PersonDate, YearlyDate


@dataclass(frozen=True)
class DueDate:
    """A person's yearly date on one local day, with the years it completes (age, years married) when known."""

    person: str
    relation: str
    kind: str
    day: date
    years: int | None

    def fact(self, today: date) -> str:
        """The date as a fact for the model, in words that leave it nothing to compute."""
        when = "today" if self.day == today else "tomorrow" if self.day == today + timedelta(days=1) \
            else f"on {self.day:%A %Y-%m-%d}"
        who = f"{self.person} ({self.relation})" if self.relation else self.person
        what = {"birthday": "birthday", "anniversary": "anniversary"}.get(self.kind, "a yearly date")
        years = ""
        if self.years is not None:
            years = f", turns {self.years}" if self.kind == "birthday" else f", {self.years} years"
        return f"{who}: {what} {when} ({self.day:%d.%m.}){years}"


def falls_on(yearly: YearlyDate, day: date) -> bool:
    """Whether the yearly date is on this day; 29 February is kept on 28 February when the year has none."""
    if (yearly.month, yearly.day) == (day.month, day.day):
        return True
    return (yearly.month, yearly.day) == (2, 29) and (day.month, day.day) == (2, 28) and not calendar.isleap(day.year)


def dates_on(dates: Sequence[PersonDate], day: date) -> list[DueDate]:
    """The dates that fall on a day, with the years they complete (None when the year is unknown or not past)."""
    out = []
    for stored in dates:
        if falls_on(stored.date, day):
            year = stored.date.year
            years = day.year - year if year is not None and year < day.year else None
            out.append(DueDate(stored.person, stored.relation, stored.date.kind, day, years))
    return out


def local_day(now: float, zone: ZoneInfo) -> date:
    """The person's calendar day at a moment."""
    return datetime.fromtimestamp(now, zone).date()


def dates_ahead(dates: Sequence[PersonDate], now: float, zone: ZoneInfo, days: int = 2) -> list[DueDate]:
    """The dates on the person's local today and the following days (2: today and tomorrow), in day order."""
    today = local_day(now, zone)
    return [due for offset in range(days) for due in dates_on(dates, today + timedelta(days=offset))]
