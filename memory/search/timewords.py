"""Which time window does 'gestern abends' or 'last week' mean? A pure function with the clock passed in."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

# Parts of the day as [start hour, end hour) in local time.
MORNING, NOON, AFTERNOON, EVENING = (0, 12), (11, 15), (12, 18), (17, 24)

_DAY_WORDS = {
    "heute": 0, "gestern": 1, "vorgestern": 2, "today": 0, "yesterday": 1,
}
# A part of the day that needs a day word before it ("heute morgen"; "morgen" alone is tomorrow).
_AFTER_DAY = {"morgen": MORNING, "früh": MORNING, "mittag": NOON, "nachmittag": AFTERNOON, "abend": EVENING,
              "nacht": EVENING, "morning": MORNING, "afternoon": AFTERNOON, "evening": EVENING, "night": EVENING}
# Parts of the day that stand alone.
_ALONE = [
    (r"\b(morgens|vormittags?|am\s+morgen|am\s+vormittag|in\s+der\s+früh)\b", MORNING),
    (r"\b(mittags|am\s+mittag|zu\s+mittag|at\s+noon|around\s+noon|at\s+lunch(?:time)?)\b", NOON),
    (r"\b(nachmittags|am\s+nachmittag|in\s+the\s+afternoon)\b", AFTERNOON),
    (r"\b(abends|am\s+abend|tonight|in\s+the\s+evening|this\s+evening)\b", EVENING),
    (r"\b(this\s+morning|in\s+the\s+morning)\b", MORNING),
]
_LAST_WEEK = r"\b(letzte[nr]?|vergangene[nr]?)\s+woche\b|\blast\s+week\b"
_LAST_NIGHT = r"\blast\s+night\b"


@dataclass(frozen=True)
class TimeWindow:
    """A half-open interval [start, end) in the user's zone, and the query with the time words removed."""

    start: datetime
    end: datetime
    rest: str

    def as_unix(self) -> tuple[float, float]:
        """The window as unix seconds."""
        return self.start.timestamp(), self.end.timestamp()


def _at(day: date, hour: int, zone: ZoneInfo) -> datetime:
    if hour >= 24:
        return datetime.combine(day + timedelta(days=hour // 24), time(hour % 24), zone)
    return datetime.combine(day, time(hour), zone)


def time_window(text: str, now: datetime, zone: ZoneInfo) -> TimeWindow | None:
    """The window the time words in text name (None when there are none)."""
    lowered = text.casefold()
    today = now.astimezone(zone).date()
    spans: list[tuple[int, int]] = []
    day: date | None = None
    part: tuple[int, int] | None = None
    week = re.search(_LAST_WEEK, lowered)
    if week:
        monday = today - timedelta(days=today.weekday() + 7)
        start, end = _at(monday, 0, zone), _at(monday + timedelta(days=7), 0, zone)
        return TimeWindow(start, end, _strip(text, [week.span()]))
    night = re.search(_LAST_NIGHT, lowered)
    if night:
        day, part = today - timedelta(days=1), EVENING
        spans.append(night.span())
    for match in re.finditer(r"\b(heute|gestern|vorgestern|today|yesterday)\b(?:\s+(\w+?)s?\b)?", lowered):
        if day is not None:
            break
        day = today - timedelta(days=_DAY_WORDS[match.group(1)])
        following = match.group(2)
        if following in _AFTER_DAY:
            part = _AFTER_DAY[following]
            spans.append(match.span())
        else:
            spans.append(match.span(1))
    if part is None:
        for pattern, hours in _ALONE:
            found = re.search(pattern, lowered)
            if found:
                part = hours
                spans.append(found.span())
                break
    if day is None and part is None:
        return None
    day = today if day is None else day
    low, high = part or (0, 24)
    return TimeWindow(_at(day, low, zone), _at(day, high, zone), _strip(text, spans))


def _strip(text: str, spans: list[tuple[int, int]]) -> str:
    """Remove the matched time words (and leftover 'am'/'in the') from the text."""
    out = text
    for start, end in sorted(spans, reverse=True):
        out = out[:start] + " " + out[end:]
    return " ".join(out.split())
