"""The search index: one row in `docs`, its vector in `vec_docs`, its words in two FTS5 tables.

Callers write and delete inside their own transaction, so an item and its index entries
change together or not at all.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Sequence

import numpy as np

from memory.errors import EmbeddingFailed, ModelMismatch
from memory.models import Components, SearchHit, Source, ts
from memory.search import search_text, vectors
from memory.search.embed_batches import EmbedBatcher
from memory.search.embedder import Embedder, Purpose
from memory.search.language import is_german
from memory.search.mismatch import mismatch_text
from memory.search.ranking import Candidate, Weights, faded, fuse
from memory.search.retrievers import (
    CANDIDATES,
    Found,
    IndexedDoc,
    best,
    documents,
    holders,
    related_of,
    stored_cosines,
    whole_scope,
)
from memory.search.scope_arrays import (
    CACHE_BYTES,
    EXACT_UP_TO,
    ScopeArrays,
    ScopeCache,
    dot_rows,
    hamming_nearest,
    highest,
    query_bits,
)
from memory.search.use_signal import UseSignal, nearest
from memory.search.use_signal import stored_cosines as use_cosines
from memory.storage.db import Database, Tx

log = logging.getLogger(__name__)

# Words of a query the full-text indexes look for, the first ones: a long message (up to 4,000
# characters) holds hundreds, and each becomes a term of one statement (SQLite allows 500 parts of
# a UNION and 2,000 result columns). The vector search still reads all of it.
MAX_QUERY_WORDS = 64
TRIGRAM_RECOUNTED = 3 * CANDIDATES  # trigram holders of a small scope whose stems are counted (`SearchIndex._trigram`)
RECOUNTED_UP_TO = 3000  # documents of a scope small enough for it


class SearchIndex:
    """Embeds, stores and searches documents of every searchable kind."""

    def __init__(
        self, db: Database, embedder: Embedder, weights: Weights | None = None, *,
        cache_bytes: int = CACHE_BYTES, exact_up_to: int = EXACT_UP_TO, second: UseSignal | None = None,
    ) -> None:
        self.db, self.embedder, self.weights = db, embedder, weights or Weights()
        self.second = second  # USE beside e5 (`memory.search.use_signal`), None when off
        self.scopes = ScopeCache(embedder.name, embedder.dim, cache_bytes, exact_up_to, second.dim if second else 0)
        self.batcher = EmbedBatcher(embedder)
        self._center: np.ndarray | None = None  # the recorded model's centre (`memory.search.vectors`)

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
                    await tx.execute(vectors.vec_table("vec_docs", dim, tx.dialect))
                if center is not None:
                    await vectors.save_center(tx, center)
            if not rows:
                return
        if rows.get("embedding_model") != name or rows.get("embedding_dim") != str(dim):
            raise ModelMismatch(mismatch_text(self.db.shown(), rows.get("embedding_model") or "?",
                                              rows.get("embedding_dim") or "?", name, dim))

    async def center(self, tx: Tx) -> np.ndarray:
        """The recorded model's centre (read once, in tx; `ensure_model` records it)."""
        if self._center is None:
            self._center = await vectors.load_center(tx)
            if self._center is None:
                raise ModelMismatch(f"The memory in {self.db.shown()} has no centre for its model; "
                                    "reopen it to record one.")
        return self._center

    async def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        """Embed texts off the event loop, in batches shared with concurrent turns (`memory.search.embed_batches`); a
        document already stored with this model is read from the embedding cache, never embedded again. Documents get
        their USE vector meanwhile where the second signal is on (`UseSignal.beside`; `add` stores it)."""
        if purpose == "document" and self.second is not None and texts:
            return await self.second.beside(texts, self._embed(texts, purpose))
        return await self._embed(texts, purpose)

    async def _embed(self, texts: Sequence[str], purpose: Purpose) -> np.ndarray:
        """`embed`'s e5 part."""
        hashes = [search_text.content_hash(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        if purpose == "document" and hashes:
            async with self.db.reading() as tx:
                marks = ",".join("?" * len(set(hashes)))
                rows = await tx.fetchall(f"SELECT content_hash, vector FROM embedding_cache WHERE model = ? AND"
                                         f" purpose = ? AND content_hash IN ({marks})",
                                         (self.embedder.name, purpose, *set(hashes)))
            found = {h: vectors.from_half(v) for h, v in rows}
        missing = list(dict.fromkeys(h for h in hashes if h not in found))
        if missing:
            by_hash = dict(zip(hashes, texts))
            embedded = await self.batcher.embed([by_hash[h] for h in missing], purpose)
            if purpose == "document":  # a document's vector is what the cache will give back: float16
                embedded = embedded.astype(np.float16).astype(np.float32)
            # Not written to the embedding cache here: `add` and `update` keep a document's vector in the same
            # transaction as the document (one write less per message); the batcher keeps it meanwhile.
            found.update(zip(missing, embedded))
        return np.stack([found[h] for h in hashes]) if hashes else np.zeros((0, self.embedder.dim), np.float32)

    async def add(
        self, tx: Tx, scope_id: int, source: Source, item_id: int, text: str,
        vector: np.ndarray, created_at: float, importance: int = 5, entered_at: float | None = None,
        embedded: str = "", second: bool = True,
    ) -> int:
        """Index one item; returns the document id. entered_at: when it entered the memory, where later than
        created_at (an imported note; ranking and fading count from it). embedded: the text its vectors were made of,
        where not its own (a message in context, `memory.search.turn_context`); the content hash is that text's.
        second: False where the caller stores its batch's USE vectors (`add_second`)."""
        embedded = embedded or text
        doc_id = await tx.execute(
            "INSERT INTO docs(scope_id, source, item_id, text, content_hash, importance, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (scope_id, source, item_id, text, search_text.content_hash(embedded), importance, created_at))
        if entered_at is not None:
            await tx.execute("UPDATE docs SET entered_at = ? WHERE id = ?", (entered_at, doc_id))
        await tx.execute(
            "INSERT INTO vec_docs(doc_id, scope_id, source, created_at, embedding) VALUES (?, ?, ?, ?, vec_bit(?))",
            (doc_id, scope_id, source, created_at,
             vectors.bits(_checked(vector, self.embedder.dim), await self.center(tx))))
        await self._keep(tx, embedded, vector)
        if self.second is not None and second:
            await self.second.store(tx, [(doc_id, embedded)])
        return doc_id

    async def add_second(self, tx: Tx, docs: Sequence[tuple[int, str]]) -> None:
        """Store the USE vectors of a batch's documents (doc id, text) in one statement."""
        if self.second is not None:
            await self.second.store(tx, docs)

    async def _keep(self, tx: Tx, text: str, vector: np.ndarray) -> None:
        """Keep a document's full vector in the embedding cache (`embed` put it there, unless it came elsewhere)."""
        await tx.execute("INSERT OR IGNORE INTO embedding_cache(model, purpose, content_hash, vector)"
                         " VALUES (?, 'document', ?, ?)",
                         (self.embedder.name, search_text.content_hash(text), vectors.half(vector)))

    async def update(self, tx: Tx, doc_id: int, text: str, vector: np.ndarray, importance: int | None = None,
                     embedded: str = "") -> None:
        """Replace a document's text and vector (and importance, when given; embedded: as in `add`); its USE vector is
        replaced too, or, with the second signal off, deleted: the old text's would still find it when on again."""
        await tx.execute(
            "UPDATE docs SET text = ?, content_hash = ?, importance = COALESCE(?, importance) WHERE id = ?",
            (text, search_text.content_hash(embedded or text), importance, doc_id),
        )
        # vec0 (0.1.9) takes a bit vector in an INSERT only: an UPDATE loses vec_bit's type.
        await tx.execute("DELETE FROM vec_docs WHERE doc_id = ?", (doc_id,))
        await tx.execute(
            "INSERT INTO vec_docs(doc_id, scope_id, source, created_at, embedding)"
            " SELECT id, scope_id, source, created_at, vec_bit(?) FROM docs WHERE id = ?",
            (vectors.bits(_checked(vector, self.embedder.dim), await self.center(tx)), doc_id))
        await self._keep(tx, embedded or text, vector)
        if self.second is not None:
            await self.second.store(tx, [(doc_id, embedded or text)])
        else:  # `mnemo reindex` gives it a vector of its new text once the signal is on
            await tx.execute("DELETE FROM use_vectors WHERE doc_id = ?", (doc_id,))

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
            arrays = await self.scopes.get(tx, scope_id, await self.center(tx))
            cosines, _every = await self._vector(tx, arrays, arrays.allowed((source,)), vector, k)
            rows = await tx.fetchall(f"SELECT id, item_id FROM docs WHERE id IN ({','.join('?' * len(cosines))})",
                                     tuple(cosines))
        items = dict(rows)
        ranked = sorted(cosines.items(), key=lambda pair: pair[1], reverse=True)
        return [(doc, items[doc], cosine) for doc, cosine in ranked if doc in items]

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
        self, scope_id: int, qvec: np.ndarray | None, query: str, sources: Sequence[Source], k: int = 10, *,
        window: tuple[float, float] | None = None, now: float | None = None,
        min_cosine: float | None = None, include_faded: bool = False, words_pass: bool = False,
    ) -> list[SearchHit]:
        """Hybrid search with an embedded query: vector KNN and two FTS5 indexes, fused by `ranking.fuse`.

        Notes unused for long (for their importance) have faded and are left out unless include_faded.
        With `words_pass`, a document that holds a query word (or its stem) passes `min_cosine` too. Without a
        query vector (the embedding server is down) it finds by words only.
        """
        words_pass = words_pass or qvec is None
        found = await self.candidates(scope_id, qvec, query, sources, window=window, now=now)
        candidates = found.candidates
        if min_cosine is not None:
            candidates = [c for c in candidates
                          if c.cosine >= min_cosine or (words_pass and (c.words > 0 or c.trigram > 0))]
        if not include_faded:
            moment = time.time() if now is None else now
            candidates = [c for c in candidates if not _faded(found.docs[c.doc_id], moment)]
        by_id = {c.doc_id: c for c in candidates}
        ranked = fuse(candidates, self.weights, found.second)
        return [_hit(found.docs[doc_id], by_id[doc_id], score, found.second) for doc_id, score in ranked[:k]]

    async def candidates(
        self, scope_id: int, qvec: np.ndarray | None, query: str, sources: Sequence[Source], *,
        window: tuple[float, float] | None = None, now: float | None = None,
    ) -> Found:
        """Collect each retriever's candidates with all their raw signals (retrievers weighted 0 are skipped)."""
        now = time.time() if now is None else now
        periods = search_text.named_periods(query)
        second = self.second is not None and self.weights.use > 0 and is_german(query)  # the measured gate
        use_q = (await self.second.vectors([query]))[0] if second and self.second is not None else None
        async with self.db.reading() as tx:
            arrays = await self.scopes.get(tx, scope_id, await self.center(tx))
            anytime = arrays.allowed(sources)
            allowed = anytime if window is None else arrays.allowed(sources, window)
            # The full-text statements go first: the vector search's arithmetic runs while the database works on them.
            words = search_text.content_words(query)[:MAX_QUERY_WORDS]
            lexical, vector = await asyncio.gather(
                self._lexical(tx, scope_id, words, sources, arrays, anytime, allowed),
                self._vector(tx, arrays, allowed, qvec, CANDIDATES, on=self.weights.vector > 0))
            cosines, every = vector  # every: each document's cosine, where the scope compared them all
            use_near, use_every = nearest(arrays.ids, arrays.use, allowed, use_q, CANDIDATES,  # USE's own nearest
                                          self.second.own_up_to if self.second is not None else 0)
            ids = set(cosines) | set(lexical["fts_words"]) | set(lexical["fts_trigram"]) | set(use_near)
            rest = np.array(sorted(d for d in ids if d not in cosines), dtype=np.int64)
            if len(every):  # read already
                at = arrays.locate(rest)
                cosines.update(zip(arrays.ids[at].tolist(), every[at].tolist()))
            unread = [] if len(every) else rest.tolist()
            docs, related, use, stored = await asyncio.gather(  # the statements one after another, no wait between
                documents(tx, ids), related_of(tx, arrays.sources_of(ids)),
                self._use_of(tx, arrays, ids, use_q, use_every), stored_cosines(tx, unread, qvec, self.embedder.name))
            cosines.update(stored)
        candidates = [
            Candidate(
                doc_id=d, cosine=cosines.get(d, 0.0), words=lexical["fts_words"].get(d, 0.0),
                trigram=lexical["fts_trigram"].get(d, 0.0), age_days=(now - doc.fresh_from) / 86400.0,
                importance=doc.importance, related=tuple(sorted(related.get(d, ()))),
                dated=any(start <= doc.created_at < end for start, end in periods), use=use.get(d, 0.0),
            )
            for d, doc in docs.items()
        ]
        return Found(candidates, docs, second=use_q is not None)

    @staticmethod
    async def _use_of(tx: Tx, arrays: ScopeArrays, ids: set[int], use_q: np.ndarray | None,
                      every: np.ndarray) -> dict[int, float]:
        """USE's cosine of each candidate (none without a USE query vector): from the scope's USE matrix where it
        keeps one, else from the database."""
        if use_q is None:
            return {}
        if arrays.use is None:
            return await use_cosines(tx, sorted(ids), use_q)
        at = arrays.locate(np.array(sorted(ids), dtype=np.int64))
        cosines = every[at] if len(every) else dot_rows(arrays.use[at], use_q)  # a large scope: its candidates only
        return dict(zip(arrays.ids[at].tolist(), cosines.tolist()))

    async def _vector(self, tx: Tx, arrays: ScopeArrays, allowed: np.ndarray, qvec: np.ndarray | None,
                      k: int, on: bool = True) -> tuple[dict[int, float], np.ndarray]:
        """Cosine of the k nearest allowed documents, and every document's cosine where the scope keeps float32
        vectors (else empty): those compared all, exactly; bits ranked by Hamming distance, the nearest
        `vectors.coarse` rescored by their full vectors from the database."""
        if not on or qvec is None:
            return {}, np.zeros(0, np.float32)
        q = _checked(qvec, self.embedder.dim)
        if arrays.vectors is not None:
            every = dot_rows(arrays.vectors, q)
            at = highest(every, np.flatnonzero(allowed), k)  # of equals, the oldest (as the database's order gave them)
            return {int(arrays.ids[i]): float(every[i]) for i in at}, every
        nearest = await asyncio.to_thread(hamming_nearest, arrays, allowed, query_bits(q, await self.center(tx)),
                                          max(k, vectors.coarse(len(arrays.ids))))
        cosines = await stored_cosines(tx, nearest.tolist(), q, self.embedder.name)
        return vectors.rescored(cosines, k), np.zeros(0, np.float32)

    async def _lexical(self, tx: Tx, scope_id: int, words: list[str], sources: Sequence[Source], arrays: ScopeArrays,
                       anytime: np.ndarray, allowed: np.ndarray) -> dict[str, dict[int, float]]:
        """bm25 of the best matches in each full-text index for the query's distinctive words, from the scope's
        own statistics (`search_text.matched_bm25`).

        FTS5's bm25() would count every term over all users' documents first, and let one user's memory
        change how another's is ranked. So the indexes only name the scope's documents holding each word,
        two-word phrase of the query and stem (`retrievers.holders`); the scope's arrays say which of them
        the search may see and how long they are. A word in more than a tenth of the searched documents
        (any time) is left out (`search_text.distinctive`); its ids are read only up to that limit.
        """
        out: dict[str, dict[int, float]] = {"fts_words": {}, "fts_trigram": {}}
        if not words or (self.weights.words <= 0 and self.weights.trigram <= 0):
            return out
        total, mean = arrays.counted(sources)
        cap = int(search_text.common_limit(total)) + 1
        size = len(arrays.ids)
        # Where the database reads the scope's every row for the first statement anyway (`retrievers.whole_scope`:
        # PostgreSQL, a small scope), each term comes back whole, and the query's two-word phrases are asked for
        # in it too: unless a common word drops out between them, no second statement is needed.
        whole = whole_scope(tx, size)
        guessed = search_text.word_pairs(words) if whole and self.weights.words > 0 else []
        found = dict(zip(words + guessed, await holders(tx, scope_id, [("fts_words", t) for t in words + guessed],
                                                        -1 if whole else cap, size)))
        # Words read up to the cap whose ids the search may not all see: more to read before they are known common
        # (one statement for all of them).
        again = [w for w in words if not whole and len(found[w]) >= cap
                 and len(self._seen(arrays, found[w], anytime)) < cap]
        if again:
            found.update(zip(again, await holders(tx, scope_id, [("fts_words", w) for w in again], size=size)))
        words = search_text.distinctive(words, {w: len(self._seen(arrays, found[w], anytime)) for w in words}, total)
        # One statement more: the ids of words read only up to the cap (when every word is common), of the query's
        # two-word phrases not read yet and of its stems as substrings (PostgreSQL: from the scope's kept texts).
        capped = [w for w in words if len(found[w]) >= cap and not whole]
        pairs = search_text.word_pairs(words) if self.weights.words > 0 else []
        stems = search_text.trigram_stems(words) if self.weights.trigram > 0 else []
        in_texts = arrays.texts is not None
        unread = capped + [p for p in pairs if p not in found]
        more = await holders(tx, scope_id, [("fts_words", t) for t in unread]
                             + [("fts_trigram", t) for t in stems if not in_texts], size=size)
        found.update(zip(unread, more))
        parts = [arrays.holding(stem) for stem in stems] if in_texts else more[len(unread):]
        if self.weights.words > 0:
            seen = [self._seen(arrays, found[t], allowed) for t in words + pairs]
            out["fts_words"] = best(arrays.ids, search_text.matched_bm25(seen, arrays.lengths, total, mean))
        if stems:
            seen = [self._seen(arrays, ids, allowed) for ids in parts]
            out["fts_trigram"] = await self._trigram(tx, stems, seen, arrays, total, mean)
        return out

    @staticmethod
    async def _trigram(tx: Tx, stems: list[str], seen: list[np.ndarray], arrays: ScopeArrays, total: int,
                       mean: float) -> dict[int, float]:
        """bm25 of the stems as substrings. Every holder is scored as if it held each stem once; in a small scope (up
        to `RECOUNTED_UP_TO` documents) the best `TRIGRAM_RECOUNTED` are then read and scored by how often each stem
        occurs in them (`search_text.counted_bm25`: FTS5's bm25 with the scope's statistics), because long messages
        repeat a stem (LoCoMo lost 0.002 of any@5 and of MRR without it). Above `RECOUNTED_UP_TO`, the count costs
        more (3-5 ms at 100k notes) than it can change among short notes."""
        trigrams = np.maximum(arrays.lengths - 2, 1)  # the trigram index counts a text's trigrams
        once = search_text.matched_bm25(seen, trigrams, total, mean - 2)
        if len(arrays.ids) > RECOUNTED_UP_TO:
            return best(arrays.ids, once)
        first = best(arrays.ids, once, TRIGRAM_RECOUNTED)
        if arrays.texts is not None:
            texts = {doc: arrays.texts[at] for doc, at in zip(first, arrays.locate(np.array(list(first), np.int64)))}
        else:
            texts = dict(await tx.fetchall("SELECT d.id, d.text FROM json_each(?) j JOIN docs d ON d.id = j.value",
                                           (json.dumps(list(first)),)))
        scores = search_text.counted_bm25(stems, texts, [len(at) for at in seen], total, mean)
        return {doc: score for doc, score in sorted(scores.items(), key=lambda pair: pair[1], reverse=True)[:CANDIDATES]
                if score > 0}

    @staticmethod
    def _seen(arrays: ScopeArrays, doc_ids: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        """Positions of the documents among doc_ids that the search may see."""
        at = arrays.locate(doc_ids)
        return at[allowed[at]]


def _hit(doc: IndexedDoc, c: Candidate, score: float, second: bool = False) -> SearchHit:
    """A search hit with its fused score and raw signals (`second`: USE joined the query, its cosine is kept)."""
    return SearchHit(
        source=doc.source, item_id=doc.item_id, text=doc.text, score=score,
        created_at=ts(doc.created_at),  # type: ignore[arg-type]
        components=Components(cosine=c.cosine, words=c.words, trigram=c.trigram,
                              age_days=c.age_days, importance=doc.importance, second=c.use if second else None),
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
