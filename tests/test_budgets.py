"""Budgets: a per-user rate limit, and a daily token cap that pauses background work and tells the operator once."""
from __future__ import annotations

import json
import logging
import re
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.admin import ops
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.conversation.ratelimit import Bucket, RateLimiter, take
from bot.llm.metering import MeteredLLM
from bot.settings import Settings
from bot.texts import t
from memory.store import MemoryStore
from scheduler.budget import BudgetStatus, TokenBudget, exhausted, local_day
from scheduler.service import Scheduler
from tests.fakes.llm import Call, ScriptedLLM

pytestmark = pytest.mark.both_backends("the usage ledger")

BERLIN = ZoneInfo("Europe/Berlin")
NOON = datetime(2026, 11, 29, 12, 0, tzinfo=BERLIN).timestamp()


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_the_bucket_lets_a_burst_pass_then_one_message_per_refill() -> None:
    bucket = None
    passed = []
    for _ in range(4):
        ok, bucket = take(bucket, 100.0, per_minute=60, burst=3)
        passed.append(ok)
    assert passed == [True, True, True, False]
    assert take(bucket, 100.5, 60, 3)[0] is False and take(bucket, 101.0, 60, 3)[0] is True
    assert take(Bucket(0.0, 100.0), 10_000.0, 60, 3)[1].tokens == 2.0  # refills up to the burst, not beyond


def test_a_refused_streak_is_told_once_then_silence_and_zero_means_no_limit() -> None:
    clock = Clock(0.0)
    limiter = RateLimiter(per_minute=2, clock=clock)
    assert [limiter.check("a") for _ in range(5)] == ["pass", "pass", "tell", "quiet", "quiet"]
    assert limiter.check("b") == "pass"  # per user
    clock.now += 30
    assert [limiter.check("a"), limiter.check("a")] == ["pass", "tell"]
    assert all(RateLimiter(0).check("a") == "pass" for _ in range(100))


async def test_over_the_limit_a_message_is_neither_read_nor_stored_and_commands_count_too(store: MemoryStore) -> None:
    clock = Clock(NOON)
    chat = ScriptedLLM()
    background = ScriptedLLM()
    background.responder = lambda call: json.dumps({"facts": [], "content": [], "profile": []})
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0, rate_limit_per_minute=3), clock=clock)
    commands = Commands(engine)
    replies = [await engine.handle(Incoming("tg:1", f"Nachricht {i}")) for i in range(5)]
    assert [r.failed for r in replies if r] == [False, False, False, True, True]
    assert replies[3].bubbles == (t("de", "rate_limited"),) and replies[4].bubbles == ()  # type: ignore[union-attr]
    scope = await engine.scope_for("tg:1")
    assert await store.messages.count(scope) == 6 and len(chat.calls) == 3  # three messages, three replies
    clock.now += 20  # one message back
    assert (await commands.run("tg:1", "/help")).failed is False  # type: ignore[union-attr]
    assert (await commands.run("tg:1", "/help")).bubbles == (t("de", "rate_limited"),)  # type: ignore[union-attr]
    assert (await engine.handle(Incoming("tg:2", "Ich bin jemand anderes"))).failed is False  # type: ignore[union-attr]
    await engine.close()


def test_the_budget_decision_and_the_local_day() -> None:
    assert not exhausted(10**9, 0) and not exhausted(99, 100) and exhausted(100, 100)
    late = datetime(2026, 11, 29, 23, 30, tzinfo=BERLIN).timestamp()
    assert local_day(late, BERLIN) == "2026-11-29" and local_day(late + 3600, BERLIN) == "2026-11-30"
    assert "paused until midnight" in BudgetStatus("2026-11-29", 120, 100).describe()
    assert "no daily cap" in BudgetStatus("2026-11-29", 120, 0).describe()


async def test_a_spent_budget_pauses_extraction_and_the_nightly_jobs_once_warned_until_midnight(
    store: MemoryStore, tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    clock = Clock(NOON)
    budget = TokenBudget(store.usage, cap=50, zone=BERLIN)
    background = ScriptedLLM("background")  # every call reports 10 + 10 tokens

    def learn(call: Call) -> str:
        if "extract memories" in call.system[0].text:
            ids = [int(i) for i in re.findall(r"^\[(\d+)\] user:", call.messages[0].content, re.MULTILINE)]
            return json.dumps({"facts": [{"text": f"Fakt {i}", "source_ids": [i]} for i in ids], "content": [],
                               "profile": []})
        return "Ein Tagebucheintrag."
    background.responder = learn
    metered = MeteredLLM(background, budget, clock)
    engine = Engine(store, ScriptedLLM("chat"), metered, EngineConfig(relevance_floor=0.0, admission=None),
                    clock=clock, budget=budget)
    for i in range(6):
        await engine.handle(Incoming("tg:1", f"Ich erzähle dir Nummer {i}"))
        await engine.drain()
    assert len(background.calls) == 3  # 20 tokens a call: the third call reached the cap of 50
    assert (await budget.status(clock.now)).spent == 60
    scope = await engine.scope_for("tg:1")
    notes_before = await store.notes.count(scope)

    writer_calls: list[str] = []

    async def writer(instructions: str, material: str, *, max_tokens: int = 800) -> str:
        writer_calls.append(instructions)
        return "Ein Tagebucheintrag."

    scheduler = Scheduler(store, "mnemo", writer, engine, None, BERLIN, tmp_path, clock=clock,  # type: ignore[arg-type]
                          budget=budget)
    await scheduler.run("diary", scope.id, clock.now)
    await scheduler.run("reflect", scope.id, clock.now)
    assert writer_calls == [] and await store.notes.count(scope) == notes_before
    warnings = [r.getMessage() for r in caplog.records if "token budget" in r.getMessage()]
    assert len(warnings) == 1 and "60 of 50" in warnings[0]  # one line for the operator, not one per job

    clock.now += 24 * 3600  # a new day, a new budget: what waited is extracted now
    await engine.handle(Incoming("tg:1", "Neuer Tag"))
    await engine.drain()
    assert len(background.calls) == 4 and await store.notes.count(scope) > notes_before
    await engine.close()


async def test_mnemo_stats_shows_the_days_background_tokens(store: MemoryStore, tmp_path: Path) -> None:
    await store.usage.add(local_day(time.time(), BERLIN), "background", 1200, 300)
    settings = Settings(_env_file=None, data_dir=tmp_path, embedding_model="tests.fakes.embedder:FakeEmbedder",  # type: ignore[call-arg]
                        background_tokens_per_day=1000, timezone="Europe/Berlin",
                        database_url=store.db.url)
    line = await ops.budget_line(settings)
    assert "1,500 of 1,000 background tokens today" in line and "paused until midnight" in line
