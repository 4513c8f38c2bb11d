"""Embeddings in batches across people: concurrent turns share one embedder call, no turn embeds a text twice,
a lone turn waits no longer than the batch wait and not at all after a lone call, and a failed or stopped batch fails
each of its turns."""
from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest

from bot.conversation.engine import Engine, Incoming
from memory.errors import EmbeddingFailed
from memory.search.embed_batches import EmbedBatcher
from memory.search.turn_context import context_text
from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.llm import ScriptedLLM


class BrokenEmbedder(FakeEmbedder):
    """Raises on its first `fails` calls (the model's process gone), then embeds."""

    def __init__(self, fails: int = 1) -> None:
        super().__init__()
        self.fails = fails

    def embed(self, texts: Sequence[str], purpose: str = "document") -> np.ndarray:
        if self.fails > 0:
            self.fails -= 1
            raise RuntimeError("the embedding model crashed")
        return super().embed(texts, purpose)


class HeldEmbedder(FakeEmbedder):
    """Blocks inside `embed` until released: a batch that is running when it is stopped."""

    def __init__(self) -> None:
        super().__init__()
        self.inside, self.release = threading.Event(), threading.Event()

    def embed(self, texts: Sequence[str], purpose: str = "document") -> np.ndarray:
        self.inside.set()
        self.release.wait(10)
        return super().embed(texts, purpose)


class TimedEmbedder(FakeEmbedder):
    """Records when each call arrived (time.monotonic)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived: list[float] = []

    def embed(self, texts: Sequence[str], purpose: str = "document") -> np.ndarray:
        self.arrived.append(time.monotonic())
        return super().embed(texts, purpose)


async def test_concurrent_searches_of_many_people_share_one_embedder_call(
        store: MemoryStore, embedder: FakeEmbedder) -> None:
    scopes = [await store.scope("mnemo", f"person{n}") for n in range(8)]
    for n, scope in enumerate(scopes):
        await store.notes.add(scope, f"Person {n} spielt Cello im Orchester.")
    embedder.calls.clear()
    embedder.purposes.clear()
    found = await asyncio.gather(*(store.search(scope, f"Welches Instrument spielt Person {n}?")
                                   for n, scope in enumerate(scopes)))
    assert embedder.purposes == ["query"], "eight people's queries in one call"
    assert len(embedder.calls[0]) == 8
    for n, hits in enumerate(found):  # each person still finds their own note, and only theirs
        assert [h.text for h in hits] == [f"Person {n} spielt Cello im Orchester."]


async def test_concurrent_turns_batch_their_embeddings_and_a_turn_embeds_no_text_twice(
        store: MemoryStore, embedder: FakeEmbedder, chat: ScriptedLLM, engine: Engine) -> None:
    chat.responder = lambda call: "Das klingt schön. Erzähl mir mehr!"  # everyone gets the same reply
    embedder.calls.clear()
    embedder.purposes.clear()
    people = 10
    await asyncio.gather(*(engine.handle(Incoming(f"user{n}", f"Heute war ich mit Hund Nummer {n} im Park."))
                           for n in range(people)))
    asked = Counter((purpose, text) for purpose, call in zip(embedder.purposes, embedder.calls) for text in call)
    assert asked, "the turns embedded their messages"
    assert max(asked.values()) == 1, f"a text embedded twice: {asked.most_common(3)}"
    for n in range(people):
        said = f"Heute war ich mit Hund Nummer {n} im Park."
        assert asked[("query", said)] == 1
        # the reply everyone got is a document of each person's own, read after what that person said
        assert asked[("document", context_text(said, "Das klingt schön. Erzähl mir mehr!"))] == 1
    assert len(embedder.calls) < len(asked) / 2, f"{len(embedder.calls)} calls for {len(asked)} texts: not batched"


async def test_a_query_asked_again_in_the_same_turn_is_not_embedded_again(
        store: MemoryStore, embedder: FakeEmbedder) -> None:
    scope = await store.scope("mnemo", "anna")
    await store.notes.add(scope, "Anna hat Angst vor Gewittern.")
    embedder.calls.clear()
    text = "Mir geht es heute gar nicht gut."
    first = await store.index.embed([text], "query")  # the crisis check reads the message as a query
    hits = await store.search(scope, text)  # then the search reads it again
    assert embedder.calls == [[text]]
    assert hits and np.allclose(first[0], (await store.index.embed([text], "query"))[0])


async def test_a_lone_request_waits_no_longer_than_the_batch_wait() -> None:
    timed = TimedEmbedder()
    batcher = EmbedBatcher(timed, wait=0.05)
    asked = time.monotonic()
    vector = await batcher.embed(["nur ich"], "query")
    waited = timed.arrived[0] - asked
    assert vector.shape == (1, timed.dim)
    assert 0.04 <= waited < 0.05 + 0.5, f"waited {waited:.3f} s for a wait of 0.05 s (0.5 s allowed for a busy machine)"


async def test_one_asker_after_another_does_not_wait_for_company_until_company_comes() -> None:
    """An import adding note after note, or one person writing, asks alone each time: only the first request waits;
    once a call served several askers, the next lone request waits for company again."""
    timed = TimedEmbedder()
    batcher = EmbedBatcher(timed, wait=0.3)

    async def waited(*texts: str) -> float:
        asked = time.monotonic()
        await asyncio.gather(*(batcher.embed([text]) for text in texts))
        return timed.arrived[-1] - asked

    assert await waited("erste Notiz") >= 0.25, "nothing known yet: the first request waits for company"
    alone = [await waited(f"Notiz {n}") for n in range(5)]
    assert max(alone) < 0.25, f"a lone asker after a lone call waited {max(alone):.3f} s"
    assert await waited("Anna", "Ben", "Cleo") < 0.25, "three asking in the same pass go at once"
    assert timed.calls[-1] == ["Anna", "Ben", "Cleo"], "in one call"
    assert await waited("danach allein") >= 0.25, "the last call had company: a lone request waits for more"
    assert timed.calls[-1] == ["danach allein"]


async def test_a_full_batch_goes_at_once_and_more_go_in_the_next_call() -> None:
    timed = TimedEmbedder()
    batcher = EmbedBatcher(timed, wait=5.0, max_batch=4)
    asked = time.monotonic()
    vectors = await asyncio.gather(*(batcher.embed([f"Satz {n}"]) for n in range(8)))
    assert [len(call) for call in timed.calls] == [4, 4]
    assert timed.arrived[-1] - asked < 5.0, "a full batch does not wait for company"
    assert all(v.shape == (1, timed.dim) for v in vectors)


async def test_a_failed_batch_fails_each_waiting_turn_and_the_next_batch_works(tmp_path) -> None:  # type: ignore[no-untyped-def]
    broken = BrokenEmbedder(fails=0)
    store = await MemoryStore.open(tmp_path / "mnemo.sqlite3", broken)
    try:
        scopes = [await store.scope("mnemo", name) for name in ("anna", "ben", "cleo")]
        broken.fails = 1
        results = await asyncio.gather(*(store.notes.add(scope, f"{scope.user_id} mag Tee.") for scope in scopes),
                                       return_exceptions=True)
        assert all(isinstance(r, EmbeddingFailed) for r in results), results
        assert all(isinstance(r.__cause__, RuntimeError) for r in results if isinstance(r, BaseException))
        for scope in scopes:  # nothing half written
            assert await store.notes.list(scope) == []
        await store.notes.add(scopes[0], "anna mag Tee.")  # the model is back: the next batch works
        assert [n.text for n in await store.notes.list(scopes[0])] == ["anna mag Tee."]
    finally:
        await store.close()


async def test_a_stopped_batch_fails_its_requests_and_the_queued_ones() -> None:
    held = HeldEmbedder()
    batcher = EmbedBatcher(held, wait=0.0, max_batch=2)
    requests = [asyncio.ensure_future(batcher.embed([f"Text {n}"])) for n in range(4)]
    await asyncio.to_thread(held.inside.wait, 10)  # the first batch is running, the rest queued
    await batcher.stop()
    held.release.set()
    results = await asyncio.gather(*requests, return_exceptions=True)
    assert all(isinstance(r, EmbeddingFailed) for r in results), results
    again = await batcher.embed(["Text 0"])  # a new request after the stop starts a new worker
    assert again.shape == (1, held.dim)


async def test_a_cancelled_turn_leaves_the_others_waiting_for_the_same_text() -> None:
    held = HeldEmbedder()
    batcher = EmbedBatcher(held, wait=0.0)
    first = asyncio.ensure_future(batcher.embed(["gemeinsam"]))
    await asyncio.to_thread(held.inside.wait, 10)
    second = asyncio.ensure_future(batcher.embed(["gemeinsam"]))  # joins the running request
    await asyncio.sleep(0)
    first.cancel()
    held.release.set()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert (await second).shape == (1, held.dim)
    assert held.calls == [["gemeinsam"]]


async def test_a_wrong_shape_from_the_embedder_fails_the_batch() -> None:
    class Short(FakeEmbedder):
        def embed(self, texts: Sequence[str], purpose: str = "document") -> np.ndarray:
            return super().embed(texts[:-1], purpose)

    batcher = EmbedBatcher(Short(), wait=0.0)
    with pytest.raises(EmbeddingFailed, match="shape"):
        await batcher.embed(["eins", "zwei"])


async def test_the_turns_of_one_batch_resume_one_per_pass_of_the_event_loop() -> None:
    """Each turn does its work between awaits on the loop; 32 of them resumed in one pass would hold every timer
    back for all of it (the event loop's stall)."""
    batcher = EmbedBatcher(FakeEmbedder(), wait=0.01)
    passes = 0

    async def count_passes() -> None:
        nonlocal passes
        while True:
            passes += 1
            await asyncio.sleep(0)

    seen: list[int] = []

    async def turn(n: int) -> None:
        await batcher.embed([f"Nachricht {n}"], "query")
        seen.append(passes)  # which pass of the loop this turn resumed in

    counter = asyncio.create_task(count_passes())
    try:
        await asyncio.gather(*(turn(n) for n in range(32)))
    finally:
        counter.cancel()
    assert batcher.calls == 1, "one batch for all 32"
    assert len(set(seen)) == 32, f"turns resumed together in the same pass: {Counter(seen).most_common(3)}"


async def test_a_batch_stopped_while_it_hands_out_its_vectors_still_answers_every_turn() -> None:
    batcher = EmbedBatcher(FakeEmbedder(), wait=0.01)
    turns = [asyncio.ensure_future(batcher.embed([f"Nachricht {n}"], "query")) for n in range(8)]
    await turns[0]  # the first vector is out; the others are being handed out
    await batcher.stop()
    vectors = await asyncio.gather(*turns)
    assert all(v.shape == (1, 64) for v in vectors)
