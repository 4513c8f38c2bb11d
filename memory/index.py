"""The search index: one row in `docs`, its vector in `vec_docs`, its words in two FTS5 tables.

Callers write and delete inside their own transaction, so an item and its index entries
change together or not at all.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from typing import Sequence

import numpy as np

from memory import text as textmod
from memory.db import Database, Tx
from memory.embedder import Embedder, Purpose
from memory.errors import EmbeddingFailed, ModelMismatch
from memory.models import Components, SearchHit, Source, ts
from memory.ranking import Candidate, Weights, fuse

log = logging.getLogger(__name__)

CANDIDATES = 60  # per retriever, before fusion
_QUERY_CACHE = 512


class SearchIndex:
    """Embeds, stores and searches documents of every searchable kind."""

    def __init__(self, db: Database, embedder: Embedder, weights: Weights | None = None) -> None:
        self.db = db
        self.embedder = embedder
        self.weights = weights or Weights()
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()

    async def ensure_model(self) -> None:
        """Record the model on first use; refuse a database indexed with another model."""
        name, dim = self.embedder.name, self.embedder.dim
        async with self.db.transaction() as tx:
            rows = dict(await tx.fetchall("SELECT key, value FROM meta WHERE key LIKE 'embedding_%'"))
            if not rows:
                await tx.execute("INSERT INTO meta(key, value) VALUES ('embedding_model', ?)", (name,))
                await tx.execute("INSERT INTO meta(key, value) VALUES ('embedding_dim', ?)", (str(dim),))
                await tx.execute(
                    "CREATE VIRTUAL TABLE vec_docs USING vec0(doc_id INTEGER PRIMARY KEY,"
                    f" scope_id INTEGER PARTITION KEY, source TEXT, created_at FLOAT,"
                    f" embedding FLOAT[{dim}] distance_metric=cosine)"
                )
                return
        if rows.get("embedding_model") != name or rows.get("embedding_dim") != str(dim):
            raise ModelMismatch(
                f"The memory in {self.db.path} was indexed with the embedding model "
                f"{rows.get('embedding_model')} ({rows.get('embedding_dim')} dims), but {name} "
                f"({dim} dims) is configured. Set MNEMO_EMBEDDING_MODEL back to the recorded model, "
                "or use a new MNEMO_DATA_DIR."
            )

    async def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        """Embed texts off the event loop; a text already embedded by this model is never embedded again."""
        hashes = [textmod.content_hash(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        if purpose == "query":
            found = {h: self._queries[h] for h in hashes if h in self._queries}
        elif hashes:
            async with self.db.reading() as tx:
                marks = ",".join("?" * len(set(hashes)))
                rows = await tx.fetchall(
                    f"SELECT content_hash, vector FROM embedding_cache WHERE model = ? AND purpose = ?"
                    f" AND content_hash IN ({marks})",
                    (self.embedder.name, purpose, *set(hashes)),
                )
            found = {h: np.frombuffer(v, dtype=np.float32) for h, v in rows}
        missing = list(dict.fromkeys(h for h in hashes if h not in found))
        if missing:
            by_hash = dict(zip(hashes, texts))
            try:
                vectors = await asyncio.to_thread(self.embedder.embed, [by_hash[h] for h in missing], purpose)
            except Exception as exc:
                raise EmbeddingFailed(f"embedding failed: {exc}") from exc
            vectors = np.asarray(vectors, dtype=np.float32)
            if vectors.shape != (len(missing), self.embedder.dim):
                raise EmbeddingFailed(f"embedder returned shape {vectors.shape}, expected ({len(missing)}, {self.embedder.dim})")
            fresh = dict(zip(missing, vectors))
            found.update(fresh)
            if purpose == "query":
                self._remember_queries(fresh)
            else:
                async with self.db.transaction() as tx:
                    await tx.executemany(
                        "INSERT OR IGNORE INTO embedding_cache(model, purpose, content_hash, vector) VALUES (?, ?, ?, ?)",
                        [(self.embedder.name, purpose, h, v.tobytes()) for h, v in fresh.items()],
                    )
        return np.stack([found[h] for h in hashes]) if hashes else np.zeros((0, self.embedder.dim), np.float32)

    def _remember_queries(self, fresh: dict[str, np.ndarray]) -> None:
        for h, v in fresh.items():
            self._queries[h] = v
            self._queries.move_to_end(h)
        while len(self._queries) > _QUERY_CACHE:
            self._queries.popitem(last=False)

    async def add(
        self, tx: Tx, scope_id: int, source: Source, item_id: int, text: str,
        vector: np.ndarray, created_at: float, importance: int = 5,
    ) -> int:
        """Index one item; returns the document id."""
        doc_id = await tx.execute(
            "INSERT INTO docs(scope_id, source, item_id, text, content_hash, importance, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (scope_id, source, item_id, text, textmod.content_hash(text), importance, created_at),
        )
        await tx.execute(
            "INSERT INTO vec_docs(doc_id, scope_id, source, created_at, embedding) VALUES (?, ?, ?, ?, ?)",
            (doc_id, scope_id, source, created_at, _blob(vector, self.embedder.dim)),
        )
        return doc_id

    async def update(self, tx: Tx, doc_id: int, text: str, vector: np.ndarray, importance: int | None = None) -> None:
        """Replace a document's text and vector (and importance, when given)."""
        await tx.execute(
            "UPDATE docs SET text = ?, content_hash = ?, importance = COALESCE(?, importance) WHERE id = ?",
            (text, textmod.content_hash(text), importance, doc_id),
        )
        await tx.execute("UPDATE vec_docs SET embedding = ? WHERE doc_id = ?", (_blob(vector, self.embedder.dim), doc_id))

    async def remove(self, tx: Tx, doc_id: int) -> None:
        """Delete a document with its vector and full-text entries."""
        await tx.execute("DELETE FROM vec_docs WHERE doc_id = ?", (doc_id,))
        await tx.execute("DELETE FROM docs WHERE id = ?", (doc_id,))

    async def nearest(self, scope_id: int, vector: np.ndarray, source: Source, k: int = 5) -> list[tuple[int, int, float]]:
        """(doc_id, item_id, cosine) of the k nearest documents of one source in one scope."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                "SELECT v.doc_id, d.item_id, v.distance FROM vec_docs v JOIN docs d ON d.id = v.doc_id"
                " WHERE v.embedding MATCH ? AND k = ? AND v.scope_id = ? AND v.source = ?",
                (_blob(vector, self.embedder.dim), k, scope_id, source),
            )
        return [(doc, item, 1.0 - dist) for doc, item, dist in rows]

    async def search(
        self, scope_id: int, query: str, sources: Sequence[Source], k: int = 10, *,
        window: tuple[float, float] | None = None, now: float | None = None,
        min_cosine: float | None = None,
    ) -> list[SearchHit]:
        """Hybrid search within one scope: vector KNN and two FTS5 indexes, fused by `ranking.fuse`."""
        now = time.time() if now is None else now
        qvec = (await self.embed([query], "query"))[0]
        words = textmod.content_words(query)
        src = list(sources)
        src_marks = ",".join("?" * len(src))
        time_sql, time_args = ("", ()) if window is None else (" AND d.created_at >= ? AND d.created_at < ?", window)
        async with self.db.reading() as tx:
            vec_time = "" if window is None else " AND created_at >= ? AND created_at < ?"
            vec_rows = await tx.fetchall(
                f"SELECT doc_id, distance FROM vec_docs WHERE embedding MATCH ? AND k = ? AND scope_id = ?"
                f" AND source IN ({src_marks}){vec_time}",
                (_blob(qvec, self.embedder.dim), CANDIDATES, scope_id, *src, *(window or ())),
            )
            lexical: dict[str, dict[int, float]] = {}
            for table, match in (("fts_words", textmod.words_match(words)), ("fts_trigram", textmod.trigram_match(words))):
                if not match:
                    lexical[table] = {}
                    continue
                rows = await tx.fetchall(
                    f"SELECT d.id, -{table}.rank FROM {table} JOIN docs d ON d.id = {table}.rowid"
                    f" WHERE {table} MATCH ? AND d.scope_id = ? AND d.source IN ({src_marks}){time_sql}"
                    f" ORDER BY {table}.rank LIMIT ?",
                    (match, scope_id, *src, *time_args, CANDIDATES),
                )
                lexical[table] = {doc: score for doc, score in rows}
            cosines = {doc: 1.0 - dist for doc, dist in vec_rows}
            ids = set(cosines) | set(lexical["fts_words"]) | set(lexical["fts_trigram"])
            if not ids:
                return []
            marks = ",".join("?" * len(ids))
            docs = {
                row[0]: row
                for row in await tx.fetchall(
                    f"SELECT id, source, item_id, text, created_at, importance FROM docs WHERE id IN ({marks})",
                    tuple(ids),
                )
            }
            lacking = [d for d in ids if d not in cosines]
            if lacking:
                marks = ",".join("?" * len(lacking))
                for doc, blob in await tx.fetchall(
                    f"SELECT doc_id, embedding FROM vec_docs WHERE doc_id IN ({marks})", tuple(lacking)
                ):
                    cosines[doc] = float(np.frombuffer(blob, dtype=np.float32) @ qvec)
        candidates = [
            Candidate(
                doc_id=d, cosine=cosines.get(d, 0.0), words=lexical["fts_words"].get(d, 0.0),
                trigram=lexical["fts_trigram"].get(d, 0.0), age_days=(now - docs[d][4]) / 86400.0,
                importance=docs[d][5],
            )
            for d in ids if d in docs
        ]
        if min_cosine is not None:
            candidates = [c for c in candidates if c.cosine >= min_cosine]
        by_id = {c.doc_id: c for c in candidates}
        hits = []
        for doc_id, score in fuse(candidates, self.weights)[:k]:
            _, source, item_id, body, created, importance = docs[doc_id]
            c = by_id[doc_id]
            hits.append(SearchHit(
                source=source, item_id=item_id, text=body, score=score, created_at=ts(created),  # type: ignore[arg-type]
                components=Components(cosine=c.cosine, words=c.words, trigram=c.trigram,
                                      age_days=c.age_days, importance=importance),
            ))
        return hits


def _blob(vector: np.ndarray, dim: int) -> bytes:
    vec = np.asarray(vector, dtype=np.float32).reshape(-1)
    if vec.shape[0] != dim:
        raise EmbeddingFailed(f"vector has {vec.shape[0]} dimensions, the index has {dim}")
    return vec.tobytes()
