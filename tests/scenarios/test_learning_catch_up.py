"""Nothing a user said is skipped by learning: a chat without a pause, a day paused by the budget, a failing batch.

The scripted background model answers extraction with one fact per user line it was shown, naming that line's
id, and the summary with a plain text; it records what it was shown, so each user message can be checked to
reach extraction exactly once and every message outside the recent window to reach the summary exactly once.
"""
from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.errors import LLMUnavailable
from bot.learning import summary
from bot.learning.extraction import BATCH
from bot.llm.metering import MeteredLLM
from memory.models import Message, Scope
from memory.store import MemoryStore
from scheduler.budget import TokenBudget, local_day
from tests.fakes.llm import Call, ScriptedLLM

pytestmark = pytest.mark.both_backends("the learning runs ledger")

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY = datetime(2026, 11, 23, 8, 0, tzinfo=BERLIN)
WINDOW = 12  # EngineConfig.recent_messages


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def fact(n: int) -> str:
    """The fact about detail n; its own words keep it apart from the others (no dedupe between them)."""
    return f"Anna erzählte Detail {n}: Stichworte {n}a, {n}b, {n}c."


class Background:
    """Extraction: a fact per user line, naming its source; summary: a text. Records what each was shown."""

    def __init__(self) -> None:
        self.extracted: list[int] = []  # ids of user lines shown to extraction calls that succeeded
        self.summarized: list[int] = []  # numbers of the user lines folded into the summary
        self.failures: list[str] = []  # "down" or "garbage" for the next extraction calls

    def __call__(self, call: Call) -> str:
        content = call.messages[0].content
        if "extract memories" in call.system[0].text:
            if self.failures:
                kind = self.failures.pop(0)
                if kind == "down":
                    raise LLMUnavailable("the background model is down")
                return '{"facts": [{"text": "Anna'
            lines = re.findall(r"^\[(\d+)\] user: Ich erzähle dir Detail (\d+)", content, re.MULTILINE)
            self.extracted += [int(i) for i, _ in lines]
            facts = [{"text": fact(int(n)), "importance": 5, "source_ids": [int(i)]} for i, n in lines]
            return json.dumps({"facts": facts, "content": [], "profile": []})
        if "running summary" in call.system[0].text:
            folded = re.findall(r"^user: Ich erzähle dir Detail (\d+)", content, re.MULTILINE)
            self.summarized += [int(n) for n in folded]
            return "Anna hat viele Details erzählt."
        return "ok"


def engine_for(store: MemoryStore, background: Background, clock: Clock, budget: TokenBudget | None = None) -> Engine:
    """An engine as deployed by default: learning when the chat goes quiet (here: never on its own)."""
    model = ScriptedLLM("background")
    model.responder = background  # type: ignore[assignment]
    learner = MeteredLLM(model, budget, clock) if budget is not None else model
    config = EngineConfig(zone=BERLIN, relevance_floor=0.0, admission=None, extraction="when_quiet",
                          extraction_quiet_seconds=3600, recent_messages=WINDOW)
    return Engine(store, ScriptedLLM("chat"), learner, config, clock=clock, budget=budget)


async def chat(engine: Engine, clock: Clock, numbers: range, every: float = 30.0) -> None:
    """Anna tells one detail per message, each answered, without a pause."""
    for n in numbers:
        clock.now += every
        await engine.handle(Incoming("tg:1", f"Ich erzähle dir Detail {n}", channel="telegram",
                                     channel_message_id=str(n)))


async def every_message(store: MemoryStore, scope: Scope) -> list[Message]:
    return await store.messages.recent(scope, 10_000)


async def user_ids(store: MemoryStore, scope: Scope) -> list[int]:
    return [m.id for m in await every_message(store, scope) if m.role == "user"]


async def wait_for(check, what: str) -> None:  # type: ignore[no-untyped-def]
    """Let the background tasks run until check() holds."""
    for _ in range(500):
        if await check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(what)


async def test_a_200_message_chat_without_a_pause_is_extracted_in_full_batches_each_message_once(
    store: MemoryStore,
) -> None:
    background, clock = Background(), Clock(MONDAY.timestamp())
    engine = engine_for(store, background, clock)
    await chat(engine, clock, range(200))  # 200 messages, 200 replies: the quiet timer never fires
    scope = await engine.scope_for("tg:1")
    newest = (await store.messages.recent(scope, 1))[0].id

    async def caught_up() -> bool:
        return (await store.conversations.get(scope)).extracted_upto == newest
    await wait_for(caught_up, "full batches are read while the chat goes on, before it goes quiet")
    assert sorted(background.extracted) == await user_ids(store, scope), "every user message once, none skipped"

    await chat(engine, clock, range(200, 205))  # less than a batch: waits for the quiet
    await engine.drain()  # the chat goes quiet
    ids = await user_ids(store, scope)
    assert background.extracted == ids and len(ids) == 205, "each user message shown to extraction exactly once"
    notes = {n.text for n in await store.notes.list(scope, limit=1000)}
    assert notes == {fact(n) for n in range(205)}
    await engine.close()


async def test_a_day_paused_by_the_budget_is_caught_up_in_batches_across_the_next_days(store: MemoryStore) -> None:
    background, clock = Background(), Clock(MONDAY.timestamp())
    budget = TokenBudget(store.usage, cap=100, zone=BERLIN)  # 5 calls of 20 tokens a day
    engine = engine_for(store, background, clock, budget)
    await store.usage.add(local_day(clock.now, BERLIN), "background", 100, 0)  # Monday's budget is already spent
    await chat(engine, clock, range(150), every=240.0)  # 150 messages over ten hours
    await engine.drain()
    scope = await engine.scope_for("tg:1")
    assert background.extracted == [] and (await store.conversations.get(scope)).extracted_upto == 0

    told, day = 150, 1
    while (await store.conversations.get(scope)).extracted_upto < (await store.messages.recent(scope, 1))[0].id:
        assert day < 10, "the backlog shrinks every day"
        clock.now = (MONDAY + timedelta(days=day, hours=1)).timestamp()  # a new day, a new budget
        await chat(engine, clock, range(told, told + 1))
        await engine.drain()
        messages = await every_message(store, scope)
        cursor = (await store.conversations.get(scope)).extracted_upto
        covered = [m for m in messages if m.id <= cursor]
        assert background.extracted == [m.id for m in covered if m.role == "user"], "read in order, each once"
        assert cursor == messages[-1].id or (await budget.status(clock.now)).paused, "it stops only when paused"
        assert cursor == messages[-1].id or len(covered) % BATCH == 0, "a paused run stops between whole batches"
        told, day = told + 1, day + 1
    assert day >= 3, "one day's budget was not enough: the catch-up paused and resumed"
    ids = await user_ids(store, scope)
    assert background.extracted == ids and len(ids) == told, "each user message shown to extraction exactly once"
    assert {n.text for n in await store.notes.list(scope, limit=1000)} == {fact(n) for n in range(told)}

    window = await store.messages.recent(scope, WINDOW)

    async def unfolded() -> list[Message]:
        upto = (await store.conversations.get(scope)).summary_upto
        return [m for m in await every_message(store, scope) if upto < m.id < window[0].id]
    while len(await unfolded()) >= summary.BATCH:  # the summary catches up too
        assert day < 20, "the summary's backlog shrinks every day"
        clock.now = (MONDAY + timedelta(days=day, hours=1)).timestamp()
        await engine._learn(scope)  # (the quiet timer's run on a day without a new message)
        day += 1
    upto = (await store.conversations.get(scope)).summary_upto
    outside = [int(m.text.rsplit(" ", 1)[1]) for m in await every_message(store, scope) if m.role == "user"
               and m.id <= upto]
    assert len(outside) > 140, "the summary reached the recent window"
    assert background.summarized == outside, "every message that left the window folded in once, oldest first"
    await engine.close()


async def test_a_failing_batch_leaves_the_cursor_and_is_read_again(store: MemoryStore) -> None:
    background, clock = Background(), Clock(MONDAY.timestamp())
    engine = engine_for(store, background, clock)
    await chat(engine, clock, range(30))
    await engine.drain()
    scope = await engine.scope_for("tg:1")
    assert (await store.conversations.get(scope)).extracted_upto == (await store.messages.recent(scope, 1))[0].id

    background.failures = ["down"] * 100  # the background model is down for a while
    await chat(engine, clock, range(30, 80))
    await engine.drain()
    assert (await store.conversations.get(scope)).extracted_upto == 60 and await store.notes.count(scope) == 30
    assert await store.failures.get("extraction.failed") >= 1

    background.failures = ["garbage", "garbage"]  # back, but its answers are not the JSON asked for
    await chat(engine, clock, range(80, 81))  # a full batch waits: one run now, one when the chat goes quiet
    await engine.drain()
    assert (await store.conversations.get(scope)).extracted_upto == 60, "garbage moves the cursor nowhere"
    assert await store.failures.get("extraction.bad_json") == 2 and await store.notes.count(scope) == 30

    await chat(engine, clock, range(81, 82))
    await engine.drain()
    ids = await user_ids(store, scope)
    assert background.extracted == ids and await store.notes.count(scope) == 82, "nothing skipped, nothing twice"
    await engine.close()
