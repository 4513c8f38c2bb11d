"""Model faults: with the model API failing 30% of the time, every message gets an answer or a short honest error,
and failed background work changes nothing.

The real OpenAI SDK adapter talks HTTP to the local fake API, which answers 429 (with retry-after), 500, too
late for the client's timeout, or broken JSON on 30% of the requests (fixed seed). The same conversation runs
once more against a model that never fails; what the faulty run stored must be part of what the clean run stored.
"""
from __future__ import annotations

import json
import logging
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.llm.openai_api import OpenAIChat
from bot.texts import t
from memory.search import integrity
from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.llm_api import FakeLLM, Reply

TIMEOUT = 0.5  # the client's timeout in the faulty run; a "too late" answer comes after four times that
TAG = re.compile(r"\bM\d{3}\b")
FAULTS = ("429", "500", "timeout", "broken")
FROM_EXTRACTION = ("notes", "profile", "topics")
SENTENCES = ["Ich trinke gern Tee.", "Meine Schwester heißt Miriam.", "Ich laufe jeden Morgen.",
             "Ich arbeite als Gärtnerin.", "Morgen gehe ich zum Zahnarzt.", "Ich mag keine Pilze."]


class FlakyModel:
    """Answers like a model, but fails a share of the requests at random: 429, 500, too late, broken JSON."""

    def __init__(self, share: float, seed: int = 5) -> None:
        self.share = share
        self.rng = random.Random(seed)
        self.faults: Counter[str] = Counter()

    def __call__(self, body: dict[str, Any]) -> str | Reply:
        """One answer, or one fault."""
        wants_json = "response_format" in body
        if self.rng.random() < self.share:
            fault = self.rng.choice(FAULTS)
            self.faults[fault] += 1
            if fault == "429":
                return Reply(status=429, retry_after=1)
            if fault == "500":
                return Reply(status=500)
            if fault == "timeout":
                return Reply(text="zu spät", delay=TIMEOUT * 4)
            return '{"facts": [{"text": "halb' if wants_json else Reply(status=503)
        return answer(body)


def answer(body: dict[str, Any]) -> str:
    """A chat reply naming the message's tag, facts as JSON for extraction, or a summary."""
    messages = body["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    last = str(messages[-1].get("content") or "")
    if "extract memories" in system:
        facts = [{"text": f"Die Person sagte ({tag}): {text}", "source_ids": [int(i)]}
                 for i, tag, text in re.findall(r"^\[(\d+)\] user: (M\d{3}) (.*)$", last, re.MULTILINE)]
        return json.dumps({"facts": facts, "content": [], "profile": [], "topics": [], "people": []})
    if "running summary" in system:
        return "Die Person erzählt von ihrem Alltag."
    tag = TAG.search(last.rsplit("</context>", 1)[-1])
    return f"{tag.group(0) if tag else '?'} Schön, dass du das erzählst."


async def memory_of(store: MemoryStore) -> dict[str, list[str]]:
    """What the background work writes (notes, profile, topics, summaries) and the logged messages, as texts."""
    async with store.db.reading() as tx:
        return {
            "notes": sorted(r[0] for r in await tx.fetchall("SELECT text FROM notes")),
            "profile": sorted(r[0] for r in await tx.fetchall("SELECT key || ': ' || value FROM profile_entries")),
            "topics": sorted(r[0] for r in await tx.fetchall("SELECT text FROM open_topics")),
            "summaries": sorted(r[0] for r in await tx.fetchall("SELECT summary FROM conversation_state")),
            "user": sorted(r[0] for r in await tx.fetchall("SELECT text FROM messages WHERE role = 'user'")),
            "assistant": sorted(r[0] for r in await tx.fetchall("SELECT text FROM messages WHERE role = 'assistant'")),
        }


async def no_wait(seconds: float) -> None:
    """Stands in for asyncio.sleep between retries."""


async def progress(so_far: str) -> None:
    """Takes a streamed reply's text so far (every other message is streamed)."""


async def conversation(path: Path, share: float, caplog: pytest.LogCaptureFixture,
                       timeout: float = TIMEOUT) -> tuple[dict[str, Any], Counter[str]]:
    """Run 50 messages of two users against a model that fails `share` of the time; check each reply on the way."""
    down = t("de", "model_down")
    outcomes: Counter[str] = Counter()
    async with FakeLLM(models=["fake-model"]) as api:
        flaky = FlakyModel(share)
        api.responder = flaky
        # Two attempts (four in production), so that some faults outlast the retries and reach the engine.
        model = OpenAIChat("fake-model", api.openai_base_url, "sk-test-fault-key", timeout=timeout, attempts=2,
                           sleep=no_wait)
        store = await MemoryStore.open(path, FakeEmbedder(), semantic_dedupe=0.97)
        engine = Engine(store, model, model, EngineConfig(relevance_floor=0.0, extraction="after_reply"))
        try:
            for i in range(50):
                user = f"tg:{40 + i % 2}"
                text = f"M{i:03d} {SENTENCES[i % len(SENTENCES)]}"
                before = await memory_of(store)
                logged = len(caplog.records)
                reply = await engine.handle(Incoming(user, text, "telegram", f"{user}:{i}"),
                                            on_progress=progress if i % 2 else None)
                await engine.drain()
                assert reply is not None and reply.bubbles, text
                if reply.failed:
                    assert reply.bubbles == (down,), reply  # a short, honest error; the message itself is kept
                    outcomes["model_down"] += 1
                else:
                    assert reply.bubbles[0].startswith(text[:4]), (text, reply)
                    outcomes["answered"] += 1
                after, warnings = await memory_of(store), [r.getMessage() for r in caplog.records[logged:]]
                if any(w.startswith("extraction failed") for w in warnings):  # a failed job changed nothing
                    outcomes["extraction_failed"] += 1
                    assert [after[k] for k in FROM_EXTRACTION] == [before[k] for k in FROM_EXTRACTION], text
                if any(w.startswith("summary refresh failed") for w in warnings):
                    outcomes["summary_failed"] += 1
                    assert after["summaries"] == before["summaries"], text
            assert await integrity.check(store) == []
            return await memory_of(store), outcomes | flaky.faults | Counter(requests=len(api.requests))
        finally:
            await engine.close()
            await store.close()
            await model.aclose()


async def test_with_the_model_failing_30_percent_every_message_is_answered_or_told_and_failures_store_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    clean, clean_outcomes = await conversation(tmp_path / "clean", 0.0, caplog, timeout=30.0)
    faulty, outcomes = await conversation(tmp_path / "faulty", 0.3, caplog)
    assert clean_outcomes["answered"] == 50 and clean_outcomes["extraction_failed"] == 0
    assert outcomes["answered"] + outcomes["model_down"] == 50
    assert outcomes["model_down"] > 0 and outcomes["extraction_failed"] > 0, outcomes
    assert all(outcomes[f] >= 3 for f in FAULTS), outcomes
    assert 0.2 < sum(outcomes[f] for f in FAULTS) / outcomes["requests"] < 0.4  # about 30% of all requests failed
    assert faulty["user"] == clean["user"]  # not one message lost
    for kind in ("notes", "profile", "topics", "assistant"):  # nothing half-written, invented or stored twice
        assert set(faulty[kind]) <= set(clean[kind]) and len(set(faulty[kind])) == len(faulty[kind]), kind
    assert len(faulty["assistant"]) == outcomes["answered"]
