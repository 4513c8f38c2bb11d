"""Failure counters live in the database: counted where they happen, kept across a restart, shown by stats, doctor."""
from __future__ import annotations

from pathlib import Path

import pytest

from bot.admin import ops
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.errors import LLMBadOutput
from bot.learning.corrections import correct, propose_rule
from memory.store import MemoryStore
from scheduler.service import Scheduler
from tests.engine_kit import settings_for
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.llm import ScriptedLLM

GARBAGE = '{"verdicts": [{"id": '


FIELDS = {"embedding_model": "tests.fakes.embedder:FakeEmbedder", "timezone": "Europe/Berlin"}  # of settings_for


async def broken_writer(instructions: str, material: str, *, max_tokens: int = 800) -> str:
    return "kein JSON"


async def test_failures_are_counted_in_the_database_and_shown_after_a_restart(tmp_path: Path) -> None:
    store = await MemoryStore.open(tmp_path, FakeEmbedder())
    background = ScriptedLLM("background")
    background.responder = lambda call: GARBAGE
    engine = Engine(store, ScriptedLLM("chat"), background, EngineConfig(relevance_floor=0.0))
    await engine.handle(Incoming("tg:1", "Ich spiele Cello im Orchester."))
    await engine.drain()  # extraction: the answer is no JSON
    scope = await engine.scope_for("tg:1")
    await store.notes.add(scope, "Anna spielt Cello im Orchester.")
    with pytest.raises(LLMBadOutput):
        await correct(store, background, scope, "Das stimmt nicht, ich spiele kein Cello.", "")
    with pytest.raises(LLMBadOutput):
        await propose_rule(background, "Sprich nicht so förmlich.", "Sehr geehrte Anna", store.failures)
    scheduler = Scheduler(store, "mnemo", broken_writer, engine, None, engine.config.zone, tmp_path)  # type: ignore[arg-type]
    await scheduler.run("reflect", scope.id, engine.clock())  # logged and counted, nothing raised
    await engine.close()
    await store.close()  # a restart: process memory is gone

    async with await MemoryStore.open(tmp_path, FakeEmbedder()) as reopened:
        counts = {c.name: c.count for c in await reopened.failures.all()}
    assert counts == {"extraction.bad_json": 1, "extraction.failed": 1, "corrections.judge_bad_json": 1,
                      "corrections.rule_bad_json": 1, "scheduler.reflect": 1}
    line = await ops.failures_line(settings_for(tmp_path, **FIELDS))
    assert line.startswith("failures: corrections.judge_bad_json 1 (last ") and "scheduler.reflect 1" in line
    checks = {c.name: c for c in await ops.doctor(settings_for(tmp_path, **FIELDS), check_model=False)}
    assert checks["failures"].ok and "extraction.bad_json 1" in checks["failures"].detail
    assert "Cello" not in line + checks["failures"].detail, "names and counts, no user data"


async def test_a_deployment_without_failures_says_so(tmp_path: Path) -> None:
    async with await MemoryStore.open(tmp_path, FakeEmbedder()):
        pass
    assert await ops.failures_line(settings_for(tmp_path, **FIELDS)) == "failures: none recorded"
