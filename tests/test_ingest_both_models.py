"""Ingest with both bundled models (issue 54): USE's vectors are made where e5 leaves a core free, a batch's are
stored in one statement of its transaction, and every document still ends with its vector, or none is written."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from memory.errors import EmbeddingFailed
from memory.ledgers.journal import NewMessage
from memory.records.notes import NewNote
from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder, FakeSentenceEncoder

pytestmark = pytest.mark.both_backends("use_vectors written in a batch's transaction on both databases")

ROOT = Path(__file__).resolve().parent.parent


class TimedEmbedder(FakeEmbedder):
    """A model that takes its time and records when each of its calls ran (on a clock shared with the other)."""

    def __init__(self, seconds: float, spans: list[tuple[str, float, float]], label: str, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.seconds, self.spans, self.label = seconds, spans, label

    def embed(self, texts: Sequence[str], purpose: str = "document") -> np.ndarray:
        start = time.perf_counter()
        time.sleep(self.seconds)
        out = super().embed(texts, purpose)
        self.spans.append((self.label, start, time.perf_counter()))
        return out


class TimedEncoder(TimedEmbedder, FakeSentenceEncoder):
    """USE's stand-in, timed."""


class BrokenEncoder(FakeSentenceEncoder):
    """USE's stand-in that fails every call."""

    def embed(self, texts: Sequence[str], purpose: str = "document") -> np.ndarray:
        raise EmbeddingFailed("USE is broken")


@pytest.fixture
async def timed(tmp_path: Path, database_url: str | None) -> AsyncIterator[tuple[MemoryStore, list]]:
    spans: list[tuple[str, float, float]] = []
    e5 = TimedEmbedder(0.05, spans, "e5")
    use = TimedEncoder(0.01, spans, "use", dim=48, name="fake-use")
    store = await MemoryStore.open(tmp_path / "mnemo.sqlite3", e5, database_url=database_url, second=use)
    yield store, spans
    await store.close()


async def vectors_by_doc(store: MemoryStore) -> tuple[set[int], set[int]]:
    """(documents, documents with a USE vector)."""
    async with store.db.reading() as tx:
        docs = {r[0] for r in await tx.fetchall("SELECT id FROM docs")}
        used = {r[0] for r in await tx.fetchall("SELECT doc_id FROM use_vectors")}
    return docs, used


async def test_a_full_batch_gets_its_use_vectors_after_e5_not_beside_it(timed: tuple[MemoryStore, list]) -> None:
    """Beside e5's two threads USE took one of the two cores: an ingest in batches of 64 ran at about half the speed
    of e5 alone. A full batch's USE vectors are now made after e5's, while the batch's rows are written."""
    store, spans = timed
    scope = await store.scope("mnemo", "anna")
    await store.notes.add_many(scope, [NewNote(f"Anna erzählte am Tag {i} vom Garten.") for i in range(64)])
    e5_end = max(end for label, _start, end in spans if label == "e5")
    use_starts = [start for label, start, _end in spans if label == "use"]
    assert use_starts and min(use_starts) >= e5_end, f"USE ran beside e5: {spans}"
    docs, used = await vectors_by_doc(store)
    assert len(docs) == 64 and used == docs


async def test_a_lone_document_gets_its_use_vector_with_it(timed: tuple[MemoryStore, list]) -> None:
    store, spans = timed
    scope = await store.scope("mnemo", "anna")
    note = (await store.notes.add(scope, "Anna hat einen Dackel namens Berta", dedupe=False)).note
    message = await store.messages.add(scope, "user", "Berta hat heute den Ball gefunden")
    docs, used = await vectors_by_doc(store)
    assert len(docs) == 2 and used == docs
    assert [label for label, *_ in spans].count("use") == 2, "each text embedded by USE once"
    await store.notes.edit(scope, note.id, "Anna hat eine Katze namens Mia")
    await store.messages.rewrite(scope, message.id, "Mia hat heute eine Maus gefangen")
    docs, used = await vectors_by_doc(store)
    assert len(docs) == 2 and used == docs, "an edit replaces the vector, leaves none behind"


async def test_messages_indexed_late_and_imported_get_their_use_vectors(
        tmp_path: Path, embedder: FakeEmbedder, database_url: str | None) -> None:
    use = FakeSentenceEncoder()
    async with await MemoryStore.open(tmp_path / "mnemo.sqlite3", embedder, database_url=database_url,
                                      second=use) as store:
        scope = await store.scope("mnemo", "anna")
        for n in range(70):  # logged without their search entry, as while the embedding server was down
            await store.messages.add(scope, "user", f"Probe Nummer {n} mit dem Orchester", index=False)
        assert await store.messages.index_unindexed(scope.id) == 70
        await store.messages.add_many(scope, [NewMessage("user", f"Import {i}", 1e9 + i) for i in range(40)])
        docs, used = await vectors_by_doc(store)
        assert len(docs) == 110 and used == docs
        await store.delete_scope(scope)
        assert await vectors_by_doc(store) == (set(), set()), "/deleteme leaves no USE vector"


async def test_a_batch_whose_use_vectors_fail_writes_nothing(
        tmp_path: Path, embedder: FakeEmbedder, database_url: str | None) -> None:
    """A document never ends without its USE vector: the batch's transaction fails whole."""
    async with await MemoryStore.open(tmp_path / "mnemo.sqlite3", embedder, database_url=database_url,
                                      second=BrokenEncoder()) as store:
        scope = await store.scope("mnemo", "anna")
        with pytest.raises(EmbeddingFailed):
            await store.notes.add_many(scope, [NewNote(f"Notiz {i}") for i in range(40)])
        with pytest.raises(EmbeddingFailed):
            await store.notes.add(scope, "Eine einzelne Notiz", dedupe=False)
        assert await vectors_by_doc(store) == (set(), set())
        assert await store.notes.list(scope) == []


@pytest.mark.parametrize(("given", "expected"), [
    ({}, "PASSIVE"), ({"OMP_WAIT_POLICY": "ACTIVE"}, "ACTIVE"), ({"GOMP_SPINCOUNT": "300000"}, None)])
def test_e5_s_threads_wait_asleep_unless_the_operator_chose(given: dict[str, str], expected: str | None) -> None:
    """A waiting OpenMP thread of e5 spun a core's whole share (libgomp's default): on two cores shared with USE, the
    database's thread and other processes, e5 cost three to eight times its CPU per text."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")} | given
    code = ("from memory.search.embedder import make_embedder; import os; make_embedder();"
            " print(os.environ.get('OMP_WAIT_POLICY'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(expected)
