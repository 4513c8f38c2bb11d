"""May mnemo speak first now? The hard rules for proactive check-ins, as one pure function."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

QUIET_AFTER_MESSAGE = timedelta(hours=3)
BUDGET = timedelta(hours=20)


@dataclass(frozen=True)
class CheckinFacts:
    """What the planner knows about one user at one moment."""

    now: datetime
    zone: ZoneInfo
    last_user_message: datetime | None
    last_message: datetime | None
    last_proactive: datetime | None
    proactive_unanswered: bool  # a check-in came after the person's last message (or one waits in the outbox)
    active_hours: tuple[int, int] = (9, 21)
    checkins_enabled: bool = True
    due_topic: str | None = None
    concern: str | None = None
    silence_threshold: timedelta = timedelta(hours=24)
    away_until: date | None = None  # the person announced an absence: no check-in before this day (local)
    welcome_back: str = ""  # back from an announced absence and not heard from since: what it was


@dataclass(frozen=True)
class Decision:
    """Whether to send, and why (or why not)."""

    send: bool
    reason: str
    detail: str = ""


def within_active_hours(now: datetime, zone: tzinfo, hours: tuple[int, int]) -> bool:
    """True when the local hour lies in [start, end)."""
    start, end = hours
    hour = now.astimezone(zone).hour
    return start <= hour < end if start <= end else hour >= start or hour < end


def decide_checkin(f: CheckinFacts) -> Decision:
    """Apply the hard rules, then pick the strongest reason: back from an absence, a due topic, a concern, silence."""
    if not f.checkins_enabled:
        return Decision(False, "disabled")
    if f.last_user_message is None:
        return Decision(False, "never wrote")
    if f.away_until is not None and f.now.astimezone(f.zone).date() < f.away_until:
        return Decision(False, "away", f"{f.away_until:%Y-%m-%d}")
    if not within_active_hours(f.now, f.zone, f.active_hours):
        return Decision(False, "outside active hours")
    if f.last_message is not None and f.now - f.last_message < QUIET_AFTER_MESSAGE:
        return Decision(False, "conversation too recent")
    if f.last_proactive is not None and f.now - f.last_proactive < BUDGET:
        return Decision(False, "budget: one proactive message per 20 hours")
    if f.proactive_unanswered:
        return Decision(False, "previous proactive message unanswered")
    if f.welcome_back:
        return Decision(True, "welcome back", f.welcome_back)
    if f.due_topic:
        return Decision(True, "due topic", f.due_topic)
    if f.concern:
        return Decision(True, "reflection concern", f.concern)
    if f.now - f.last_user_message >= f.silence_threshold:
        return Decision(True, "silence", str(f.now - f.last_user_message))
    return Decision(False, "nothing to say")
