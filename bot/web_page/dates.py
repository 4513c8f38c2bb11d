"""The web page's dates: one way to show them in the viewer's language, and the ways a person may type one
("24.12.2026", "24.12.26", "24.12." for this year, "2026-12-24"; a time after it: "24.12.2026 9:30")."""
from __future__ import annotations

import datetime as dt
import re

from bot.texts import t

DAY = {"de": "%d.%m.%Y", "en": "%Y-%m-%d"}
TIME = "%H:%M"
_GERMAN_DAY = re.compile(r"(\d{1,2})\.(\d{1,2})(?:\.(\d{4}|\d{2})?)?")
_ISO_DAY = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_TIME = re.compile(r"(?:[T ,]+(?:um )?(\d{1,2})(?::(\d{2}))?(?: ?Uhr)?)?")


def shown_day(day: dt.date, lang: str) -> str:
    """A day as the page shows it: '24.12.2026' (German), '2026-12-24' (English)."""
    return day.strftime(DAY.get(lang, DAY["de"]))


def shown_stored_day(text: str, lang: str) -> str:
    """A day stored as 'YYYY-MM-DD' (a diary entry's) the page's way; any other text as it is."""
    try:
        return shown_day(dt.date.fromisoformat(text), lang)
    except ValueError:
        return text


def shown_moment(ts: float | None, zone: dt.tzinfo, lang: str, day_only: bool = False) -> str:
    """A timestamp as the page shows it in `zone`: '24.12.2026 09:30' ('' for none)."""
    if ts is None:
        return ""
    moment = dt.datetime.fromtimestamp(ts, zone)
    return shown_day(moment.date(), lang) if day_only else f"{shown_day(moment.date(), lang)} {moment:{TIME}}"


def shown_yearly(month: int, day: int, year: int | None, lang: str) -> str:
    """A day of the year, with its year when known: '24.12.' or '24.12.1986'; '12-24' or '1986-12-24'."""
    if lang == "en":
        return f"{year}-{month:02d}-{day:02d}" if year else f"{month:02d}-{day:02d}"
    return f"{day:02d}.{month:02d}." + (f"{year}" if year else "")


def shown_yearly_date(kind: str, month: int, day: int, year: int | None, lang: str) -> str:
    """A person's yearly date on the page: '🎂 Geburtstag 03.03.1986'."""
    icon = {"birthday": "🎂", "anniversary": "💍"}.get(kind, "📅")
    return f"{icon} {t(lang, 'date_' + kind)} {shown_yearly(month, day, year, lang)}"


def read_day(text: str, today: dt.date) -> dt.date | None:
    """The day a person typed ('' -> None): German '24.12.2026', '24.12.26', '24.12.' (this year) or ISO
    '2026-12-24'; ValueError naming the text for anything else, or a day that does not exist."""
    day, rest = _day_and_rest(text.strip(), today)
    if rest.strip():
        raise ValueError(text)
    return day


def read_moment(text: str, zone: dt.tzinfo, today: dt.date) -> dt.datetime | None:
    """A day and a time a person typed, in `zone` ('' -> None): '24.12.2026 9:30', '24.12. 09:30', '24.12.2026, 9 Uhr',
    '2026-12-24T09:30' (what a datetime field sends); ValueError naming the text for anything else."""
    day, rest = _day_and_rest(text.strip(), today)
    if day is None:
        return None
    found = _TIME.fullmatch(rest.rstrip())
    if found is None or found.group(1) is None:
        raise ValueError(text)
    try:
        return dt.datetime.combine(day, dt.time(int(found.group(1)), int(found.group(2) or 0)), zone)
    except ValueError as exc:
        raise ValueError(text) from exc


def _day_and_rest(text: str, today: dt.date) -> tuple[dt.date | None, str]:
    """The day at the start of `text` and what follows it; (None, '') for an empty text."""
    if not text:
        return None, ""
    german, iso = _GERMAN_DAY.match(text), _ISO_DAY.match(text)
    try:
        if german is not None:
            year = german.group(3)
            full = today.year if year is None else int(year) + (2000 if len(year) == 2 else 0)
            return dt.date(full, int(german.group(2)), int(german.group(1))), text[german.end():]
        if iso is not None:
            return dt.date(int(iso.group(1)), int(iso.group(2)), int(iso.group(3))), text[iso.end():]
    except ValueError as exc:
        raise ValueError(text) from exc
    raise ValueError(text)
