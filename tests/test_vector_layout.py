"""Vectors kept once in float16 and searched by their bits: the search, the integrity check and m039."""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from memory.migrations.from_m039 import m039_bit_vectors
from memory.records.notes import NewNote
from memory.search import integrity
from memory.search.ranking import Weights
from memory.search.search_text import content_hash, normalize
from memory.search.vectors import COARSE, from_half, half
from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder
from tests.old_layouts import migrated_before

DIM = 64
FRUITS = ["Apfel", "Birne", "Kirsche", "Pflaume", "Quitte", "Mirabelle", "Holunder", "Stachelbeere", "Johannisbeere",
          "Brombeere", "Himbeere", "Aprikose", "Pfirsich"]
PLACES = ["Leipzig", "Rostock", "Bamberg", "Görlitz", "Passau", "Husum", "Weimar", "Lindau", "Goslar", "Celle",
          "Wismar", "Meißen", "Speyer"]


def note_texts(n: int) -> list[str]:
    """n distinct notes, each with its own pair of words."""
    return [f"Anna pflückt {FRUITS[i % len(FRUITS)]} in {PLACES[(i // len(FRUITS)) % len(PLACES)]} Nummer{i}"
            for i in range(n)]


async def old_database(path: Path, embedder: FakeEmbedder, texts: list[str]) -> dict[str, int]:
    """A database as mnemo before m039 wrote it: float32 vectors in `vec_docs` and in the embedding cache.

    Written with the old statements; one note's text is missing from the cache (its vector is in vec0 only).
    Returns each note's id by its text.
    """
    db = await migrated_before(path, m039_bit_vectors)
    ids, now = {}, time.time()
    async with db.transaction() as tx:
        await tx.execute("INSERT INTO meta(key, value) VALUES ('embedding_model', ?)", (embedder.name,))
        await tx.execute("INSERT INTO meta(key, value) VALUES ('embedding_dim', ?)", (str(DIM),))
        await tx.execute(
            "CREATE VIRTUAL TABLE vec_docs USING vec0(doc_id INTEGER PRIMARY KEY, scope_id INTEGER PARTITION KEY,"
            f" source TEXT, created_at FLOAT, embedding FLOAT[{DIM}] distance_metric=cosine)")
        for user in ("anna", "ben"):
            await tx.execute("INSERT INTO scopes(companion_id, user_id, created_at) VALUES ('mnemo', ?, 0)", (user,))
        vectors = embedder.embed(texts)
        for i, (text, vector) in enumerate(zip(texts, vectors)):
            scope = 1 if i % 10 else 2
            note = await tx.execute(
                "INSERT INTO notes(scope_id, kind, text, importance, created_at, updated_at, source_message_ids,"
                " norm_hash) VALUES (?, 'fact', ?, 5, ?, ?, '[]', ?)",
                (scope, text, now - i, now - i, content_hash(normalize(text))))
            doc = await tx.execute(
                "INSERT INTO docs(scope_id, source, item_id, text, content_hash, importance, created_at)"
                " VALUES (?, 'note', ?, ?, ?, 5, ?)", (scope, note, text, content_hash(text), now - i))
            await tx.execute("UPDATE notes SET doc_id = ? WHERE id = ?", (doc, note))
            await tx.execute("INSERT INTO vec_docs(doc_id, scope_id, source, created_at, embedding)"
                             " VALUES (?, ?, 'note', ?, ?)", (doc, scope, now - i, vector.tobytes()))
            if i != 7:
                await tx.execute("INSERT INTO embedding_cache(model, purpose, content_hash, vector)"
                                 " VALUES (?, 'document', ?, ?)", (embedder.name, content_hash(text), vector.tobytes()))
            ids[text] = note
    await db.close()
    return ids


async def test_m039_moves_an_old_database_and_every_note_is_still_found(tmp_path: Path) -> None:
    embedder = FakeEmbedder(dim=DIM)
    texts = note_texts(COARSE + 80)  # the larger scope holds more notes than the Hamming search hands on
    ids = await old_database(tmp_path / "mnemo.sqlite3", embedder, texts)

    async with await MemoryStore.open(tmp_path, embedder) as store:
        assert await integrity.check(store) == []
        async with store.db.reading() as tx:
            lengths = {r[0] for r in await tx.fetchall("SELECT length(vector) FROM embedding_cache")}
            cached = (await tx.fetchone("SELECT count(*) FROM embedding_cache"))[0]
            layout = (await tx.fetchone("SELECT sql FROM sqlite_master WHERE name = 'vec_docs'"))[0]
        assert lengths == {DIM * 2} and cached == len(texts), "one float16 vector per note, the missing one added"
        assert "BIT[64]" in layout.upper()
        anna, ben = await store.scope("mnemo", "anna"), await store.scope("mnemo", "ben")
        for i, text in enumerate(texts):
            hits = await store.search(anna if i % 10 else ben, text, ("note",), k=1)
            assert [(h.item_id, h.text) for h in hits] == [(ids[text], text)]
            assert abs(hits[0].components.cosine - 1.0) < 1e-3


async def test_the_vector_search_rescores_with_the_full_vectors(tmp_path: Path) -> None:
    embedder = FakeEmbedder(dim=DIM)
    async with await MemoryStore.open(tmp_path, embedder) as store:
        anna = await store.scope("mnemo", "anna")
        texts = note_texts(40)
        notes = await store.notes.add_many(anna, [NewNote(t) for t in texts])
        query = "Anna pflückt Kirsche in Bamberg"
        qvec = embedder.embed([query], "query")[0]
        nearest = await store.index.nearest(anna.id, qvec, "note", k=5)
        exact = {n.id: float(embedder.embed([n.text])[0] @ qvec) for n in notes}
        # the five highest cosines, each note's own (of notes with equal cosines, any)
        assert np.allclose([c for *_, c in nearest], sorted(exact.values(), reverse=True)[:5], atol=2e-3)
        assert all(abs(exact[item] - cosine) < 2e-3 for _doc, item, cosine in nearest)
        assert await integrity.check(store) == []


async def test_the_integrity_check_names_a_document_whose_full_vector_is_gone(tmp_path: Path) -> None:
    async with await MemoryStore.open(tmp_path, FakeEmbedder(dim=DIM)) as store:
        anna = await store.scope("mnemo", "anna")
        note = (await store.notes.add(anna, "Anna mag Quittengelee.")).note
        async with store.db.transaction() as tx:
            await tx.execute("DELETE FROM embedding_cache WHERE content_hash = ?", (content_hash(note.text),))
        problems = await integrity.check(store)
    assert len(problems) == 1 and "full vector" in problems[0], json.dumps(problems)


async def test_a_small_scope_compares_every_full_vector(tmp_path: Path) -> None:
    """Up to vectors.EXACT_UP_TO documents the vector retriever ranks by the exact cosine of every note."""
    embedder = FakeEmbedder(dim=DIM)
    only_vectors = Weights(words=0.0, trigram=0.0, context=0.0, dated=0.0, recency_floor=1.0, importance=0.0)
    async with await MemoryStore.open(tmp_path, embedder, weights=only_vectors) as store:
        anna, ben = await store.scope("mnemo", "anna"), await store.scope("mnemo", "ben")
        notes = await store.notes.add_many(anna, [NewNote(t) for t in note_texts(60)])
        await store.notes.add_many(ben, [NewNote(t) for t in note_texts(60)])  # the same texts in another scope
        query = "Anna pflückt Kirsche in Bamberg"
        qvec = embedder.embed([query], "query")[0]
        hits = await store.search(anna, query, ("note",), k=10)
        kept = {n.id: float(from_half(half(embedder.embed([n.text])[0])) @ qvec) for n in notes}  # as the cache holds
        exact = sorted(kept, key=lambda item: kept[item], reverse=True)[:10]
        assert sorted(h.item_id for h in hits) == sorted(exact)  # never ben's copies, never a nearer one left out
        assert np.allclose([h.components.cosine for h in hits], sorted(kept.values(), reverse=True)[:10], atol=1e-4)
