"""The SQL behind a search: full-text matches within one scope, the documents themselves, their stored vectors
and their context (the messages around them)."""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memory.models import Source
from memory.search.ranking import Candidate
from memory.storage.db import Tx

CANDIDATES = 60  # per retriever, before fusion
CONTEXT_GAP_SECONDS = 3600.0  # messages further apart than this are not each other's context


@dataclass(frozen=True)
class IndexedDoc:
    """A search document as the index holds it."""

    doc_id: int
    source: Source
    item_id: int
    text: str
    created_at: float
    importance: int
    last_used_at: float | None = None
    entered_at: float | None = None  # when it entered the memory, if not when it was said (an imported note)

    @property
    def fresh_from(self) -> float:
        """When ranking and fading start counting: the day it entered the memory, else the day it was said."""
        return self.created_at if self.entered_at is None else self.entered_at

    def days_unused(self, now: float) -> float:
        """Days since the document entered the memory or was last used, whichever is later."""
        return (now - max(self.fresh_from, self.last_used_at or 0.0)) / 86400.0


@dataclass(frozen=True)
class Found:
    """Every retriever's candidates with their raw signals, and the documents they point to."""

    candidates: list[Candidate]
    docs: dict[int, IndexedDoc]
    second: bool = False  # the candidates carry USE's cosine (a German query, the second signal on)


def scope_range(scope_id: int) -> tuple[int, int]:
    """The full-text rowids of one scope's documents: `(scope_id << 32) + doc id` (migration m020 writes them)."""
    return scope_id << 32, (scope_id << 32) + (1 << 32) - 1


async def holders(tx: Tx, scope_id: int, terms: Sequence[tuple[str, str]], cap: int = -1,
                  size: int = 0) -> list[np.ndarray]:
    """For each (full-text table, term), the ids of the scope's documents a phrase match of the term finds there
    (at most cap).

    One statement. The rowid range restricts each match to the scope's entries, so FTS5 seeks past the
    other scopes' part of each term's list, and nothing is joined: the ids go back as one string per term.
    Which of them a search may see (kinds, window) the scope's arrays decide (`memory.search.scope_arrays`).
    size: how many documents the scope holds (PostgreSQL reads a small scope's rows once for all terms).
    """
    if not terms:
        return []
    if tx.dialect == "postgres":
        return await _pg_holders(tx, scope_id, terms, cap, size)
    low, high = scope_range(scope_id)
    parts = [f"(SELECT group_concat(id) FROM (SELECT rowid - ? AS id FROM {table} WHERE {table} MATCH ?"
             f" AND rowid BETWEEN ? AND ? LIMIT ?))" for table, _ in terms]
    row = await tx.fetchone("SELECT " + ", ".join(parts),
                            [arg for _, term in terms for arg in (low, f'"{term}"', low, high, cap)])
    return [np.array(found.split(","), dtype=np.int64) if found else np.zeros(0, np.int64) for found in row]


def whole_scope(tx: Tx, size: int) -> bool:
    """Whether `holders` reads a scope of `size` documents row by row: every term comes back whole whatever the cap,
    and a few terms more cost little (PostgreSQL, up to `ONE_PASS_UP_TO` documents)."""
    return tx.dialect == "postgres" and size <= ONE_PASS_UP_TO


# Up to this many documents in a scope, PostgreSQL reads the scope's rows once and tests every term on each
# (1.2-1.5 ms for four words at 1,000 notes, measured); above, each term is looked up in the GIN index and the
# result intersected with the scope's rows (4-6 ms for the same four words at 1,000 notes, but not growing with
# the scope).
ONE_PASS_UP_TO = 3000


async def _pg_holders(tx: Tx, scope_id: int, terms: Sequence[tuple[str, str]], cap: int,
                      size: int) -> list[np.ndarray]:
    """`holders` on PostgreSQL: a phrase of the documents' tsvector (German and English configuration) for a
    word or pair. Word parts are looked up in the texts the scope's arrays keep there (`ScopeArrays.holding`)."""
    if any(table != "fts_words" for table, _ in terms):
        raise ValueError("PostgreSQL has only the words: word parts are found in the scope's kept texts")
    query = "(phraseto_tsquery('german', ?) || phraseto_tsquery('english', ?))"
    args: list[object] = []
    if whole_scope(tx, size):
        for _, term in terms:
            args += [term, term]
        row = await tx.fetchone("SELECT " + ", ".join(f"string_agg(id::text, ',') FILTER (WHERE words @@ {query})"
                                                      for _ in terms) + " FROM docs WHERE scope_id = ?",
                                [*args, scope_id])
    else:
        for _, term in terms:
            args += [scope_id, term, term, None if cap < 0 else cap]
        row = await tx.fetchone("SELECT " + ", ".join(
            f"(SELECT string_agg(id::text, ',') FROM (SELECT id FROM docs WHERE scope_id = ? AND words @@ {query}"
            " LIMIT ?) h)" for _ in terms), args)
    found = [np.array(ids.split(","), dtype=np.int64) if ids else np.zeros(0, np.int64) for ids in row]
    return found if cap < 0 else [ids[:cap] for ids in found]


def best(ids: np.ndarray, scores: np.ndarray, k: int = CANDIDATES) -> dict[int, float]:
    """The k highest-scoring documents (ids[i] scored scores[i]), those that scored at all."""
    top = np.flatnonzero(scores > 0)
    if len(top) > k:
        top = top[np.argpartition(-scores[top], k)[:k]]
    return {int(ids[i]): float(scores[i]) for i in top}


async def related_of(tx: Tx, docs: Mapping[int, str]) -> dict[int, set[int]]:
    """Each document's context among docs (given by id and source: what a scope's arrays know, so that the search
    reads the context while it reads the documents): the messages just before and after it, and notes linked to
    messages."""
    related: dict[int, set[int]] = {}

    def link(a: int, b: int | None) -> None:
        if b is not None and b in docs and a != b:
            related.setdefault(a, set()).add(b)
            related.setdefault(b, set()).add(a)

    messages = [d for d, source in docs.items() if source == "message"]
    notes = [d for d, source in docs.items() if source == "note"]
    # `+d.source` keeps the planner on the id lookups: by the (source, item_id) index it would walk
    # every note or message of every user (19 ms at 100k notes instead of 0.2 ms).
    if messages:
        for doc, before, after in await tx.fetchall(
            "SELECT d.id,"
            " (SELECT p.doc_id FROM messages p WHERE p.scope_id = m.scope_id AND p.created_at >= m.created_at - ?"
            "  AND (p.created_at, p.id) < (m.created_at, m.id) ORDER BY p.created_at DESC, p.id DESC LIMIT 1),"
            " (SELECT n.doc_id FROM messages n WHERE n.scope_id = m.scope_id AND n.created_at <= m.created_at + ?"
            "  AND (n.created_at, n.id) > (m.created_at, m.id) ORDER BY n.created_at, n.id LIMIT 1)"
            " FROM json_each(?) j CROSS JOIN docs d ON d.id = j.value JOIN messages m ON m.id = d.item_id"
            " WHERE +d.source = 'message'",
            (CONTEXT_GAP_SECONDS, CONTEXT_GAP_SECONDS, json.dumps(messages)),
        ):
            link(doc, before)
            link(doc, after)
    if notes:
        for doc, message_doc in await tx.fetchall(
            "SELECT d.id, m.doc_id FROM json_each(?) i CROSS JOIN docs d ON d.id = i.value JOIN notes n"
            " ON n.id = d.item_id, json_each(n.source_message_ids) j JOIN messages m ON m.id = j.value"
            " WHERE +d.source = 'note'",
            (json.dumps(notes),),
        ):
            link(doc, message_doc)
    return related


async def documents(tx: Tx, ids: set[int]) -> dict[int, IndexedDoc]:
    """The documents with these ids."""
    if not ids:
        return {}
    rows = await tx.fetchall(
        "SELECT d.id, d.source, d.item_id, d.text, d.created_at, d.importance, d.last_used_at, d.entered_at"
        " FROM json_each(?) j CROSS JOIN docs d ON d.id = j.value",
        (json.dumps(sorted(ids)),),
    )
    return {row[0]: IndexedDoc(*row) for row in rows}


async def stored_cosines(tx: Tx, ids: list[int], qvec: np.ndarray | None, model: str) -> dict[int, float]:
    """Cosine of the query with the documents' full vectors (the rescoring of the vector search, and
    documents only a word index found).

    The embedding cache holds every document's vector in float16, found by content hash (the index
    writes it with the document, `SearchIndex.add`): two B-tree lookups each. `vec_docs` holds only
    their bits (`memory.search.vectors`). Without a query vector: none.
    """
    if not ids or qvec is None:
        return {}
    rows = await tx.fetchall(
        "SELECT d.id, e.vector FROM json_each(?) j CROSS JOIN docs d ON d.id = j.value JOIN embedding_cache e"
        " ON e.model = ? AND e.purpose = 'document' AND e.content_hash = d.content_hash",
        (json.dumps(ids), model),
    )
    return _cosines(rows, qvec)


def _cosines(rows: list[Any], qvec: np.ndarray) -> dict[int, float]:
    """Cosine of the query with each (doc id, float16 vector) row."""
    if not rows:
        return {}
    matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float16).reshape(len(rows), -1)
    cosines = matrix.astype(np.float32) @ np.asarray(qvec, dtype=np.float32)
    return {doc: float(c) for (doc, _), c in zip(rows, cosines)}
