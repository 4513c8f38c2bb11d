"""Reading a list's query on the web page: which page was asked for, and the days a from/to filter names."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from starlette.requests import Request

from bot.web_page.dates import read_day

SIZE = 20  # items per page


@dataclass(frozen=True)
class Paging:
    """The page asked for (1 is the newest), counted in items of `size`."""

    number: int = 1
    size: int = SIZE

    @property
    def offset(self) -> int:
        """How many items come before this page."""
        return (self.number - 1) * self.size


def paging(request: Request, size: int = SIZE) -> Paging | None:
    """The `page` of the request's query (1 when absent); None when it is no positive number."""
    raw = request.query_params.get("page", "1")
    if not raw.isdigit() or not 0 < int(raw) < 100_000:
        return None
    return Paging(int(raw), size)


def day_start(text: str, zone: dt.tzinfo, today: dt.date, days_after: int = 0) -> float | None:
    """The start of the day `text` (as typed: '24.12.2026', '24.12.' of today's year, or '2026-12-24') in `zone`,
    moved `days_after` days ('' -> None); ValueError naming the text when it is no date, or a day out of range."""
    day = read_day(text, today)
    if day is None:
        return None
    try:
        day += dt.timedelta(days=days_after)
    except OverflowError as exc:
        raise ValueError(text) from exc
    return dt.datetime.combine(day, dt.time(), zone).timestamp()
