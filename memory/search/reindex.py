"""Move every searchable item to another embedding model, resumably; the switch happens in one transaction.

New vectors go to the embedding cache (float16) and their bits, around the new model's centre
(`memory.search.vectors`), to a side table batch by batch (an interruption keeps what is done);
when every document has its new vector, the side table replaces `vec_docs` and the recorded
model changes, both in one transaction. Until then mnemo keeps working with the old model.

A model other than the bundled e5 has its thresholds measured (`memory.search.calibration`) and kept in that same
transaction; run again with nothing to move, it measures them again.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from memory.errors import EmbeddingFailed
from memory.migrations import migrate
from memory.search.calibration import Measured, measured, measures, save
from memory.search.embed_batches import head
from memory.search.embedder import Embedder
from memory.search.search_text import content_hash
from memory.search.turn_context import CAUGHT_UP_KEY, CAUGHT_UP_UNTIL, document_texts
from memory.search.vectors import bits, from_half, half, load_center, model_center, save_center, vec_table
from memory.storage.db import Database, Tx

SIDE = "vec_reindex"
SIDE_CENTER = "reindex_center"  # meta: the new model's centre, until the switch
BATCH = 64

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ReindexResult:
    """What a run did."""

    done: int
    total: int
    switched: bool
    recorded_model: str


async def _meta(db: Database) -> dict[str, str]:
    async with db.reading() as tx:
        return dict(await tx.fetchall("SELECT key, value FROM meta"))


async def _prepare(db: Database, embedder: Embedder) -> None:
    """Create the side table for this model with its centre, or start over when a run for another model was
    left behind."""
    meta = await _meta(db)
    center = None
    if meta.get("reindex_model") != embedder.name:
        center = await model_center(embedder)
    async with db.transaction() as tx:
        if meta.get("reindex_model") not in (None, embedder.name):
            await tx.execute(f"DROP TABLE IF EXISTS {SIDE}")
        if center is not None:
            await tx.execute(vec_table(SIDE, embedder.dim, tx.dialect))
            await save_center(tx, center, SIDE_CENTER)
            await tx.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('reindex_model', ?)", (embedder.name,))


async def _embed(db: Database, embedder: Embedder, texts: list[str]) -> np.ndarray:
    """Embed documents off the loop, reusing this model's cached vectors."""
    hashes = [content_hash(t) for t in texts]
    async with db.reading() as tx:
        marks = ",".join("?" * len(hashes))
        cached = dict(await tx.fetchall(
            f"SELECT content_hash, vector FROM embedding_cache WHERE model = ? AND purpose = 'document'"
            f" AND content_hash IN ({marks})", (embedder.name, *hashes)))
    missing = [t for t, h in zip(texts, hashes) if h not in cached]
    if missing:
        vectors = await asyncio.to_thread(embedder.embed, [head(t) for t in missing], "document")
        if vectors.shape != (len(missing), embedder.dim):
            raise EmbeddingFailed(f"embedder returned shape {vectors.shape}")
        fresh = {content_hash(t): half(v) for t, v in zip(missing, vectors)}
        async with db.transaction() as tx:
            await tx.executemany("INSERT OR IGNORE INTO embedding_cache(model, purpose, content_hash, vector)"
                                 " VALUES (?, 'document', ?, ?)", [(embedder.name, h, v) for h, v in fresh.items()])
        cached.update(fresh)
    return np.stack([from_half(cached[h]) for h in hashes])


async def _messages_in_context(tx: Tx) -> None:
    """At the switch: every message's document names the text its new vector was made of (in context, also where it
    was stored before m053 and not yet caught up), and nothing is left to catch up (`mnemo reindex` then fills the USE
    vectors it dropped)."""
    rows = await tx.fetchall("SELECT id, source, item_id, text, content_hash FROM docs WHERE source = 'message'")
    texts = await document_texts(tx, [(r[0], r[1], r[2], r[3]) for r in rows])
    moved = [(content_hash(t), r[0]) for r, t in zip(rows, texts) if content_hash(t) != r[4]]
    await tx.executemany("UPDATE docs SET content_hash = ? WHERE id = ?", moved)
    # Their USE vectors were of their own words too: the second signal's filling gives them theirs in context.
    await tx.executemany("DELETE FROM use_vectors WHERE doc_id = ?", [(doc,) for _, doc in moved])
    await tx.execute("DELETE FROM meta WHERE key IN (?, ?)", (CAUGHT_UP_KEY, CAUGHT_UP_UNTIL))


async def reindex(db: Database, embedder: Embedder, progress: Progress | None = None,
                  max_batches: int | None = None) -> ReindexResult:
    """Re-embed every document with `embedder`; resumable; switches the model only when complete."""
    await migrate(db)
    meta = await _meta(db)
    if meta.get("embedding_model") == embedder.name and "reindex_model" not in meta:
        if (found := await _calibration(embedder)) is not None:
            async with db.transaction() as tx:
                await save(tx, found)
        async with db.reading() as tx:
            total = (await tx.fetchone("SELECT count(*) FROM docs"))[0]
        return ReindexResult(total, total, False, embedder.name)
    await _prepare(db, embedder)
    batches, finished = 0, False
    while max_batches is None or batches < max_batches:
        async with db.reading() as tx:
            total = (await tx.fetchone("SELECT count(*) FROM docs"))[0]
            rows = await tx.fetchall(
                f"SELECT id, scope_id, source, created_at, text, item_id FROM docs WHERE id NOT IN"
                f" (SELECT doc_id FROM {SIDE}) ORDER BY id LIMIT ?", (BATCH,))
            texts = await document_texts(tx, [(r[0], r[2], r[5], r[4]) for r in rows])  # a message in context
        if not rows:
            finished = True
            break
        vectors = await _embed(db, embedder, texts)
        async with db.transaction() as tx:
            center = await load_center(tx, SIDE_CENTER)
            assert center is not None  # _prepare recorded it
            await tx.executemany(
                f"INSERT INTO {SIDE}(doc_id, scope_id, source, created_at, embedding) VALUES (?, ?, ?, ?, vec_bit(?))",
                [(r[0], r[1], r[2], float(r[3]), bits(v, center)) for r, v in zip(rows, vectors)])
        batches += 1
        if progress:
            async with db.reading() as tx:
                done = (await tx.fetchone(f"SELECT count(*) FROM {SIDE}"))[0]
            progress(done, total)
    found = await _calibration(embedder) if finished else None  # measured for the switch only
    async with db.transaction() as tx:
        total = (await tx.fetchone("SELECT count(*) FROM docs"))[0]
        done = (await tx.fetchone(f"SELECT count(*) FROM {SIDE}"))[0]
        missing = (await tx.fetchone(f"SELECT count(*) FROM docs WHERE id NOT IN (SELECT doc_id FROM {SIDE})"))[0]
        if missing:
            return ReindexResult(done, total, False, meta.get("embedding_model", ""))
        center = await load_center(tx, SIDE_CENTER)
        assert center is not None  # _prepare recorded it
        await _messages_in_context(tx)
        await tx.execute("DROP TABLE IF EXISTS vec_docs")
        await tx.execute(vec_table("vec_docs", embedder.dim, tx.dialect))
        bits_of = "vec_bit(embedding)" if tx.dialect == "sqlite" else "embedding"  # PostgreSQL keeps them as bytea
        await tx.execute(f"INSERT INTO vec_docs(doc_id, scope_id, source, created_at, embedding)"
                         f" SELECT doc_id, scope_id, source, created_at, {bits_of} FROM {SIDE}")
        await tx.execute(f"DROP TABLE {SIDE}")
        await save_center(tx, center)
        await tx.execute(f"DELETE FROM meta WHERE key IN ('reindex_model', '{SIDE_CENTER}')")
        await tx.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('embedding_model', ?)", (embedder.name,))
        await tx.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('embedding_dim', ?)", (str(embedder.dim),))
        if found is not None:
            await save(tx, found)
    return ReindexResult(done, total, True, embedder.name)


async def _calibration(embedder: Embedder) -> Measured | None:
    """The model's thresholds measured now (in a thread), or None for the bundled e5 (its shipped ones stand)."""
    return await asyncio.to_thread(measured, embedder) if measures(embedder.name) else None
