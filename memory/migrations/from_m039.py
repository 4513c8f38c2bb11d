"""Migrations from m039 on (vectors kept once in float16, searched by their bits: `memory.search.vectors`).

Frozen once released: databases record their names. A new migration goes at the end here and into the
list MIGRATIONS in memory/migrations.
"""
from __future__ import annotations

import numpy as np

from memory.search.vectors import bits, half, save_center, vec_table
from memory.storage.db import Tx

_CHUNK = 2000  # rows per statement, so a memory of 100k notes never sits in Python at once


async def m039_bit_vectors(tx: Tx) -> None:
    """The embedding cache keeps float16 and every document's vector; `vec_docs` keeps one bit per dimension.

    Before, each vector was stored twice in float32: in `vec_docs` and in the cache. Now the cache
    holds the one full copy (a document whose text the cache lacked gets its vector from `vec_docs`),
    and `vec_docs` is rebuilt with the signs of each vector minus the model's centre, the mean of
    the memory's own document vectors. A reindex left half done starts over (its embeddings stay
    cached, so nothing is embedded twice).
    """
    layout = await tx.fetchone("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'vec_docs'")
    if layout is not None and "BIT[" in layout[0].upper():
        return  # the index of this version made it (a database built up to an older migration, in tests)
    await _cache_to_half(tx)
    if layout is None:
        return  # the index has not run yet: it creates the new layout itself
    meta = dict(await tx.fetchall("SELECT key, value FROM meta WHERE key IN ('embedding_model', 'embedding_dim')"))
    model, dim = meta["embedding_model"], int(meta["embedding_dim"])
    await tx.execute("DROP TABLE IF EXISTS vec_reindex")
    await tx.execute("DELETE FROM meta WHERE key IN ('reindex_model', 'reindex_center')")
    await tx.execute("CREATE TEMP TABLE m039_vectors (doc_id INTEGER PRIMARY KEY, embedding BLOB)")
    await tx.execute("INSERT INTO temp.m039_vectors SELECT doc_id, embedding FROM vec_docs")
    await tx.execute("DROP TABLE vec_docs")
    await tx.execute(vec_table("vec_docs", dim))
    # Every document's vector, from the old vec0 table or else the cache, in float32.
    query = ("SELECT d.id, d.scope_id, d.source, d.created_at, d.content_hash, v.embedding, e.vector FROM docs d"
             " LEFT JOIN temp.m039_vectors v ON v.doc_id = d.id LEFT JOIN embedding_cache e ON e.model = ?"
             " AND e.purpose = 'document' AND e.content_hash = d.content_hash WHERE d.id > ? ORDER BY d.id LIMIT ?")
    total, count, last = np.zeros(dim, dtype=np.float64), 0, 0
    while rows := await tx.fetchall(query, (model, last, _CHUNK)):
        for vector in map(_vector, rows):
            if vector is not None:
                total += vector
                count += 1
        last = rows[-1][0]
    if count == 0:
        await tx.execute("DROP TABLE temp.m039_vectors")
        return  # no vectors: the index finds the model's centre when it opens
    center = (total / count).astype(np.float32)
    await save_center(tx, center)
    last = 0
    while rows := await tx.fetchall(query, (model, last, _CHUNK)):
        found = [(row, vector) for row, vector in zip(rows, map(_vector, rows)) if vector is not None]
        await tx.executemany(
            "INSERT INTO vec_docs(doc_id, scope_id, source, created_at, embedding) VALUES (?, ?, ?, ?, vec_bit(?))",
            [(row[0], row[1], row[2], float(row[3]), bits(vector, center)) for row, vector in found])
        await tx.executemany(
            "INSERT OR IGNORE INTO embedding_cache(model, purpose, content_hash, vector) VALUES (?, 'document', ?, ?)",
            [(model, row[4], half(vector)) for row, vector in found if row[6] is None])
        last = rows[-1][0]
    await tx.execute("DROP TABLE temp.m039_vectors")


def _vector(row: tuple[object, ...]) -> np.ndarray | None:
    """A document's vector from its old vec0 row (float32), else its cache row (already float16)."""
    old, cached = row[5], row[6]
    if isinstance(old, bytes):
        return np.frombuffer(old, dtype=np.float32)
    if isinstance(cached, bytes):
        return np.frombuffer(cached, dtype=np.float16).astype(np.float32)
    return None


async def _cache_to_half(tx: Tx) -> None:
    """Every cached vector from float32 to float16."""
    last = 0
    while rows := await tx.fetchall("SELECT rowid, vector FROM embedding_cache WHERE rowid > ? ORDER BY rowid LIMIT ?",
                                    (last, _CHUNK)):
        await tx.executemany("UPDATE embedding_cache SET vector = ? WHERE rowid = ?",
                             [(half(np.frombuffer(blob, dtype=np.float32)), rowid) for rowid, blob in rows])
        last = rows[-1][0]
