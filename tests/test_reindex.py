"""Reindex: moving the memory to another embedding model, interrupted and resumed."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from memory import shown_url
from memory.errors import ModelMismatch
from memory.search.calibration_set import TOPICS
from memory.search.reindex import BATCH, reindex
from memory.search.vectors import CALIBRATION
from memory.storage.db import Database
from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder


class CountingEmbedder(FakeEmbedder):
    """Counts the texts it embeds."""

    def __init__(self, dim: int, name: str) -> None:
        super().__init__(dim, name)
        self.texts = 0

    def embed(self, texts: Sequence[str], purpose: str = "document") -> np.ndarray:
        self.texts += len(texts)
        return super().embed(texts, purpose)


async def test_reindex_is_resumable_and_switches_only_when_complete(tmp_path: Path) -> None:
    path = tmp_path / "mnemo.sqlite3"
    old = FakeEmbedder(dim=64, name="model-a")
    async with await MemoryStore.open(path, old) as store:
        scope = await store.scope("mnemo", "anna")
        for i in range(BATCH * 2 + 10):
            await store.notes.add(scope, f"Notiz {i} über den Garten und Tomate{i}", dedupe=False)
        await store.messages.add(scope, "user", "Ich war im Kino mit Miriam")

    new = CountingEmbedder(dim=32, name="model-b")
    db = await Database.open(path)
    try:
        first = await reindex(db, new, max_batches=1)  # interrupted after one batch
        assert not first.switched and first.done == BATCH and first.recorded_model == "model-a"
    finally:
        await db.close()
    async with await MemoryStore.open(path, old) as store:  # still works with the old model meanwhile
        scope = await store.scope("mnemo", "anna")
        assert await store.search(scope, "Tomate3")

    seen: list[tuple[int, int]] = []
    db = await Database.open(path)
    try:
        second = await reindex(db, new, progress=lambda done, total: seen.append((done, total)))
    finally:
        await db.close()
    assert second.switched and second.done == second.total == BATCH * 2 + 11
    # Each text once across both runs, the sentences that find the new model's centre once, in the first, and the
    # calibration set's five texts a topic once, at the switch (memory.search.calibration).
    assert new.texts == second.total + len(CALIBRATION) + 5 * len(TOPICS)
    assert seen[-1] == (second.total, second.total)

    with pytest.raises(ModelMismatch):
        await MemoryStore.open(path, old)
    async with await MemoryStore.open(path, FakeEmbedder(dim=32, name="model-b")) as store:
        scope = await store.scope("mnemo", "anna")
        assert [h.text for h in await store.search(scope, "Tomate7 Garten")][0] == "Notiz 7 über den Garten und Tomate7"
        assert [h.text for h in await store.search(scope, "Kino Miriam", ("message",))] == [
            "Ich war im Kino mit Miriam"]


@pytest.mark.both_backends("the refusal names where the memory is: a file, or a server without its password")
async def test_the_refusal_names_the_database_and_what_changed(tmp_path: Path, database_url: str | None) -> None:
    """Issue 53: on PostgreSQL the refusal named a file that does not exist; for changed prefixes it suggested
    changing the model name."""
    path = tmp_path / "mnemo.sqlite3"
    await (await MemoryStore.open(path, FakeEmbedder(dim=32, name="server/bge-m3+prefixes:0badcafe"),
                                  database_url=database_url)).close()
    with pytest.raises(ModelMismatch) as prefixes:
        await MemoryStore.open(path, FakeEmbedder(dim=32, name="server/bge-m3+prefixes:12345678"),
                               database_url=database_url)
    with pytest.raises(ModelMismatch) as model:
        await MemoryStore.open(path, FakeEmbedder(dim=16, name="server/other"), database_url=database_url)
    where = "mnemo.sqlite3" if database_url is None else database_url.split("@")[-1]
    for refused in (str(prefixes.value), str(model.value)):
        assert where in refused and "mnemo reindex" in refused
    assert "MNEMO_EMBEDDING_QUERY_PREFIX" in str(prefixes.value) and "MNEMO_EMBEDDING_MODEL" not in str(prefixes.value)
    assert "MNEMO_EMBEDDING_MODEL back" in str(model.value)
    if database_url is not None:  # the server as `shown_url` shows it (no password), never a file beside it
        assert str(path) not in str(model.value) and shown_url(database_url) in str(model.value)
