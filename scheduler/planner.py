"""May mnemo speak first now? The hard rules for proactive check-ins, as one pure function."""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from scheduler.backoff import backoff_factor

QUIET_AFTER_MESSAGE = timedelta(hours=3)
BUDGET = timedelta(hours=20)
HORIZON = timedelta(days=14)  # how far ahead next_chance looks


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
    likely_hours: tuple[frozenset[int], ...] | None = None  # per local weekday, Monday first (None: every active hour)
    ignored_streak: int = 0  # check-ins in a row the person did not answer in time (scheduler.backoff)
    last_incognito: datetime | None = None  # the person's last message in incognito (only its time is kept)

    @property
    def silence_needed(self) -> timedelta:
        """The silence threshold grown by the back-off."""
        return self.silence_threshold * backoff_factor(self.ignored_streak)


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


def chatting_incognito(now: datetime, last_incognito: datetime | None) -> bool:
    """Whether the person is talking in incognito at `now`: their last message in it came less than
    QUIET_AFTER_MESSAGE ago (the log does not see those messages, so 'quiet' must not be read from it alone)."""
    return last_incognito is not None and now - last_incognito < QUIET_AFTER_MESSAGE


def last_heard(f: CheckinFacts) -> datetime | None:
    """When the person last wrote, in the log or in incognito."""
    heard = [at for at in (f.last_user_message, f.last_incognito) if at is not None]
    return max(heard) if heard else None


def decide_checkin(f: CheckinFacts) -> Decision:
    """Apply the hard rules and the learned hours, then pick the strongest reason: back from an absence, a due
    topic, a concern, silence.

    Silence counts once it lasted the threshold, grown by the back-off when check-ins went unanswered.
    """
    if not f.checkins_enabled:
        return Decision(False, "disabled")
    heard = last_heard(f)
    if heard is None:
        return Decision(False, "never wrote")
    if f.away_until is not None and f.now.astimezone(f.zone).date() < f.away_until:
        return Decision(False, "away", f"{f.away_until:%Y-%m-%d}")
    if not within_active_hours(f.now, f.zone, f.active_hours):
        return Decision(False, "outside active hours")
    if f.last_message is not None and f.now - f.last_message < QUIET_AFTER_MESSAGE:
        return Decision(False, "conversation too recent")
    if chatting_incognito(f.now, f.last_incognito):
        return Decision(False, "talking in incognito")
    if f.last_proactive is not None and f.now - f.last_proactive < BUDGET:
        return Decision(False, "budget: one proactive message per 20 hours")
    if f.proactive_unanswered:
        return Decision(False, "previous proactive message unanswered")
    local = f.now.astimezone(f.zone)
    if f.likely_hours is not None and local.hour not in f.likely_hours[local.weekday()]:
        return Decision(False, "not a likely hour")
    if f.welcome_back:
        return Decision(True, "welcome back", f.welcome_back)
    if f.due_topic:
        return Decision(True, "due topic", f.due_topic)
    if f.concern:
        return Decision(True, "reflection concern", f.concern)
    if f.now - heard >= f.silence_needed:
        return Decision(True, "silence", str(f.now - heard))
    return Decision(False, "nothing to say")


def next_chance(f: CheckinFacts, horizon: timedelta = HORIZON,
                step: timedelta = timedelta(minutes=15)) -> datetime | None:
    """The first planner run after `f.now` at which the rules would let a check-in go, the facts held fixed.

    None when none within the horizon would (check-ins off, a check-in waits for its answer, …): then only
    something the person does changes it.
    """
    start = f.now.astimezone(UTC)  # steps in real time, whatever the clocks do at a switch
    at = start + step
    while at - start <= horizon:
        if decide_checkin(replace(f, now=at)).send:
            return at.astimezone(f.zone)
        at += step
    return None


def facts_to_state(f: CheckinFacts) -> dict[str, Any]:
    """The facts as JSON-ready values, so a decision can be explained later on the facts it was made on."""
    def stamp(at: datetime | None) -> float | None:
        return at.timestamp() if at is not None else None

    return {
        "now": f.now.timestamp(), "zone": str(f.zone), "last_user_message": stamp(f.last_user_message),
        "last_message": stamp(f.last_message), "last_proactive": stamp(f.last_proactive),
        "proactive_unanswered": f.proactive_unanswered, "active_hours": list(f.active_hours),
        "checkins_enabled": f.checkins_enabled, "due_topic": f.due_topic, "concern": f.concern,
        "silence_threshold": f.silence_threshold.total_seconds(),
        "away_until": f.away_until.isoformat() if f.away_until else None, "welcome_back": f.welcome_back,
        "likely_hours": [sorted(hours) for hours in f.likely_hours] if f.likely_hours is not None else None,
        "ignored_streak": f.ignored_streak, "last_incognito": stamp(f.last_incognito),
    }


def facts_from_state(d: dict[str, Any]) -> CheckinFacts:
    """The facts as `facts_to_state` kept them."""
    zone = ZoneInfo(d["zone"])

    def moment(at: float | None) -> datetime | None:
        return datetime.fromtimestamp(at, zone) if at is not None else None

    start, end = d["active_hours"]
    return CheckinFacts(
        now=datetime.fromtimestamp(d["now"], zone), zone=zone, last_user_message=moment(d["last_user_message"]),
        last_message=moment(d["last_message"]), last_proactive=moment(d["last_proactive"]),
        proactive_unanswered=d["proactive_unanswered"], active_hours=(start, end),
        checkins_enabled=d["checkins_enabled"], due_topic=d["due_topic"], concern=d["concern"],
        silence_threshold=timedelta(seconds=d["silence_threshold"]),
        away_until=date.fromisoformat(d["away_until"]) if d["away_until"] else None, welcome_back=d["welcome_back"],
        likely_hours=tuple(frozenset(hours) for hours in d["likely_hours"]) if d["likely_hours"] is not None else None,
        ignored_streak=d["ignored_streak"], last_incognito=moment(d.get("last_incognito")),
    )


def held_back_by(f: CheckinFacts, horizon: timedelta = HORIZON) -> str:
    """With no chance ahead: the rule that holds back for good (not the hour of the day), the facts held fixed."""
    end = f.now.astimezone(UTC) + horizon
    reasons = [decide_checkin(replace(f, now=end - timedelta(hours=h))).reason for h in range(24)]
    return next((r for r in reasons if r not in ("outside active hours", "not a likely hour")), reasons[0])
