"""Reminders the user asks for: a pure parser from a sentence and a clock to a due time.

"erinnere mich morgen um 9 an den Zahnarzt", "remind me in two hours to call Mia",
"jeden Montag um 8 an das Training". The program computes the time in the user's zone; an
ambiguous request is asked back, never guessed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

NUMBERS = {
    "ein": 1, "eine": 1, "einer": 1, "einem": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6,
    "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwölf": 12, "fünfzehn": 15, "zwanzig": 20,
    "dreißig": 30, "vierzig": 40, "fünfzig": 50,
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50,
}
WEEKDAYS = {
    "montag": 0, "dienstag": 1, "mittwoch": 2, "donnerstag": 3, "freitag": 4, "samstag": 5, "sonntag": 6,
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
}
MONTHS = {
    "januar": 1, "februar": 2, "märz": 3, "april": 4, "mai": 5, "juni": 6, "juli": 7, "august": 8,
    "september": 9, "oktober": 10, "november": 11, "dezember": 12, "january": 1, "february": 2, "march": 3,
    "may": 5, "june": 6, "july": 7, "october": 10, "december": 12,
}
_UNITS = {"minute": 60, "minuten": 60, "minutes": 60, "min": 60, "stunde": 3600, "stunden": 3600, "hour": 3600,
          "hours": 3600, "tag": 86400, "tagen": 86400, "tage": 86400, "day": 86400, "days": 86400}
_TRIGGER = re.compile(r"\b(erinnere?\s+mich|erinner\s+mich|remind\s+me)\b|^\s*(jeden|jede|every)\b", re.I)
_NUM = r"(\d+|" + "|".join(sorted(NUMBERS, key=len, reverse=True)) + r")"


@dataclass(frozen=True)
class Reminder:
    """A parsed reminder: what, when (aware, in the user's zone) and how it repeats."""

    text: str
    due: datetime
    repeat: str = ""  # "", "daily", or "weekly"


@dataclass(frozen=True)
class AskBack:
    """The request names no clear time (or no subject): ask instead of guessing."""

    missing: str  # "time" | "text"


def _num(word: str) -> int:
    return int(word) if word.isdigit() else NUMBERS[word]


def _clock(text: str) -> tuple[time, str] | None:
    """The time of day in text ('um 9', 'um 18:30 Uhr', 'at 5pm', '9 Uhr abends') and the rest."""
    m = re.search(r"\b(?:um|at|gegen)\s+(\d{1,2})(?:[:.](\d{2}))?\s*(uhr|h|am|pm|a\.m\.|p\.m\.)?"
                  r"(?:\s+(morgens|früh|vormittags|nachmittags|abends|nachts))?", text, re.I)
    if not m:
        m = re.search(r"\b(\d{1,2})(?:[:.](\d{2}))?\s*(uhr|am|pm)\b"
                      r"(?:\s+(morgens|früh|vormittags|nachmittags|abends|nachts))?", text, re.I)
    if not m:
        return None
    hour, minute = int(m.group(1)), int(m.group(2) or 0)
    suffix, part = (m.group(3) or "").lower(), (m.group(4) or "").lower()
    if suffix.startswith("p") or part in ("nachmittags", "abends", "nachts"):
        hour = hour + 12 if hour < 12 else hour
    if suffix.startswith("a") and hour == 12:
        hour = 0
    if hour > 23 or minute > 59:
        return None
    return time(hour, minute), text[: m.start()] + " " + text[m.end():]


_ARTICLES = r"(?:den|die|das|dem|der|meine[nmrs]?|mein|the)\s+"
_WHEN_WORDS = r"\b(?:heute|morgen|übermorgen|today|tomorrow|jeden|jede|every|am|on)\b"


def _subject(text: str) -> str:
    """What to remind of: what follows 'an'/'daran'/'to'/'about', without articles and trailing time words."""
    m = re.search(r"\b(?:daran,?\s*(?:dass\s+)?|an\s+|to\s+|about\s+|that\s+)(.+)$", text, re.I)
    if not m:
        return ""
    body = re.sub(rf"^{_ARTICLES}", "", m.group(1).strip(), flags=re.I)
    body = re.sub(rf"(\s+{_WHEN_WORDS}.*)$", "", body, flags=re.I)
    return " ".join(body.strip(" .!?,").split())


def _next_weekday(today: date, weekday: int, at: time, now: datetime, zone: ZoneInfo) -> datetime:
    days = (weekday - today.weekday()) % 7
    due = datetime.combine(today + timedelta(days=days), at, zone)
    return due if due > now else datetime.combine(today + timedelta(days=days + 7), at, zone)


def parse_reminder(text: str, now: datetime, zone: ZoneInfo) -> Reminder | AskBack | None:
    """Read a reminder request; None when the text asks for none."""
    if not _TRIGGER.search(text) or re.search(r"\bich\s+erinnere?\s+mich\b", text, re.I):
        return None
    now = now.astimezone(zone)
    lowered = text.casefold()
    relative = re.search(rf"\b(?:in|nach)\s+(?:einer\s+)?(halben\s+stunde|half\s+an\s+hour|{_NUM}\s+(\w+))", lowered)
    if relative:
        return _in_a_while(lowered, relative, now, zone)
    clock = _clock(lowered)
    if clock is None:
        return AskBack("time")
    at, rest = clock
    every = re.search(r"\b(?:jeden|jede|every)\s+(tag|morgen|abend|day|morning|evening|\w+)", rest)
    if every:
        return _every(rest, every, at, now, zone)
    return _on_a_day(rest, at, now, zone)


def _in_a_while(lowered: str, relative: re.Match[str], now: datetime, zone: ZoneInfo) -> Reminder | AskBack:
    """'in 20 Minuten', 'in einer halben Stunde', 'in 2 hours': from now on."""
    if relative.group(1).startswith(("halben", "half")):
        seconds = 1800
    else:
        unit = _UNITS.get(relative.group(3) or "")
        if unit is None:
            return AskBack("time")
        seconds = _num(relative.group(2)) * unit
    subject = _subject(lowered[: relative.start()] + " " + lowered[relative.end():])
    if not subject:
        return AskBack("text")
    return Reminder(subject, datetime.fromtimestamp(now.timestamp() + seconds, zone))


def _every(rest: str, every: re.Match[str], at: time, now: datetime, zone: ZoneInfo) -> Reminder | AskBack:
    """'jeden Montag um 8', 'every day at 7': a weekly or daily reminder, next at the coming one."""
    word, today = every.group(1), now.date()
    subject = _subject(rest.replace(every.group(0), " "))
    if not subject:
        return AskBack("text")
    if word in WEEKDAYS:
        return Reminder(subject, _next_weekday(today, WEEKDAYS[word], at, now, zone), "weekly")
    if word in ("tag", "day", "morgen", "abend", "morning", "evening"):
        due = datetime.combine(today, at, zone)
        tomorrow = datetime.combine(today + timedelta(days=1), at, zone)
        return Reminder(subject, due if due > now else tomorrow, "daily")
    return AskBack("time")


def _on_a_day(rest: str, at: time, now: datetime, zone: ZoneInfo) -> Reminder | AskBack:
    """'morgen um 9', 'am Freitag um 8', 'am 3. Mai um 10', 'um 18 Uhr' (today, unless that has passed)."""
    subject = _subject(rest)
    if not subject:
        return AskBack("text")
    today = now.date()
    weekday = next((WEEKDAYS[w] for w in re.findall(r"\w+", rest) if w in WEEKDAYS), None)
    explicit = re.search(r"\b(\d{1,2})\.\s*(?:(\d{1,2})\.|(" + "|".join(MONTHS) + r"))", rest)
    if re.search(r"\bübermorgen\b|\bday after tomorrow\b", rest):
        due = datetime.combine(today + timedelta(days=2), at, zone)
    elif re.search(r"\bmorgen\b|\btomorrow\b", rest):
        due = datetime.combine(today + timedelta(days=1), at, zone)
    elif weekday is not None:
        due = _next_weekday(today, weekday, at, now, zone)
    elif explicit:
        month = int(explicit.group(2)) if explicit.group(2) else MONTHS[explicit.group(3)]
        candidate = date(today.year, month, int(explicit.group(1)))
        if datetime.combine(candidate, at, zone) <= now:
            candidate = date(today.year + 1, month, int(explicit.group(1)))
        due = datetime.combine(candidate, at, zone)
    else:
        due = datetime.combine(today, at, zone)
        if due <= now:
            return AskBack("time")  # "um 9" when 9 o'clock has passed: today evening or tomorrow?
    return Reminder(subject, due)


_EXPLICIT = re.compile(r"\b(erinnere?\s+mich|erinner\s+mich|remind\s+me)\b", re.I)
SNOOZES = ("10m", "1h", "tomorrow")


def explicit_request(text: str) -> bool:
    """True when the text asks for a reminder in so many words (only then is an unclear one asked back)."""
    return bool(_EXPLICIT.search(text))


def original_case(subject: str, text: str) -> str:
    """The subject as the user wrote it ('zahnarzt' in 'an den Zahnarzt' -> 'Zahnarzt')."""
    found = re.search(re.escape(subject), text, re.I)
    return found.group(0) if found else subject


def next_due(due: datetime, repeat: str, now: datetime, zone: ZoneInfo) -> datetime | None:
    """The next time a repeating reminder fires after `now`, at the same wall-clock time; None for one-time ones."""
    if repeat not in ("daily", "weekly"):
        return None
    step = timedelta(days=1 if repeat == "daily" else 7)
    local = due.astimezone(zone)
    day, at = local.date(), local.timetz().replace(tzinfo=None)
    following = datetime.combine(day + step, at, zone)
    while following <= now:
        day += step
        following = datetime.combine(day + step, at, zone)
    return following


def snooze_until(choice: str, now: datetime, due: datetime, zone: ZoneInfo) -> datetime:
    """When a snoozed reminder comes back: in 10 minutes, in an hour, or tomorrow at its usual time."""
    if choice in ("10m", "1h"):  # absolute seconds: wall-clock arithmetic would be off by an hour across DST
        return datetime.fromtimestamp(now.timestamp() + (600 if choice == "10m" else 3600), zone)
    if choice == "tomorrow":
        return datetime.combine(now.astimezone(zone).date() + timedelta(days=1),
                                due.astimezone(zone).timetz().replace(tzinfo=None), zone)
    raise ValueError(f"unknown snooze {choice!r}")
