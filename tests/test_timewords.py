"""The time-window function over a table of German and English phrases, with a fixed clock."""
from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from memory.search.timewords import time_window

BERLIN = ZoneInfo("Europe/Berlin")
# Wednesday, 2026-11-25, 14:30 in Berlin.
NOW = datetime(2026, 11, 25, 14, 30, tzinfo=BERLIN)


@pytest.mark.parametrize("text, start, end", [
    ("was habe ich heute gesagt", "2026-11-25 00", "2026-11-26 00"),
    ("was habe ich gestern gesagt", "2026-11-24 00", "2026-11-25 00"),
    ("vorgestern", "2026-11-23 00", "2026-11-24 00"),
    ("was habe ich gestern abends gesagt", "2026-11-24 17", "2026-11-25 00"),
    ("gestern Abend im Kino", "2026-11-24 17", "2026-11-25 00"),
    ("gestern am Abend", "2026-11-24 17", "2026-11-25 00"),
    ("heute morgen", "2026-11-25 00", "2026-11-25 12"),
    ("heute früh", "2026-11-25 00", "2026-11-25 12"),
    ("vormittags", "2026-11-25 00", "2026-11-25 12"),
    ("mittags", "2026-11-25 11", "2026-11-25 15"),
    ("gestern nachmittag", "2026-11-24 12", "2026-11-24 18"),
    ("am Nachmittag", "2026-11-25 12", "2026-11-25 18"),
    ("abends", "2026-11-25 17", "2026-11-26 00"),
    ("letzte Woche", "2026-11-16 00", "2026-11-23 00"),
    ("in der vergangenen Woche", "2026-11-16 00", "2026-11-23 00"),
    ("what did I say today", "2026-11-25 00", "2026-11-26 00"),
    ("yesterday", "2026-11-24 00", "2026-11-25 00"),
    ("this morning", "2026-11-25 00", "2026-11-25 12"),
    ("at noon", "2026-11-25 11", "2026-11-25 15"),
    ("in the afternoon", "2026-11-25 12", "2026-11-25 18"),
    ("tonight", "2026-11-25 17", "2026-11-26 00"),
    ("yesterday evening", "2026-11-24 17", "2026-11-25 00"),
    ("last night", "2026-11-24 17", "2026-11-25 00"),
    ("last week", "2026-11-16 00", "2026-11-23 00"),
])
def test_time_words(text: str, start: str, end: str) -> None:
    window = time_window(text, NOW, BERLIN)
    assert window is not None, text
    assert window.start.strftime("%Y-%m-%d %H") == start
    assert window.end.strftime("%Y-%m-%d %H") == end


@pytest.mark.parametrize("text", ["Ich gehe morgen ins Kino", "Was ist mein Lieblingsessen?", "Morgenstern",
                                  "tomorrow"])
def test_no_time_words(text: str) -> None:
    assert time_window(text, NOW, BERLIN) is None


def test_time_words_are_removed_from_the_query() -> None:
    window = time_window("was habe ich gestern abends über Kino gesagt", NOW, BERLIN)
    assert window is not None and window.rest == "was habe ich über Kino gesagt"


def test_window_follows_daylight_saving_time() -> None:
    # 2026-03-29 is the switch to summer time in Berlin: that day has 23 hours.
    window = time_window("gestern", datetime(2026, 3, 30, 12, tzinfo=BERLIN), BERLIN)
    assert window is not None and window.end.timestamp() - window.start.timestamp() == 23 * 3600
