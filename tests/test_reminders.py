"""The reminder parser over German and English phrasings, with a fixed clock and zone."""
from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from scheduler.reminder_times import AskBack, Reminder, parse_reminder

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 11, 25, 14, 30, tzinfo=BERLIN)  # a Wednesday


@pytest.mark.parametrize("text, due, subject, repeat", [
    ("Erinnere mich morgen um 9 an den Zahnarzt", "2026-11-26 09:00", "zahnarzt", ""),
    ("erinnere mich heute um 18:30 an die Wäsche", "2026-11-25 18:30", "wäsche", ""),
    ("Erinnere mich in zwei Stunden daran, Mia anzurufen", "2026-11-25 16:30", "mia anzurufen", ""),
    ("erinner mich in 10 Minuten an den Tee", "2026-11-25 14:40", "tee", ""),
    ("Erinnere mich in einer halben Stunde an den Ofen", "2026-11-25 15:00", "ofen", ""),
    ("Erinnere mich am Freitag um 8 an das Meeting", "2026-11-27 08:00", "meeting", ""),
    ("Erinnere mich übermorgen um 7 Uhr an den Flug", "2026-11-27 07:00", "flug", ""),
    ("Erinnere mich am 3. Dezember um 14 Uhr an den Geburtstag von Oma", "2026-12-03 14:00", "geburtstag von oma", ""),
    ("Erinnere mich morgen um 9 Uhr abends an die Serie", "2026-11-26 21:00", "serie", ""),
    ("jeden Montag um 8 an das Training", "2026-11-30 08:00", "training", "weekly"),
    ("Erinnere mich jeden Tag um 7 an die Tabletten", "2026-11-26 07:00", "tabletten", "daily"),
    ("Remind me tomorrow at 9 to call mom", "2026-11-26 09:00", "call mom", ""),
    ("remind me in two hours to water the plants", "2026-11-25 16:30", "water the plants", ""),
    ("remind me at 5pm to leave", "2026-11-25 17:00", "leave", ""),
    ("Remind me on Friday at 10am about the report", "2026-11-27 10:00", "report", ""),
    ("every Monday at 8 remind me to stretch", "2026-11-30 08:00", "stretch", "weekly"),
])
def test_reminder_phrasings(text: str, due: str, subject: str, repeat: str) -> None:
    parsed = parse_reminder(text, NOW, BERLIN)
    assert isinstance(parsed, Reminder), parsed
    assert parsed.due.strftime("%Y-%m-%d %H:%M") == due
    assert parsed.text == subject and parsed.repeat == repeat


@pytest.mark.parametrize("text, missing", [
    ("Erinnere mich morgen an den Zahnarzt", "time"),
    ("Erinnere mich um 9 an den Zahnarzt", "time"),  # 9 o'clock has passed today: evening or tomorrow?
    ("Erinnere mich morgen um 9", "text"),
    ("remind me tomorrow to call mom", "time"),
])
def test_ambiguous_requests_are_asked_back(text: str, missing: str) -> None:
    assert parse_reminder(text, NOW, BERLIN) == AskBack(missing)


@pytest.mark.parametrize("text", ["Ich erinnere mich gern an den Urlaub", "Wie spät ist es?",
                                  "Morgen um 9 ist Training"])
def test_no_reminder(text: str) -> None:
    assert parse_reminder(text, NOW, BERLIN) is None


def test_across_the_dst_change() -> None:
    # Saturday 2026-03-28 20:00; the clocks go forward in the night.
    saturday = datetime(2026, 3, 28, 20, 0, tzinfo=BERLIN)
    tomorrow = parse_reminder("Erinnere mich morgen um 9 an den Brunch", saturday, BERLIN)
    assert isinstance(tomorrow, Reminder) and tomorrow.due.strftime("%Y-%m-%d %H:%M %Z") == "2026-03-29 09:00 CEST"
    assert tomorrow.due.timestamp() - saturday.timestamp() == 12 * 3600  # 13 wall-clock hours, one skipped
    later = parse_reminder("Erinnere mich in 12 Stunden an den Brunch", saturday, BERLIN)
    assert isinstance(later, Reminder) and later.due.strftime("%H:%M %Z") == "09:00 CEST"
