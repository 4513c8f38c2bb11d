"""The check-in rules as a table of cases against the pure function."""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from scheduler.planner import CheckinFacts, decide_checkin, within_active_hours

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 11, 25, 18, 0, tzinfo=BERLIN)
H = timedelta(hours=1)

BASE = CheckinFacts(now=NOW, zone=BERLIN, last_user_message=NOW - 30 * H, last_message=NOW - 29 * H,
                    last_proactive=None, proactive_unanswered=False)


@pytest.mark.parametrize("change, send, reason", [
    ({}, True, "silence"),
    ({"due_topic": "Wie war der Zahnarzt?"}, True, "due topic"),
    ({"concern": "Sie wirkte erschöpft."}, True, "reflection concern"),
    ({"due_topic": "Zahnarzt", "concern": "erschöpft"}, True, "due topic"),
    ({"last_user_message": None, "last_message": None}, False, "never wrote"),
    ({"now": NOW.replace(hour=22)}, False, "outside active hours"),
    ({"now": NOW.replace(hour=8, minute=59)}, False, "outside active hours"),
    ({"now": NOW.replace(hour=9), "due_topic": "x"}, True, "due topic"),
    ({"now": NOW.replace(hour=20, minute=59)}, True, "silence"),
    ({"last_message": NOW - 2 * H, "due_topic": "x"}, False, "conversation too recent"),
    ({"last_message": NOW - 3 * H, "last_user_message": NOW - 3 * H, "due_topic": "x"}, True, "due topic"),
    ({"last_proactive": NOW - 19 * H, "due_topic": "x"}, False, "budget: one proactive message per 20 hours"),
    ({"last_proactive": NOW - 20 * H, "due_topic": "x"}, True, "due topic"),
    ({"last_proactive": NOW - 40 * H, "proactive_unanswered": True, "due_topic": "x"}, False,
     "previous proactive message unanswered"),
    ({"last_user_message": NOW - 5 * H, "last_message": NOW - 5 * H}, False, "nothing to say"),
    ({"checkins_enabled": False, "due_topic": "x"}, False, "disabled"),
    ({"active_hours": (22, 6), "now": NOW.replace(hour=23)}, True, "silence"),
    ({"last_incognito": NOW - 2 * H, "due_topic": "x"}, False, "talking in incognito"),
    ({"last_incognito": NOW - 3 * H, "due_topic": "x"}, True, "due topic"),
    ({"last_incognito": NOW - 5 * H}, False, "nothing to say"),  # silence counts from the incognito message too
    ({"last_user_message": None, "last_message": None, "last_incognito": NOW - 30 * H}, True, "silence"),
])
def test_checkin_rules(change: dict, send: bool, reason: str) -> None:
    decision = decide_checkin(replace(BASE, **change))
    assert (decision.send, decision.reason) == (send, reason)


def test_active_hours_use_the_users_zone() -> None:
    utc_evening = datetime(2026, 11, 25, 20, 30, tzinfo=ZoneInfo("UTC"))  # 21:30 in Berlin
    assert within_active_hours(utc_evening, ZoneInfo("UTC"), (9, 21))
    assert not within_active_hours(utc_evening, BERLIN, (9, 21))


def test_a_checkin_after_the_persons_last_message_blocks_whatever_came_after_it() -> None:
    from scheduler.checkin import unanswered

    assert unanswered(last_user_message_id=10, last_checkin_id=12), "a reminder (13) after it does not clear it"
    assert not unanswered(last_user_message_id=14, last_checkin_id=12), "only the person's answer clears it"
    assert unanswered(None, 3) and not unanswered(10, None) and not unanswered(None, None)
