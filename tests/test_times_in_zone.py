"""Times the model and the person see are in the person's zone, not UTC: a person in Berlin whose moment is 00:34
local (23:34 UTC the day before) on a deployment that runs in UTC."""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from memory.models import Scope
from memory.store import MemoryStore
from scheduler.checkin import check_in
from scheduler.reflection import update_relationship
from scheduler.relationship_rules import FREEZE, Proposal
from tests.fakes.llm import ScriptedLLM
from tests.test_telegram_polish import Sender

BERLIN, UTC = ZoneInfo("Europe/Berlin"), ZoneInfo("UTC")
LATE = datetime(2026, 11, 25, 0, 34, tzinfo=BERLIN)  # 2026-11-24 23:34 UTC


class Composer:
    """Writes a fixed check-in and keeps what it was told."""

    def __init__(self) -> None:
        self.details: list[str] = []

    async def compose_proactive(self, scope: Scope, reason: str, detail: str) -> str:
        self.details.append(detail)
        return "Wie war dein Tag?"


@pytest.fixture
async def berliner(store: MemoryStore) -> Scope:
    scope = await store.scope("mnemo", "tg:42")
    await store.preferences.set(scope, "timezone", "Europe/Berlin")
    return scope


async def test_the_check_in_model_reads_the_last_message_in_the_persons_zone(
    store: MemoryStore, berliner: Scope,
) -> None:
    await store.messages.add(berliner, "user", "Gute Nacht!", created_at=LATE.timestamp())
    now = LATE.replace(hour=18)
    composer = Composer()
    decision = await check_in(store, composer, Sender(), berliner, now.timestamp(), UTC, timedelta(hours=12))
    assert decision.send, decision
    [detail] = composer.details
    assert "Now: Wednesday 2026-11-25 18:34." in detail
    assert "Last message of the person: Wednesday 2026-11-25 00:34." in detail
    assert "23:34" not in detail and "2026-11-24" not in detail


async def test_a_frozen_stage_shows_when_the_freeze_ends_in_the_persons_zone(
    store: MemoryStore, berliner: Scope, chat: ScriptedLLM, background: ScriptedLLM,
) -> None:
    engine = Engine(store, chat, background, EngineConfig(zone=UTC))
    try:
        changed_at = LATE.timestamp() - FREEZE.total_seconds()  # the freeze ends at 00:34 local
        ready = replace(await store.relationships.get(berliner), familiarity=40, trust=40, affection=40,
                        stage_changed_at=changed_at)
        [stage] = await update_relationship(store, berliner, ready, Proposal(), LATE.timestamp() - 86_400,
                                            "friendship", "reflect-test")
        assert stage.value == "stage" and not stage.applied and stage.reason.endswith("2026-11-24 23:34 UTC")
        reply = await Commands(engine).run("tg:42", "/relationship")
        assert reply is not None
        assert "Stufe bis 25.11.2026 00:34 eingefroren" in reply.bubbles[0]
        assert "UTC" not in reply.bubbles[0] and "23:34" not in reply.bubbles[0]
    finally:
        await engine.close()
