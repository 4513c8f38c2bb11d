"""Absences the person announces ("Ich bin zwei Wochen im Urlaub"): a pure parser from a sentence and a day to the days.

Only the person's own absence counts (a first-person sentence in the present or future: "ich bin", "wir
fahren", "I'll be"); "Miriam ist im Urlaub", "ich war im Urlaub" and "ich bin nicht im Urlaub" are not one.
The span is computed by the program: a duration ("zwei Wochen", "for 3 days") or an end ("bis Sonntag",
"bis zum 12. März", "until the 5th of May"), from today or from a start ("ab Montag", "from tomorrow").
What cannot be pinned down (no duration and no end) is not guessed: nothing is stored.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from scheduler.reminder_times import MONTHS, NUMBERS, WEEKDAYS

STATE_KEY = "away"  # where an announced absence is kept (scope_state): {"start": "2026-12-01", "back": "2026-12-15"}
LONGEST = timedelta(days=92)  # a longer announced absence is not taken as one (a typo, a move abroad)

_FIRST_PERSON = r"\b(?:ich\s+bin|bin\s+ich|ich\s+fahre|fahre\s+ich|ich\s+fliege|fliege\s+ich|ich\s+verreise|" \
                r"wir\s+sind|sind\s+wir|wir\s+fahren|fahren\s+wir|wir\s+fliegen|fliegen\s+wir|" \
                r"i\s*'\s*m|i\s+am|i\s*'\s*ll\s+be|i\s+will\s+be|we\s*'\s*re|we\s+are|we\s*'\s*ll\s+be|" \
                r"i\s+go)\b"
_AWAY = re.compile(r"\b(?:im\s+urlaub|in\s+den\s+urlaub|in\s+urlaub|verreist|weg|unterwegs|nicht\s+da|"
                   r"nicht\s+erreichbar|offline|auf\s+reisen|in\s+den\s+ferien|on\s+holiday|on\s+vacation|"
                   r"away|travel(?:l)?ing|off\s+the\s+grid)\b", re.I)
_NEGATED = re.compile(r"\b(?:nicht|kein|not|never)\s+(?:mehr\s+)?(?:im\s+urlaub|in\s+urlaub|verreist|weg|unterwegs|"
                      r"on\s+holiday|on\s+vacation|away|travel)", re.I)
_NUM = r"(\d{1,2}|" + "|".join(sorted(NUMBERS, key=len, reverse=True)) + r")"
_SPAN = re.compile(_NUM + r"\s+(tage?n?|wochen?|days?|weeks?)\b", re.I)
_DATE_NUMERIC = re.compile(r"\b(\d{1,2})\.\s*(\d{1,2})\.(?:\s*(\d{4}))?")
_DATE_WORDS = re.compile(r"\b(\d{1,2})\.?\s*(?:of\s+)?(" + "|".join(MONTHS) + r")\b", re.I)
_DATE_EN = re.compile(r"\b(" + "|".join(MONTHS) + r")\s+(\d{1,2})(?:st|nd|rd|th)?\b", re.I)
_UNTIL = re.compile(r"\b(?:bis|until|till|through)\b(.*)", re.I)
_FROM = re.compile(r"\b(?:ab|from|starting)\s+(morgen|übermorgen|tomorrow|" + "|".join(WEEKDAYS) + r")\b", re.I)
_BACK = re.compile(r"\b(?:(?:ich\s+bin|bin)\s+wieder\s+(?:da|zu\s*hause|zurück)|i\s*'?\s*m\s+back|i\s+am\s+back)\b",
                   re.I)


@dataclass(frozen=True)
class Away:
    """The days the person is away: from `start` (inclusive) until `back` (the first day they are back)."""

    start: date
    back: date


def kept(value: Any) -> Away | None:
    """The absence as kept in the scope's state, or None (also for a value that is not one)."""
    try:
        return Away(date.fromisoformat(value["start"]), date.fromisoformat(value["back"]))
    except (TypeError, KeyError, ValueError):
        return None


def to_keep(away: Away) -> dict[str, str]:
    """The absence as the scope's state keeps it."""
    return {"start": away.start.isoformat(), "back": away.back.isoformat()}


def parse_away(text: str, today: date) -> Away | None:
    """The absence the text announces, counted from `today` (the person's local day); None when it names none."""
    lowered = " ".join(text.lower().replace("\u2019", "'").split())
    if not re.search(_FIRST_PERSON, lowered) or not _AWAY.search(lowered) or _NEGATED.search(lowered):
        return None
    start = _start(lowered, today)
    span = _SPAN.search(lowered)
    if span:
        count = int(span.group(1)) if span.group(1).isdigit() else NUMBERS[span.group(1)]
        days = count * (7 if span.group(2).startswith(("w", "W")) else 1)
        back = start + timedelta(days=days)
    else:
        until = _UNTIL.search(lowered)
        last = _day(until.group(1), start) if until else None
        if last is None:
            return None
        back = last + timedelta(days=1)
    if back <= start or back - start > LONGEST:
        return None
    return Away(start, back)


def says_back(text: str) -> bool:
    """Whether the person says they are back ("ich bin wieder da", "I'm back")."""
    return _BACK.search(text) is not None


def _start(lowered: str, today: date) -> date:
    """The first day away: today, or the day after 'ab morgen', 'from Monday'."""
    found = _FROM.search(lowered)
    if not found:
        return today
    word = found.group(1)
    if word in ("morgen", "tomorrow"):
        return today + timedelta(days=1)
    if word == "übermorgen":
        return today + timedelta(days=2)
    return _next_weekday(today, WEEKDAYS[word])


def _next_weekday(after: date, weekday: int) -> date:
    """The next such weekday after `after` (a week on when it is that day)."""
    return after + timedelta(days=(weekday - after.weekday() - 1) % 7 + 1)


def _day(words: str, start: date) -> date | None:
    """The last day away named after 'bis'/'until': a weekday or a date (the next such, not before start)."""
    words = words.strip()  # 'bis morgen' is a goodbye, not an end: only a weekday or a date ends an absence
    for word in words.replace(",", " ").split()[:3]:
        if word.strip(".!?") in WEEKDAYS:
            return _next_weekday(start, WEEKDAYS[word.strip(".!?")])
    month_day = _month_day(words)
    if month_day is None:
        return None
    month, day, year = month_day
    for candidate_year in (year,) if year else (start.year, start.year + 1):
        try:
            candidate = date(candidate_year, month, day)
        except ValueError:
            return None
        if candidate >= start:
            return candidate
    return None


def _month_day(words: str) -> tuple[int, int, int | None] | None:
    """(month, day, year or None) of the first date in the words: '12.3.', '12. März', 'March 12'."""
    numeric = _DATE_NUMERIC.search(words)
    if numeric:
        return int(numeric.group(2)), int(numeric.group(1)), int(numeric.group(3)) if numeric.group(3) else None
    german = _DATE_WORDS.search(words)
    if german:
        return MONTHS[german.group(2).lower()], int(german.group(1)), None
    english = _DATE_EN.search(words)
    if english:
        return MONTHS[english.group(1).lower()], int(english.group(2)), None
    return None
