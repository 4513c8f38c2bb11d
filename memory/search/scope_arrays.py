"""What the search keeps of a scope in process memory: its documents' ids, kinds, times, lengths and vectors
(and on PostgreSQL their lower-cased texts).

A scope is read from the database once, then kept. Every search first reads the scope's two change
counters (`scope_changes`, kept by triggers on `docs`, migration m040): when only `added` moved it reads the
documents added since, when `changed` moved (a document deleted or rewritten) it reads the scope again.
The triggers count every writer, another process or an erasure too, so a search never sees a deleted
document. Up to `exact_up_to` documents a scope keeps its float32 vectors and the vector search compares
them all; above, it keeps one bit per dimension (`memory.search.vectors`), ranks by Hamming distance and rescores
the nearest with the full vectors from the database. The cache is bounded in bytes, least recently used out.

On PostgreSQL a scope also keeps its documents' texts, lower-cased: the word parts of a query ("kino" in
"Kinoabend", what SQLite's trigram index finds) are looked up in them (`ScopeArrays.holding`). In the database that
is a case-insensitive match over every row of the scope per word part (1-3 ms each at 1,000 notes, measured with
EXPLAIN ANALYZE), pg_trgm is missing on many managed servers, and the held texts cost about a tenth of the vectors.

With the second signal on (`memory.search.use_signal`), a scope that keeps its float32 vectors keeps its documents'
USE vectors beside them (`ScopeArrays.use`; a document without one: zeros); a larger scope keeps none, and a German
query there reads its candidates' USE vectors from the database.
"""
from __future__ import annotations

import re
import sys
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from memory.models import SEARCHABLE, Source
from memory.storage.db import Tx

SOURCE_CODES: dict[str, int] = {source: code for code, source in enumerate(SEARCHABLE)}
CACHE_BYTES = 256 * 2**20  # what a process keeps of all scopes: about 160 scopes of 1k notes, or 100k notes' bits
# Documents whose float32 vectors a scope keeps and compares all, exactly, with no statement (docs/benchmarks.md, "10k
# notes of one person with both models"), while they take at most 1/FLOAT_SHARE of the cache: e5's and USE's 3.5 KB
# a document, 36 MB at 10k, 18.7k documents within the default budget (e5 alone: 20k, 31 MB).
EXACT_UP_TO = 20_000
FLOAT_SHARE = 4
DENSE_FROM = 10_000  # documents from which `ScopeArrays.locate` may use a table instead of a binary search
_CHUNK = 5000  # documents read per statement, so 100k notes' vectors never sit in Python at once


@dataclass(frozen=True)
class _Kinds:
    """A scope's documents of some sources: which they are, how many, their mean length."""

    mask: np.ndarray
    count: int
    mean_length: float


@dataclass
class ScopeArrays:
    """One scope's documents, in the order of their ids, as the search reads them."""

    added: int
    changed: int
    ids: np.ndarray  # int64, ascending
    sources: np.ndarray  # uint8, SOURCE_CODES
    created: np.ndarray  # float64, unix time
    lengths: np.ndarray  # float64, characters
    vectors: np.ndarray | None  # float32 (n, dim): scopes up to exact_up_to documents
    bits: np.ndarray | None  # uint64 (words, n): larger scopes; the sign of each dimension minus the centre
    texts: list[str] | None = None  # lower-cased, in the order of ids: on PostgreSQL (see the module's docstring)
    use: np.ndarray | None = None  # float32 (n, 512): USE's vectors, where `vectors` is kept and the signal is on

    @property
    def nbytes(self) -> int:
        """Bytes held."""
        held = (self.ids, self.sources, self.created, self.lengths, self.vectors, self.bits, self.dense, self._starts,
                self.use)
        return (sum(a.nbytes for a in held if a is not None) + sum(k.mask.nbytes for k in self._kinds.values())
                + self._text_bytes)

    def holding(self, part: str) -> np.ndarray:
        """Ids of the documents whose text holds part (lower-case) anywhere: what FTS5's trigram table finds for
        it as a phrase. Only where the texts are kept."""
        if self._starts is None:
            raise ValueError("this scope's texts are not kept")
        found = np.fromiter((m.start() for m in re.finditer(re.escape(part), self._joined)), np.int64)
        return self.ids[np.unique(np.searchsorted(self._starts, found, side="right") - 1)]

    def allowed(self, sources: Sequence[Source], window: tuple[float, float] | None = None) -> np.ndarray:
        """Which documents a search of these sources (created within window, when given) may see."""
        mask = self._of_kinds(sources).mask
        if window is not None:
            return mask & (self.created >= window[0]) & (self.created < window[1])
        return mask

    def counted(self, sources: Sequence[Source]) -> tuple[int, float]:
        """How many documents of these sources the scope holds (any time), and their mean length in characters."""
        kinds = self._of_kinds(sources)
        return kinds.count, kinds.mean_length

    def _of_kinds(self, sources: Sequence[Source]) -> _Kinds:
        """The scope's documents of these sources, worked out once for the arrays' lifetime."""
        key = tuple(sorted(set(sources)))
        if (kinds := self._kinds.get(key)) is None:
            mask = np.isin(self.sources, [SOURCE_CODES[s] for s in key])
            mask.flags.writeable = False
            count = int(mask.sum())
            kinds = self._kinds[key] = _Kinds(mask, count, float(self.lengths[mask].mean()) if count else 1.0)
        return kinds

    def sources_of(self, doc_ids: Iterable[int]) -> dict[int, Source]:
        """The source of each of doc_ids the scope holds."""
        at = self.locate(np.fromiter(doc_ids, np.int64))
        return {int(self.ids[i]): SEARCHABLE[code] for i, code in zip(at, self.sources[at]) if code < len(SEARCHABLE)}

    def locate(self, doc_ids: np.ndarray) -> np.ndarray:
        """Positions of doc_ids among the scope's documents; ids the scope does not hold are left out."""
        if self.dense is not None:  # ids close together: a table from id to position
            offset = doc_ids - self.ids[0]
            at = self.dense[offset[(offset >= 0) & (offset < len(self.dense))]]
            return at[at >= 0]
        at = np.searchsorted(self.ids, doc_ids)
        inside = at < len(self.ids)
        at, doc_ids = at[inside], doc_ids[inside]
        return at[self.ids[at] == doc_ids]

    def __post_init__(self) -> None:
        """A table from id to position (-1: not this scope's) when the ids span at most twice their number: one
        user's memory written mostly alone. Otherwise `locate` searches the sorted ids."""
        self._kinds: dict[tuple[str, ...], _Kinds] = {}  # see _of_kinds
        # The texts as one string, each after a NUL, and where each starts: what `holding` searches.
        self._joined = "".join("\0" + text for text in self.texts) if self.texts is not None else ""
        self._starts: np.ndarray | None = None if self.texts is None else np.cumsum(
            [0] + [len(text) + 1 for text in self.texts[:-1]], dtype=np.int64)
        self._text_bytes = sum(map(sys.getsizeof, self.texts or ())) + sys.getsizeof(self._joined)
        span = int(self.ids[-1] - self.ids[0]) + 1 if len(self.ids) else 0
        self.dense: np.ndarray | None = None
        if len(self.ids) >= DENSE_FROM and span <= 2 * len(self.ids):
            self.dense = np.full(span, -1, dtype=np.int32)
            self.dense[self.ids - self.ids[0]] = np.arange(len(self.ids), dtype=np.int32)


def query_bits(vector: np.ndarray, center: np.ndarray) -> np.ndarray:
    """The signs of vector - center as uint64 words (zero bits pad the last word), as a column of `ScopeArrays.bits`."""
    return _to_bits(np.asarray(vector, dtype=np.float32).reshape(1, -1), center)[:, 0]


def _to_bits(vectors: np.ndarray, center: np.ndarray) -> np.ndarray:
    """The signs of each row minus center, packed into uint64 words, one row of the result per word (columns:
    the vectors), so that a search reads each word of every document in one contiguous run."""
    signs = vectors > center
    pad = -signs.shape[1] % 64
    if pad:
        signs = np.pad(signs, ((0, 0), (0, pad)))
    return np.ascontiguousarray(np.packbits(signs, axis=1, bitorder="little").view(np.uint64).T)


def dot_rows(matrix: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Each row's dot product with q (float32), in the calling thread: numpy's einsum, not BLAS, whose threads each
    wait for a core on a busy machine (10k x 512 at load 9: 8 ms p50 by BLAS, under 1 ms by einsum)."""
    return np.einsum("ij,j->i", matrix, np.asarray(q, dtype=np.float32))


def highest(scores: np.ndarray, at: np.ndarray, k: int) -> np.ndarray:
    """Of the positions at (ascending), the k whose scores are highest, highest first; of equals, the first: what a
    stable sort of all of them gives, from a partition and a sort of the few at or above the k-th score."""
    if len(at) <= k:
        return at
    chosen = scores[at]
    kth = np.partition(chosen, len(chosen) - k)[len(chosen) - k]
    at = at[chosen >= kth]
    return at[np.argsort(-scores[at], kind="stable")[:k]]


def hamming_nearest(arrays: ScopeArrays, allowed: np.ndarray, qbits: np.ndarray, k: int) -> np.ndarray:
    """Ids of the k allowed documents whose bits differ least from qbits (ties: any order)."""
    assert arrays.bits is not None
    distances = np.zeros(arrays.bits.shape[1], dtype=np.uint16)
    for word, q in zip(arrays.bits, qbits):
        distances += np.bitwise_count(word ^ q)
    distances[~allowed] = np.iinfo(np.uint16).max
    count = int(allowed.sum())
    if count > k:
        return arrays.ids[np.argpartition(distances, k)[:k]]
    return arrays.ids[allowed]


class ScopeCache:
    """The scopes' arrays a process keeps, bounded by bytes; `get` brings one up to date and returns it."""

    def __init__(self, model: str, dim: int, budget: int = CACHE_BYTES, exact_up_to: int = EXACT_UP_TO,
                 use_dim: int = 0, chunk: int = _CHUNK) -> None:
        self.model, self.dim, self.budget, self.exact_up_to, self.chunk = model, dim, budget, exact_up_to, chunk
        self.use_dim = use_dim  # USE's dimensions when the second signal is on, else 0 (`ScopeArrays.use`)
        self._scopes: OrderedDict[int, ScopeArrays] = OrderedDict()
        self._counted = False  # whether the database has m040's counters (a database not yet migrated: nothing kept)

    async def get(self, tx: Tx, scope_id: int, center: np.ndarray) -> ScopeArrays:
        """The scope's documents as committed now (counters read first: a write in between reloads next time)."""
        if not self._counted:
            self._counted = await tx.has_table("scope_changes")
            if not self._counted:
                return await self._read(tx, scope_id, center, after=0, into=None)
        row = await tx.fetchone("SELECT added, changed FROM scope_changes WHERE scope_id = ?", (scope_id,))
        added, changed = (int(row[0]), int(row[1])) if row else (0, 0)
        have = self._scopes.get(scope_id)
        if have is not None and (have.added, have.changed) == (added, changed):
            self._scopes.move_to_end(scope_id)
            return have
        if have is None or have.changed != changed:
            have = await self._read(tx, scope_id, center, after=0, into=None)
        else:
            have = await self._read(tx, scope_id, center, after=int(have.ids[-1]) if len(have.ids) else 0, into=have)
        have.added, have.changed = added, changed
        self._scopes.pop(scope_id, None)
        if have.nbytes <= self.budget:
            self._scopes[scope_id] = have
            while sum(a.nbytes for a in self._scopes.values()) > self.budget:
                self._scopes.popitem(last=False)
        return have

    def kept(self, scope_id: int) -> ScopeArrays | None:
        """What is kept of a scope, if anything (not brought up to date)."""
        return self._scopes.get(scope_id)

    def held(self) -> list[int]:
        """The scopes kept, the least recently searched first."""
        return list(self._scopes)

    def forget(self, scope_id: int) -> None:
        """Drop what is kept of one scope, e.g. after its memory was deleted."""
        self._scopes.pop(scope_id, None)

    def keeps_floats(self, size: int) -> bool:
        """Whether a scope of size documents keeps its float32 vectors (e5's, and USE's where the signal is on):
        up to `exact_up_to` documents, while they take at most 1/`FLOAT_SHARE` of the budget."""
        return size <= self.exact_up_to and size * 4 * (self.dim + self.use_dim) * FLOAT_SHARE <= self.budget

    async def _read(self, tx: Tx, scope_id: int, center: np.ndarray, after: int,
                    into: ScopeArrays | None) -> ScopeArrays:
        """The scope's documents with ids above `after`, appended to `into` (or a new one). Read a chunk at a time,
        float32 while the scope may keep them, each chunk's bits from the chunk that passes the limit on."""
        size = len(into.ids) if into is not None else 0
        exact = into is None or into.vectors is not None
        keep_texts = tx.dialect == "postgres"
        texts: list[str] = list(into.texts or ()) if into is not None else []
        parts: list[tuple[np.ndarray, ...]] = []
        if into is not None:
            held_vectors = into.vectors if into.vectors is not None else into.bits
            assert held_vectors is not None
            parts.append((into.ids, into.sources, into.created, into.lengths, held_vectors))
        use = [into.use] if into is not None and into.use is not None else []
        while rows := await tx.fetchall(
            f"SELECT d.id, d.source, d.created_at, length(d.text), e.vector{', d.text' if keep_texts else ''}"
            f"{', u.vector' if self.use_dim else ''} FROM docs d LEFT JOIN embedding_cache e"
            " ON e.model = ? AND e.purpose = 'document' AND e.content_hash = d.content_hash"
            f"{' LEFT JOIN use_vectors u ON u.doc_id = d.id' if self.use_dim else ''}"
            " WHERE d.scope_id = ? AND d.id > ? ORDER BY d.id LIMIT ?", (self.model, scope_id, after, self.chunk)):
            if keep_texts:
                texts += [r[5].lower() for r in rows]  # Unicode's case, whatever the server's locale
            after, size = rows[-1][0], size + len(rows)
            zero = bytes(2 * self.dim)  # a document without a full vector (the integrity check names it)
            halves = np.frombuffer(b"".join(r[4] or zero for r in rows), dtype=np.float16).reshape(len(rows), self.dim)
            parts.append((np.fromiter((r[0] for r in rows), np.int64, len(rows)),
                          np.fromiter((SOURCE_CODES.get(r[1], 255) for r in rows), np.uint8, len(rows)),
                          np.fromiter((r[2] for r in rows), np.float64, len(rows)),
                          np.fromiter((r[3] for r in rows), np.float64, len(rows)),
                          halves.astype(np.float32)))
            if exact and not self.keeps_floats(size):  # grown past the limit: from now on the bits
                exact, use = False, []
                parts = [(*part[:4], _to_bits(part[4], center)) for part in parts]
            elif not exact:
                parts[-1] = (*parts[-1][:4], _to_bits(parts[-1][4], center))
            elif self.use_dim:
                use.append(self._use_rows([r[-1] for r in rows]))
        held = texts if keep_texts else None
        if not parts:
            return ScopeArrays(0, 0, np.zeros(0, np.int64), np.zeros(0, np.uint8), np.zeros(0), np.zeros(0),
                               np.zeros((0, self.dim), np.float32), None, held)
        ids, sources, created, lengths = (np.concatenate(c) for c in list(zip(*parts))[:4])
        if exact:
            kept_use = np.concatenate(use) if self.use_dim and use else None
            return ScopeArrays(0, 0, ids, sources, created, lengths, np.concatenate([p[4] for p in parts]), None,
                               held, kept_use)
        return ScopeArrays(0, 0, ids, sources, created, lengths, None, np.concatenate([p[4] for p in parts], axis=1),
                           held)

    def _use_rows(self, blobs: list[bytes | None]) -> np.ndarray:
        """USE vectors of a chunk of documents as float32; zeros for a document without one (cosine 0)."""
        zero = bytes(2 * self.use_dim)
        joined = b"".join(blob or zero for blob in blobs)
        return np.frombuffer(joined, dtype=np.float16).reshape(len(blobs), self.use_dim).astype(np.float32)
