"""The search index: one row in `docs`, its vector in `vec_docs`, its words in two FTS5 tables.

Callers write and delete inside their own transaction, so an item and its index entries
change together or not at all.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from memory import search_text, vectors
from memory.db import Database, Tx
from memory.embedder import Embedder, Purpose
from memory.errors import EmbeddingFailed, ModelMismatch
from memory.models import Components, SearchHit, Source, ts
from memory.ranking import Candidate, Weights, faded, fuse
from memory.retrievers import (
    CANDIDATES,
    Found,
    IndexedDoc,
    Where,
    best,
    documents,
    matching,
    related_docs,
    scope_cosines,
    scope_counts,
    stored_cosines,
)

log = logging.getLogger(__name__)

# Words of a query the full-text indexes look for, the first ones: a long message (up to 4,000
# characters) holds hundreds, and each becomes a term of one statement (SQLite allows 500 parts of
# a UNION and 2,000 result columns). The vector search still reads all of it.
MAX_QUERY_WORDS = 64
# From this many documents in the searched scope, the vector search runs on a second connection
# beside the full-text queries. bench/scale.py measured both ways: at 1k notes of one user the hand-
# over between threads cost more than it saved (p50 7.1 ms against 4.5 ms one after the other), at
# 10k it saved a third (10.6 ms against 15.2 ms).
ASIDE_FROM_DOCS = 5000
_QUERY_CACHE = 512


class SearchIndex:
    """Embeds, stores and searches documents of every searchable kind."""

    def __init__(
        self, db: Database, embedder: Embedder, weights: Weights | None = None, aside_from_docs: int = ASIDE_FROM_DOCS,
    ) -> None:
        self.db = db
        self.embedder = embedder
        self.weights = weights or Weights()
        self.aside_from_docs = aside_from_docs
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lengths: dict[tuple[int, tuple[Source, ...]], tuple[int, float]] = {}  # see _mean_length
        self._center: np.ndarray | None = None  # the recorded model's centre (`memory.vectors`)

    async def ensure_model(self) -> None:
        """Record the model on first use, with its centre; refuse a database indexed with another model."""
        name, dim = self.embedder.name, self.embedder.dim
        async with self.db.reading() as tx:
            rows = dict(await tx.fetchall("SELECT key, value FROM meta WHERE key LIKE 'embedding_%'"))
        if not rows or vectors.CENTER_KEY not in rows:
            center = await vectors.model_center(self.embedder) if rows.get("embedding_model", name) == name else None
            async with self.db.transaction() as tx:
                if not rows:
                    await tx.execute("INSERT INTO meta(key, value) VALUES ('embedding_model', ?)", (name,))
                    await tx.execute("INSERT INTO meta(key, value) VALUES ('embedding_dim', ?)", (str(dim),))
                    await tx.execute(vectors.vec_table("vec_docs", dim))
                if center is not None:
                    await vectors.save_center(tx, center)
            if not rows:
                return
        if rows.get("embedding_model") != name or rows.get("embedding_dim") != str(dim):
            raise ModelMismatch(
                f"The memory in {self.db.path} was indexed with the embedding model "
                f"{rows.get('embedding_model')} ({rows.get('embedding_dim')} dims), but {name} "
                f"({dim} dims) is configured. Run `mnemo reindex` to move the memory to the new model, "
                "or set MNEMO_EMBEDDING_MODEL back to the recorded one."
            )

    async def center(self, tx: Tx) -> np.ndarray:
        """The recorded model's centre (read once, in tx; `ensure_model` records it)."""
        if self._center is None:
            self._center = await vectors.load_center(tx)
            if self._center is None:
                raise ModelMismatch(f"The memory in {self.db.path} has no centre for its model; "
                                    "reopen it to record one.")
        return self._center

    async def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        """Embed texts off the event loop; a text already embedded by this model is never embedded again."""
        hashes = [search_text.content_hash(t) for t in texts]
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
            found = {h: vectors.from_half(v) for h, v in rows}
        missing = list(dict.fromkeys(h for h in hashes if h not in found))
        if missing:
            by_hash = dict(zip(hashes, texts))
            try:
                embedded = await asyncio.to_thread(self.embedder.embed, [by_hash[h] for h in missing], purpose)
            except Exception as exc:
                raise EmbeddingFailed(f"embedding failed: {exc}") from exc
            embedded = np.asarray(embedded, dtype=np.float32)
            if embedded.shape != (len(missing), self.embedder.dim):
                raise EmbeddingFailed(f"embedder returned shape {embedded.shape}, "
                                      f"expected ({len(missing)}, {self.embedder.dim})")
            # A document's vector is what the cache will give back: float16.
            if purpose == "document":
                embedded = embedded.astype(np.float16).astype(np.float32)
            fresh = dict(zip(missing, embedded))
            found.update(fresh)
            if purpose == "query":
                self._remember_queries(fresh)
            else:
                async with self.db.transaction() as tx:
                    await tx.executemany(
                        "INSERT OR IGNORE INTO embedding_cache(model, purpose, content_hash, vector)"
                        " VALUES (?, ?, ?, ?)",
                        [(self.embedder.name, purpose, h, vectors.half(v)) for h, v in fresh.items()],
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
            (scope_id, source, item_id, text, search_text.content_hash(text), importance, created_at),
        )
        await tx.execute(
            "INSERT INTO vec_docs(doc_id, scope_id, source, created_at, embedding) VALUES (?, ?, ?, ?, vec_bit(?))",
            (doc_id, scope_id, source, created_at,
             vectors.bits(_checked(vector, self.embedder.dim), await self.center(tx))),
        )
        await self._keep(tx, text, vector)
        return doc_id

    async def _keep(self, tx: Tx, text: str, vector: np.ndarray) -> None:
        """Keep a document's full vector in the embedding cache (`embed` put it there, unless it came elsewhere)."""
        await tx.execute("INSERT OR IGNORE INTO embedding_cache(model, purpose, content_hash, vector)"
                         " VALUES (?, 'document', ?, ?)",
                         (self.embedder.name, search_text.content_hash(text), vectors.half(vector)))

    async def update(self, tx: Tx, doc_id: int, text: str, vector: np.ndarray, importance: int | None = None) -> None:
        """Replace a document's text and vector (and importance, when given)."""
        await tx.execute(
            "UPDATE docs SET text = ?, content_hash = ?, importance = COALESCE(?, importance) WHERE id = ?",
            (text, search_text.content_hash(text), importance, doc_id),
        )
        # vec0 (0.1.9) takes a bit vector in an INSERT only: an UPDATE loses vec_bit's type.
        await tx.execute("DELETE FROM vec_docs WHERE doc_id = ?", (doc_id,))
        await tx.execute(
            "INSERT INTO vec_docs(doc_id, scope_id, source, created_at, embedding)"
            " SELECT id, scope_id, source, created_at, vec_bit(?) FROM docs WHERE id = ?",
            (vectors.bits(_checked(vector, self.embedder.dim), await self.center(tx)), doc_id))
        await self._keep(tx, text, vector)

    async def remove(self, tx: Tx, doc_id: int) -> None:
        """Delete a document with its vector and full-text entries."""
        await tx.execute("DELETE FROM vec_docs WHERE doc_id = ?", (doc_id,))
        await tx.execute("DELETE FROM docs WHERE id = ?", (doc_id,))

    async def remove_doc_of(self, tx: Tx, table: str, item_id: int) -> None:
        """Delete the document of one row of `table`, if it has one, with its vector and full-text entries."""
        row = await tx.fetchone(f"SELECT doc_id FROM {table} WHERE id = ?", (item_id,))
        if row and row[0] is not None:
            await self.remove(tx, row[0])

    async def nearest(self, scope_id: int, vector: np.ndarray, source: Source,
                      k: int = 5) -> list[tuple[int, int, float]]:
        """(doc_id, item_id, cosine) of the k nearest documents of one source in one scope."""
        async with self.db.reading() as tx:
            cosines = await self._knn(tx, vector, Where(scope_id, (source,), None), k)
            rows = await tx.fetchall(f"SELECT id, item_id FROM docs WHERE id IN ({','.join('?' * len(cosines))})",
                                     tuple(cosines))
        items = dict(rows)
        return [(doc, items[doc], cosine) for doc, cosine in cosines.items() if doc in items]

    async def search(
        self, scope_id: int, query: str, sources: Sequence[Source], k: int = 10, *,
        window: tuple[float, float] | None = None, now: float | None = None,
        min_cosine: float | None = None, include_faded: bool = False, words_pass: bool = False,
    ) -> list[SearchHit]:
        """Hybrid search within one scope: embed the query, then `search_vector`."""
        qvec = (await self.embed([query], "query"))[0]
        return await self.search_vector(scope_id, qvec, query, sources, k, window=window, now=now,
                                        min_cosine=min_cosine, include_faded=include_faded, words_pass=words_pass)

    async def search_vector(
        self, scope_id: int, qvec: np.ndarray, query: str, sources: Sequence[Source], k: int = 10, *,
        window: tuple[float, float] | None = None, now: float | None = None,
        min_cosine: float | None = None, include_faded: bool = False, words_pass: bool = False,
    ) -> list[SearchHit]:
        """Hybrid search with an embedded query: vector KNN and two FTS5 indexes, fused by `ranking.fuse`.

        Notes unused for long (for their importance) have faded and are left out unless include_faded.
        With `words_pass`, a document that holds a query word (or its stem) passes `min_cosine` too.
        """
        found = await self.candidates(scope_id, qvec, query, sources, window=window, now=now)
        candidates = found.candidates
        if min_cosine is not None:
            candidates = [c for c in candidates
                          if c.cosine >= min_cosine or (words_pass and (c.words > 0 or c.trigram > 0))]
        if not include_faded:
            moment = time.time() if now is None else now
            candidates = [c for c in candidates if not _faded(found.docs[c.doc_id], moment)]
        by_id = {c.doc_id: c for c in candidates}
        return [_hit(found.docs[doc_id], by_id[doc_id], score) for doc_id, score in fuse(candidates, self.weights)[:k]]

    async def candidates(
        self, scope_id: int, qvec: np.ndarray, query: str, sources: Sequence[Source], *,
        window: tuple[float, float] | None = None, now: float | None = None,
    ) -> Found:
        """Collect each retriever's candidates with all their raw signals (retrievers weighted 0 are skipped)."""
        now = time.time() if now is None else now
        where = Where(scope_id, tuple(sources), window)
        periods = search_text.named_periods(query)
        async with self.db.reading() as tx:
            lexical_on = self.weights.words > 0 or self.weights.trigram > 0
            words = search_text.content_words(query)[:MAX_QUERY_WORDS] if lexical_on else []
            size, counts = await scope_counts(tx, words, where)
            words = search_text.distinctive(words, counts, size)
            every: dict[int, float] = {}  # the cosine of each document, where a small scope compared them all
            if size >= self.aside_from_docs:
                # The vector search (the longest statement) runs on the second connection meanwhile.
                cosines, lexical = await asyncio.gather(self._knn_aside(qvec, where, size),
                                                        self._lexical(tx, words, where, size))
            else:
                vector_on = self.weights.vector > 0
                if not vector_on:
                    cosines = {}
                elif size <= vectors.EXACT_UP_TO:  # a small scope: every full vector compared, exactly
                    every = await scope_cosines(tx, where, _checked(qvec, self.embedder.dim), self.embedder.name)
                    cosines = vectors.rescored(every, CANDIDATES)
                else:
                    cosines = await self._knn(tx, qvec, where, coarse=vectors.coarse(size))
                lexical = await self._lexical(tx, words, where, size)
            ids = set(cosines) | set(lexical["fts_words"]) | set(lexical["fts_trigram"])
            docs = await documents(tx, ids)
            cosines.update({d: every[d] for d in ids if d not in cosines and d in every})  # read already
            cosines.update(await stored_cosines(tx, [d for d in ids if d not in cosines], qvec, self.embedder.name))
            related = await related_docs(tx, docs)
        candidates = [
            Candidate(
                doc_id=d, cosine=cosines.get(d, 0.0), words=lexical["fts_words"].get(d, 0.0),
                trigram=lexical["fts_trigram"].get(d, 0.0), age_days=(now - doc.created_at) / 86400.0,
                importance=doc.importance, related=tuple(sorted(related.get(d, ()))),
                dated=any(start <= doc.created_at < end for start, end in periods),
            )
            for d, doc in docs.items()
        ]
        return Found(candidates, docs)

    async def _lexical(self, tx: Tx, words: list[str], where: Where, total: int) -> dict[str, dict[int, float]]:
        """bm25 of the best matches in each full-text index, for the query's distinctive words.

        total: the scope's documents of the searched sources (`_scope_counts`).
        """
        out: dict[str, dict[int, float]] = {"fts_words": {}, "fts_trigram": {}}
        if self.weights.words > 0 and words:
            out["fts_words"] = await self._words(tx, words, where, total)
        if self.weights.trigram > 0 and (stems := search_text.trigram_stems(words)):
            out["fts_trigram"] = await self._trigram(tx, stems, where, total)
        return out

    async def _words(self, tx: Tx, words: list[str], where: Where, total: int) -> dict[int, float]:
        """bm25 of the scope's documents that hold a query word, and more for each two-word phrase of the
        query they hold, from the scope's own statistics (`search_text.matched_bm25`).

        FTS5's bm25() would count every term over all users' documents first (0.6 ms of a 6 ms search
        at 100k notes over 100 users), and let one user's memory change how another's is ranked. So
        the word index only finds the scope's documents with each word and phrase here, unranked.
        Each counts once per document: notes are a sentence or two, where a word rarely repeats.
        """
        terms = [*words, *search_text.word_pairs(words)]
        parts = [matching("fts_words", "?, d.id, length(d.text)", where, f'"{term}"', term) for term in terms]
        rows = await tx.fetchall(" UNION ALL ".join(sql for sql, _ in parts),
                                 [arg for _, args in parts for arg in args])
        if not rows:
            return {}
        holding: dict[str, dict[int, int]] = {}
        for term, doc, length in rows:
            holding.setdefault(term, {})[doc] = length
        scores = search_text.matched_bm25(holding, total, await self._mean_length(tx, where, total))
        return best(scores)

    async def _trigram(self, tx: Tx, stems: list[str], where: Where, total: int) -> dict[int, float]:
        """bm25 of the scope's documents that hold a stem as a substring, from the scope's own statistics.

        FTS5's bm25() counts every phrase over the whole table, all users' documents, before it ranks
        one user's matches; for trigram phrases that was most of a search's time at 100k notes over 100
        users. So the trigram index only finds the scope's matches here, and `search_text.bm25` scores them
        with the scope's document count and mean length (the same formula, k1 1.2, b 0.75).
        """
        rows = await tx.fetchall(*matching("fts_trigram", "d.id, d.text", where, search_text.any_of(stems)))
        if not rows:
            return {}
        mean_length = await self._mean_length(tx, where, total)
        scores = search_text.bm25(stems, {doc: text for doc, text in rows}, total, mean_length)
        return best(scores)

    async def _mean_length(self, tx: Tx, where: Where, total: int) -> float:
        """Mean length in characters of the scope's documents of these sources, recounted when their number moved by 5%.

        total: their number (`_scope_counts`, in the same read block, so the same documents are summed).
        """
        key = (where.scope_id, where.sources)
        cached = self._lengths.get(key)
        if cached is None or abs(total - cached[0]) > 0.05 * cached[0]:
            (chars,) = await tx.fetchone(
                f"SELECT total(length(text)) FROM docs WHERE scope_id = ?"
                f" AND source IN ({','.join('?' * len(where.sources))})", (where.scope_id, *where.sources))
            cached = (total, float(chars) / max(total, 1))
            self._lengths[key] = cached
        return cached[1]

    async def _knn_aside(self, qvec: np.ndarray, where: Where, size: int) -> dict[int, float]:
        """`_knn` on the database's second connection, so it runs beside the full-text queries."""
        if self.weights.vector <= 0:
            return {}
        async with self.db.aside() as tx:
            return await self._knn(tx, qvec, where, coarse=vectors.coarse(size))

    async def _knn(self, tx: Tx, qvec: np.ndarray, where: Where, k: int = CANDIDATES,
                   coarse: int = vectors.COARSE) -> dict[int, float]:
        """Cosine of the k nearest documents: the `coarse` nearest by Hamming distance within the scope partition
        (sqlite-vec KNN over bit vectors), rescored by their full vectors (`memory.vectors`)."""
        marks = ",".join("?" * len(where.sources))
        time_sql = "" if where.window is None else " AND created_at >= ? AND created_at < ?"
        rows = await tx.fetchall(
            f"SELECT doc_id FROM vec_docs WHERE embedding MATCH vec_bit(?) AND k = ? AND scope_id = ?"
            f" AND source IN ({marks}){time_sql}",
            (vectors.bits(_checked(qvec, self.embedder.dim), await self.center(tx)), max(k, coarse),
             where.scope_id, *where.sources, *(where.window or ())),
        )
        cosines = await stored_cosines(tx, [doc for (doc,) in rows], qvec, self.embedder.name)
        return vectors.rescored(cosines, k)


def _hit(doc: IndexedDoc, c: Candidate, score: float) -> SearchHit:
    """A search hit with its fused score and raw signals."""
    return SearchHit(
        source=doc.source, item_id=doc.item_id, text=doc.text, score=score,
        created_at=ts(doc.created_at),  # type: ignore[arg-type]
        components=Components(cosine=c.cosine, words=c.words, trigram=c.trigram,
                              age_days=c.age_days, importance=doc.importance),
    )


def _faded(doc: IndexedDoc, now: float) -> bool:
    return doc.source == "note" and faded(doc.days_unused(now), doc.importance)


async def touch(tx: Tx, items: Sequence[tuple[str, int]], now: float) -> None:
    """Record that items (source, item id) were used in a prompt or recalled: their fading starts over."""
    await tx.executemany("UPDATE docs SET last_used_at = ? WHERE source = ? AND item_id = ?",
                         [(now, source, item_id) for source, item_id in items])


def _checked(vector: np.ndarray, dim: int) -> np.ndarray:
    vec = np.asarray(vector, dtype=np.float32).reshape(-1)
    if vec.shape[0] != dim:
        raise EmbeddingFailed(f"vector has {vec.shape[0]} dimensions, the index has {dim}")
    return vec
