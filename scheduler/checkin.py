"""Proactive check-ins: gather the facts, let the pure planner decide, compose, deliver, record."""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from memory import Histogram, MemoryStore, Scope, is_group_scope
from scheduler.away import STATE_KEY, Away, kept
from scheduler.backoff import ANSWER_WITHIN, LOOK_BACK, backoff_factor, ignored_streak
from scheduler.planner import (
    CheckinFacts,
    Decision,
    decide_checkin,
    facts_from_state,
    facts_to_state,
    held_back_by,
    next_chance,
)
from scheduler.ports import Composer, Sender
from scheduler.relationship_rules import silence_for
from scheduler.rhythm import week_of_likely_hours

log = logging.getLogger(__name__)

REPEAT_WINDOW = 24 * 3600.0  # seconds within which an identical proactive text is never sent again
OTHER_WORKER = "another worker writes in this slot"  # the reason when the person's slot is another worker's
LAST_DECISION = "checkin_decision"  # scope_state key: the planner's last decision for the person (/checkins warum)


def repeats(text: str, earlier: Sequence[str]) -> bool:
    """Whether a proactive text is the same (ignoring case and spacing) as one sent before."""
    key = " ".join(text.split()).casefold()
    return any(" ".join(e.split()).casefold() == key for e in earlier)


def unanswered(last_user_message_id: int | None, last_checkin_id: int | None) -> bool:
    """Whether a check-in came after the person's last message, whatever else (a reminder, a diary push) came since."""
    return last_checkin_id is not None and (last_user_message_id is None or last_checkin_id > last_user_message_id)


def absence(away: Away | None, today: date) -> tuple[date | None, str]:
    """From an announced absence: the day the person is back while they are away, else what to welcome them from."""
    if away is None or today < away.start:
        return None, ""
    if today < away.back:
        return away.back, ""
    last = away.back - timedelta(days=1)
    return None, f"The person announced an absence from {away.start:%Y-%m-%d} to {last:%Y-%m-%d} and is back since."


async def gather(store: MemoryStore, scope: Scope, now: float, zone: ZoneInfo,
                 silence: timedelta | None = None) -> CheckinFacts:
    """The planner's facts for one user at `now`; the silence threshold comes from the stage unless given."""
    if silence is None:
        silence = silence_for((await store.relationships.get(scope)).stage)
    prefs = await store.preferences.get(scope)
    zone = ZoneInfo(prefs.timezone) if prefs.timezone else zone
    last_user = await store.messages.last_user_message(scope)
    newest = await store.messages.recent(scope, 1)
    last_proactive = await store.messages.last_proactive(scope)
    waiting = [item for item in await store.outbox.items(scope) if item.status == "pending" and item.kind == "checkin"]
    due = await store.topics.due(scope, now, limit=5)
    topic = next((tp.text for tp in due if tp.origin != "reflection"), None)
    concern = next((tp.text for tp in due if tp.origin == "reflection"), None)
    today = datetime.fromtimestamp(now, zone).date()
    away_until, welcome_back = absence(kept(await store.state.get(scope, STATE_KEY)), today)
    checkins = await store.messages.checkin_times(scope, LOOK_BACK)
    wrote = await store.messages.user_message_times(scope, min(checkins)) if checkins else []
    incognito = await store.incognito.activity(scope)  # a number and times: what was said is nowhere
    answered_incognito = (incognito is not None and last_proactive is not None
                          and incognito.last_at > last_proactive.created_at.timestamp())
    return CheckinFacts(
        now=datetime.fromtimestamp(now, zone), zone=zone,
        last_user_message=last_user.created_at if last_user else None,
        last_message=newest[-1].created_at if newest else None,
        last_proactive=last_proactive.created_at if last_proactive else None,
        proactive_unanswered=(unanswered(last_user.id if last_user else None,
                                         last_proactive.id if last_proactive else None)
                              and not answered_incognito) or bool(waiting),
        active_hours=prefs.hours(), checkins_enabled=prefs.checkins,
        due_topic=topic, concern=concern, silence_threshold=silence,
        away_until=away_until, welcome_back=welcome_back,
        likely_hours=week_of_likely_hours(await store.rhythm.histogram(scope, now), prefs.hours()),
        ignored_streak=ignored_streak(checkins, wrote, now,
                                      answered_in_incognito=incognito.answered_checkin if incognito else None),
        last_incognito=datetime.fromtimestamp(incognito.last_at, zone) if incognito else None,
    )


def explained(facts: CheckinFacts, decision: Decision) -> dict[str, object]:
    """A decision as /checkins warum tells it: the rule and the facts it rests on (JSON-ready).

    When the companion could write next is not worked out here, on every planner run for every person, but by
    `chances` when someone asks, on these same facts.
    """
    local = facts.now.astimezone(facts.zone)
    likely = facts.likely_hours[local.weekday()] if facts.likely_hours is not None else None
    return {
        "at": facts.now.timestamp(), "send": decision.send, "reason": decision.reason, "zone": str(facts.zone),
        "active_hours": list(facts.active_hours), "likely_hours": sorted(likely) if likely is not None else None,
        "streak": facts.ignored_streak, "factor": backoff_factor(facts.ignored_streak),
        "answer_within_hours": ANSWER_WITHIN.total_seconds() / 3600,
        "silence_hours": facts.silence_needed.total_seconds() / 3600,
        "away_until": facts.away_until.isoformat() if facts.away_until else None,
        "facts": facts_to_state(facts),
    }


def chances(record: dict[str, Any]) -> tuple[float | None, str | None]:
    """For a recorded decision not to write: the first moment the rules would let a check-in go (a unix time), and
    with none ahead, the rule that holds back for good; a record without its facts carries both itself."""
    if record.get("send") or "facts" not in record:
        return record.get("next"), record.get("held_by")
    facts = facts_from_state(record["facts"])
    chance = next_chance(facts)
    # with no chance ahead, what holds it back for good (a check-in waiting for its answer, check-ins off, …)
    return (chance.timestamp(), None) if chance else (None, held_back_by(facts))


def moved_to(record: dict[str, Any], zone: ZoneInfo, hist: Histogram) -> dict[str, Any]:
    """A recorded decision told after the person changed their zone: its facts on the new clock, with the hours
    learned as they stand now, so the next chance is the one the planner will find; 'moved_from' names the zone the
    rule was applied in. A record without its facts only changes its zone."""
    if "facts" not in record:
        return {**record, "zone": zone.key, "moved_from": record.get("zone")}
    facts = facts_from_state(record["facts"])
    facts = replace(facts, zone=zone, now=facts.now.astimezone(zone),
                    likely_hours=week_of_likely_hours(hist, facts.active_hours))
    likely = facts.likely_hours[facts.now.weekday()] if facts.likely_hours is not None else None
    return {**record, "zone": zone.key, "moved_from": record.get("zone"), "facts": facts_to_state(facts),
            "likely_hours": sorted(likely) if likely is not None else None}


def dates_line(facts: CheckinFacts) -> str:
    """Now and the person's last message for the model, both in the person's zone (it reads them side by side)."""
    last = facts.last_user_message
    said = f" Last message of the person: {last.astimezone(facts.zone):%A %Y-%m-%d %H:%M}." if last else ""
    return f"Now: {facts.now.astimezone(facts.zone):%A %Y-%m-%d %H:%M}.{said}"


async def check_in(
    store: MemoryStore, composer: Composer, sender: Sender, scope: Scope, now: float, zone: ZoneInfo,
    silence: timedelta | None = None, claim: Callable[[], Awaitable[bool]] | None = None,
) -> Decision:
    """Decide for one user and, when the rules allow, write and deliver one message.

    `claim` (the planner's slot, several workers) takes the person before the message is written; when another
    worker took them in this slot, this one writes nothing.
    """
    if is_group_scope(scope.user_id):
        return Decision(False, "group chat: mnemo speaks first only in private chats")
    facts = await gather(store, scope, now, zone, silence)
    decision = await _write(store, composer, sender, scope, facts, claim)
    await store.state.put(scope, LAST_DECISION, explained(facts, decision), now=now)
    return decision


async def _write(store: MemoryStore, composer: Composer, sender: Sender, scope: Scope, facts: CheckinFacts,
                 claim: Callable[[], Awaitable[bool]] | None = None) -> Decision:
    """Let the planner decide on the facts and, when it allows (and the person is ours), write and deliver one
    message."""
    now = facts.now.timestamp()
    decision = decide_checkin(facts)
    if not decision.send:
        return decision
    if claim is not None and not await claim():
        log.info("check-in for scope %s not sent: another worker writes to them in this slot", scope.id)
        return Decision(False, OTHER_WORKER)
    text = (await composer.compose_proactive(scope, decision.reason, f"{decision.detail}\n{dates_line(facts)}")).strip()
    if not text:
        return Decision(False, "model declined")
    if repeats(text, await store.messages.proactive_texts_since(scope, now - REPEAT_WINDOW)):
        log.info("check-in for scope %s not sent: the same text went out within 24 h", scope.id)
        return Decision(False, "same text sent within 24 h")
    if not await sender.deliver(scope, text):
        log.warning("check-in for scope %s not delivered yet; the outbox retries it", scope.id)
    if decision.reason == "welcome back":
        await store.state.pop(scope, STATE_KEY)  # one welcome; the absence is over
    for topic in await store.topics.due(scope, now, limit=5):
        if topic.text == decision.detail:
            await store.topics.set_status(scope, topic.id, "raised")
    log.info("check-in sent to scope %s: %s", scope.id, decision.reason)
    return decision
