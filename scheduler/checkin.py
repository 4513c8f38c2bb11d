"""Proactive check-ins: gather the facts, let the pure planner decide, compose, deliver, record."""
from __future__ import annotations

import logging
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from memory.models import Scope
from memory.store import MemoryStore
from scheduler.planner import CheckinFacts, Decision, decide_checkin
from scheduler.ports import Composer, Sender

log = logging.getLogger(__name__)


async def gather(store: MemoryStore, scope: Scope, now: float, zone: ZoneInfo,
                 silence: timedelta = timedelta(hours=24)) -> CheckinFacts:
    """The planner's facts for one user at `now`."""
    prefs = await store.preferences.get(scope)
    zone = ZoneInfo(prefs.timezone) if prefs.timezone else zone
    last_user = await store.messages.last_user_message(scope)
    newest = await store.messages.recent(scope, 1)
    last_proactive = await store.messages.last_proactive(scope)
    waiting = [item for item in await store.outbox.items(scope) if item.status == "pending" and item.kind == "checkin"]
    due = await store.topics.due(scope, now, limit=5)
    topic = next((tp.text for tp in due if tp.origin != "reflection"), None)
    concern = next((tp.text for tp in due if tp.origin == "reflection"), None)
    return CheckinFacts(
        now=datetime.fromtimestamp(now, zone), zone=zone,
        last_user_message=last_user.created_at if last_user else None,
        last_message=newest[-1].created_at if newest else None,
        last_proactive=last_proactive.created_at if last_proactive else None,
        proactive_unanswered=bool(newest and newest[-1].proactive) or bool(waiting),
        active_hours=prefs.hours(), checkins_enabled=prefs.checkins,
        due_topic=topic, concern=concern, silence_threshold=silence,
    )


async def check_in(
    store: MemoryStore, composer: Composer, sender: Sender, scope: Scope, now: float, zone: ZoneInfo,
    silence: timedelta = timedelta(hours=24),
) -> Decision:
    """Decide for one user and, when the rules allow, write and deliver one message."""
    facts = await gather(store, scope, now, zone, silence)
    decision = decide_checkin(facts)
    if not decision.send:
        return decision
    dates = f"Now: {facts.now:%A %Y-%m-%d %H:%M}. Last message of the person: {facts.last_user_message:%Y-%m-%d %H:%M}."
    text = (await composer.compose_proactive(scope, decision.reason, f"{decision.detail}\n{dates}")).strip()
    if not text:
        return Decision(False, "model declined")
    if not await sender.deliver(scope, text):
        log.warning("check-in for scope %s not delivered yet; the outbox retries it", scope.id)
    for topic in await store.topics.due(scope, now, limit=5):
        if topic.text == decision.detail:
            await store.topics.set_status(scope, topic.id, "raised")
    log.info("check-in sent to scope %s: %s", scope.id, decision.reason)
    return decision
