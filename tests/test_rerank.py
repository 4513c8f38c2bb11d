"""Reranking, optional: a /rerank server or the chat model as judge reorders the best candidates; slow, failing or
garbage answers leave the fused order standing; off by default."""
from __future__ import annotations

import asyncio
import json
import logging
import re

import pytest

from bot.conversation.engine import Incoming
from bot.conversation.rerank_judge import ChatJudge
from bot.embedding import CHAT_RERANK_SECONDS, make_reranking
from bot.errors import LLMUnavailable
from bot.llm.port import Completion, CompletionRequest
from memory.models import Scope
from memory.search.rerank import RerankFailed, Reranking, RerankServer, ServerReranker, reordered
from memory.store import MemoryStore
from tests.engine_kit import make_engine, settings_for
from tests.fakes.embedding_api import FakeEmbeddingServer
from tests.fakes.llm import Call, ScriptedLLM

NOTES = ("Miriam wohnt in Leipzig", "Miriam mag Katzen sehr", "Mit Miriam war ich im Kino", "Bruno ist ein Labrador")
QUERY = "Was weißt du über Miriam?"


def kino_first(query: str, document: str) -> float:
    return 10.0 if "Kino" in document else 1.0


async def filled(store: MemoryStore) -> Scope:
    scope = await store.scope("mnemo", "anna")
    for text in NOTES:
        await store.notes.add(scope, text, dedupe=False)
    return scope


async def texts(store: MemoryStore, scope: Scope, rerank: bool = True) -> list[str]:
    return [h.text for h in await store.search(scope, QUERY, k=3, rerank=rerank)]


async def test_a_rerank_server_reorders_the_best_candidates(store: MemoryStore) -> None:
    scope = await filled(store)
    fused = await texts(store, scope, rerank=False)
    assert fused[0] != "Mit Miriam war ich im Kino"
    async with FakeEmbeddingServer(score=kino_first) as fake:
        for base in (fake.base_url, fake.base_url.removesuffix("/v1")):  # Jina/Cohere/vLLM; text-embeddings-inference
            reranker = ServerReranker(RerankServer(base, "bge-reranker-v2-m3"), timeout=2.0)
            store.reranking = Reranking(reranker, top=10, timeout=2.0)
            reranked = await texts(store, scope)
            await reranker.aclose()
            assert reranked[0] == "Mit Miriam war ich im Kino" and set(reranked) <= set(NOTES)
    assert [path for path, _h, _b in fake.requests] == ["/v1/rerank", "/rerank"]
    assert fake.requests[0][2]["model"] == "bge-reranker-v2-m3" and fake.requests[0][2]["query"] == QUERY
    assert await store.failures.get("rerank.error") == 0


async def test_a_slow_down_or_garbage_reranker_leaves_the_fused_order(store: MemoryStore) -> None:
    scope = await filled(store)
    fused = await texts(store, scope, rerank=False)
    async with FakeEmbeddingServer(score=kino_first) as fake:
        reranker = ServerReranker(RerankServer(fake.base_url), timeout=5.0)
        store.reranking = Reranking(reranker, top=10, timeout=0.2)
        fake.delay = 1.0
        assert await texts(store, scope) == fused
        assert await store.failures.get("rerank.timeout") == 1
        fake.delay = 0.0
        for garbage in ({"results": [{"index": 0}]}, {"results": [{"index": 0, "relevance_score": 1.0}]},
                        {"results": [{"index": 0, "relevance_score": "viel"}, {"index": 1, "relevance_score": 2}]},
                        "kein JSON-Objekt", {"nothing": True}):
            fake.body = garbage
            assert await texts(store, scope) == fused
        fake.body, fake.status = None, 500
        assert await texts(store, scope) == fused
        await reranker.aclose()
    assert await store.failures.get("rerank.error") == 6
    store.reranking = Reranking(ServerReranker(RerankServer(fake.base_url), timeout=0.5), top=10)
    assert await texts(store, scope) == fused  # the server is gone
    assert await store.failures.get("rerank.error") == 7


def test_scores_that_are_not_one_real_number_per_document_are_refused() -> None:
    for scores in ([1.0], [1.0, float("nan"), 2.0], [True, 1.0, 2.0]):
        with pytest.raises(RerankFailed):
            reordered(["a", "b", "c"], scores)  # type: ignore[arg-type]
    assert reordered(["a", "b", "c"], [0.1, 0.9, 0.1]) == ["b", "a", "c"]  # type: ignore[arg-type]


def judge(call: Call) -> str:
    listed = re.findall(r"^\d+\. (.*)$", call.messages[-1].content, re.MULTILINE)
    return json.dumps({"scores": [9 if "Kino" in line else 2 for line in listed]})


async def test_the_chat_model_as_judge_and_its_garbage(store: MemoryStore) -> None:
    scope = await filled(store)
    fused = await texts(store, scope, rerank=False)
    chat = ScriptedLLM("judge")
    chat.responder = judge
    store.reranking = Reranking(ChatJudge(chat), top=10, timeout=2.0)
    assert (await texts(store, scope))[0] == "Mit Miriam war ich im Kino"
    assert chat.calls[-1].json_schema is not None
    for bad in ("Ich weiß es nicht.", '{"scores": [11, 2, 2, 2]}', '{"scores": [1]}'):
        chat.enqueue(bad)
        assert await texts(store, scope) == fused
    chat.enqueue_error(LLMUnavailable("down"))
    assert await texts(store, scope) == fused
    assert await store.failures.get("rerank.error") == 4


async def test_a_turns_prompt_carries_the_reranked_notes_and_reranking_is_off_by_default(
        store: MemoryStore, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert make_reranking(settings_for(tmp_path), ScriptedLLM()) is None
    scope = await filled(store)
    fused = [h.text for h in await store.search(scope, "Erzähl mir was über Miriam", k=5)]
    assert fused.index("Miriam wohnt in Leipzig") < fused.index("Mit Miriam war ich im Kino")
    chat = ScriptedLLM("chat")
    async with FakeEmbeddingServer(score=kino_first) as fake:
        settings = settings_for(tmp_path, rerank="server", rerank_url=fake.base_url, rerank_timeout=2.0)
        store.reranking = make_reranking(settings, chat)
        engine = make_engine(store, chat)
        await engine.handle(Incoming("anna", "Erzähl mir was über Miriam"))
        await engine.close()
    prompt = chat.calls[0].prompt
    assert prompt.index("Mit Miriam war ich im Kino") < prompt.index("Miriam wohnt in Leipzig")
    assert fake.requests and fake.requests[0][2]["query"] == "Erzähl mir was über Miriam"


async def test_a_crisis_turn_does_not_wait_for_the_reranker(store: MemoryStore) -> None:
    await filled(store)
    chat = ScriptedLLM("chat")
    async with FakeEmbeddingServer(score=kino_first) as fake:
        store.reranking = Reranking(ServerReranker(RerankServer(fake.base_url), timeout=2.0), top=10, timeout=2.0)
        engine = make_engine(store, chat)
        await engine.handle(Incoming("anna", "Ich will nicht mehr leben, Miriam weiß nichts davon"))
        await engine.handle(Incoming("anna", "Erzähl mir was über Miriam"))
        await engine.close()
    assert "Miriam wohnt in Leipzig" in chat.calls[0].prompt  # the notes are there, in the fused order
    assert [body["query"] for _p, _h, body in fake.requests] == ["Erzähl mir was über Miriam"]


class SlowJudge(ScriptedLLM):
    """The scripted judge answering after `seconds`, as a chat model scoring 20 memories does (1-3 s hosted)."""

    def __init__(self, seconds: float) -> None:
        super().__init__("slow judge")
        self.seconds = seconds
        self.responder = judge

    async def complete(self, request: CompletionRequest) -> Completion:
        await asyncio.sleep(self.seconds)
        return await super().complete(request)


async def test_rerank_chat_has_a_default_time_that_fits_a_chat_model(
        store: MemoryStore, tmp_path, caplog: pytest.LogCaptureFixture) -> None:  # type: ignore[no-untyped-def]
    """Issue 52: MNEMO_RERANK=chat kept the server's 1 s, which a chat model scoring the candidates never meets:
    every turn timed out and kept the fused order. The chat judge now has its own default; a short one set by hand
    is warned about at start."""
    scope = await filled(store)
    fused = await texts(store, scope, rerank=False)
    reranking = make_reranking(settings_for(tmp_path, rerank="chat"), SlowJudge(1.5))
    assert reranking is not None and reranking.timeout == CHAT_RERANK_SECONDS
    store.reranking = reranking
    assert (await texts(store, scope))[0] == "Mit Miriam war ich im Kino" != fused[0]
    assert await store.failures.get("rerank.timeout") == 0
    server = make_reranking(settings_for(tmp_path, rerank="server", rerank_url="http://127.0.0.1:9/v1"), SlowJudge(0))
    assert server is not None and server.timeout == 1.0  # a rerank server keeps its 1 s
    with caplog.at_level(logging.WARNING, logger="bot.embedding"):
        short = make_reranking(settings_for(tmp_path, rerank="chat", rerank_timeout=1.0), SlowJudge(0))
    assert short is not None and short.timeout == 1.0
    assert "MNEMO_RERANK_TIMEOUT" in caplog.text and "fused order" in caplog.text
