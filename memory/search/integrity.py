"""Index integrity: every searchable item has its document, vector and full-text entries, and nothing else.

An item's row, its `docs` row, its vector (bits in `vec_docs`, float16 in the embedding cache) and its entries
in the two FTS5 tables are written in one transaction; `check` proves it after the fact (after a crash, in
`mnemo doctor`, in the crash bench).
"""
from __future__ import annotations

from dataclasses import dataclass

from memory.storage.db import Database, Tx, sqlite_module
from memory.store import MemoryStore


@dataclass(frozen=True)
class Indexed:
    """A table whose rows carry a search document: its source name in `docs`, and which rows must have one."""

    source: str
    table: str
    must_have_doc: str | None  # SQL condition for rows that must be indexed; None: no such rule


INDEXED = (
    Indexed("note", "notes", "valid_to IS NULL"),  # a closed note leaves the index
    Indexed("profile", "profile_entries", "TRUE"),
    Indexed("thought", "thoughts", "TRUE"),
    Indexed("diary", "diary_entries", "TRUE"),
    Indexed("message", "messages", "trim(text) != ''"),
    Indexed("person", "people", None),
)
FTS_TABLES = ("fts_words", "fts_trigram")
LIMIT = 20  # problems listed per kind; the count says how many there are


async def check(store: MemoryStore) -> list[str]:
    """Every inconsistency between items, documents, vectors and full-text entries, one sentence each."""
    return await check_database(store.db)


async def check_database(db: Database) -> list[str]:
    """`check` on a database without its store (no embedding model needed: the copy to PostgreSQL checks so)."""
    problems: list[str] = []
    async with db.transaction() as tx:  # the FTS integrity check is an INSERT command; it writes nothing
        tables = await _tables(tx)
        for kind in INDEXED:
            if kind.table in tables:
                problems += await _items(tx, kind)
        problems += await _documents(tx, [k for k in INDEXED if k.table in tables])
        if await tx.has_table("vec_docs"):
            problems += await _vectors(tx)
        for fts in FTS_TABLES:
            problems += await _full_text(tx, fts)
    return problems


async def _tables(tx: Tx) -> set[str]:
    return await tx.table_names()


def _listed(found: list[str], what: str) -> list[str]:
    """At most LIMIT problems of one kind, and one line saying how many more there are."""
    if len(found) <= LIMIT:
        return found
    return found[:LIMIT] + [f"… and {len(found) - LIMIT} more {what}"]


async def _items(tx: Tx, kind: Indexed) -> list[str]:
    """Rows pointing to a missing or foreign document, and rows that must be indexed but are not."""
    rows = await tx.fetchall(
        f"SELECT i.id, i.doc_id, d.source, d.item_id FROM {kind.table} i LEFT JOIN docs d ON d.id = i.doc_id"
        f" WHERE i.doc_id IS NOT NULL AND (d.id IS NULL OR d.source != ? OR d.item_id != i.id)", (kind.source,))
    found = [f"{kind.source} {item}: its search document {doc} is missing" if source is None
             else f"{kind.source} {item}: points to document {doc} of {source} {other}"
             for item, doc, source, other in rows]
    if kind.must_have_doc is not None:
        rows = await tx.fetchall(f"SELECT id FROM {kind.table} WHERE doc_id IS NULL AND {kind.must_have_doc}")
        found += [f"{kind.source} {r[0]}: not in the search index" for r in rows]
    return _listed(found, f"{kind.source} problems")


async def _documents(tx: Tx, kinds: list[Indexed]) -> list[str]:
    """Documents whose item is gone (or points elsewhere), or of a source nobody writes."""
    found = []
    for kind in kinds:
        rows = await tx.fetchall(
            f"SELECT d.id, d.item_id FROM docs d LEFT JOIN {kind.table} i ON i.id = d.item_id"
            f" WHERE d.source = ? AND (i.id IS NULL OR i.doc_id IS NULL OR i.doc_id != d.id)", (kind.source,))
        found += [f"document {doc}: its {kind.source} {item} is gone or points elsewhere" for doc, item in rows]
    marks = ",".join("?" * len(kinds))
    rows = await tx.fetchall(f"SELECT id, source FROM docs WHERE source NOT IN ({marks})", [k.source for k in kinds])
    found += [f"document {doc}: unknown source {source!r}" for doc, source in rows]
    return _listed(found, "document problems")


async def _vectors(tx: Tx) -> list[str]:
    """Documents without their vector (bits or full), vectors without their document, and vectors filed under
    another scope."""
    missing = await tx.fetchall("SELECT d.id, d.source, d.item_id FROM docs d"
                                " WHERE NOT EXISTS (SELECT 1 FROM vec_docs v WHERE v.doc_id = d.id)")
    found = [f"document {doc} ({source} {item}): its vector is missing" for doc, source, item in missing]
    # The full vector, which rescores the search (`memory.search.vectors`), is the model's cached one.
    uncached = await tx.fetchall(
        "SELECT d.id, d.source, d.item_id FROM docs d WHERE NOT EXISTS (SELECT 1 FROM embedding_cache e"
        " WHERE e.model = (SELECT value FROM meta WHERE key = 'embedding_model') AND e.purpose = 'document'"
        " AND e.content_hash = d.content_hash)")
    found += [f"document {doc} ({source} {item}): its full vector is not in the embedding cache"
              for doc, source, item in uncached]
    rows = await tx.fetchall("SELECT v.doc_id, v.scope_id, d.scope_id, v.source, d.source FROM vec_docs v"
                             " LEFT JOIN docs d ON d.id = v.doc_id")
    for doc, vec_scope, doc_scope, vec_source, doc_source in rows:
        if doc_scope is None:
            found.append(f"vector {doc}: its document is gone")
        elif (vec_scope, vec_source) != (doc_scope, doc_source):
            found.append(f"vector {doc}: filed as {vec_source} of scope {vec_scope}, "
                         f"its document is {doc_source} of scope {doc_scope}")
    return _listed(found, "vector problems")


async def _full_text(tx: Tx, table: str) -> list[str]:
    """FTS5's own check that the full-text index matches the documents it indexes."""
    if not await tx.has_table(table):  # PostgreSQL's full-text vectors are generated columns: nothing to drift
        return []
    try:
        await tx.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
    except sqlite_module().DatabaseError as exc:  # a mismatch reads "database disk image is malformed"
        return [f"full-text index {table} does not match the documents ({exc})"]
    return []
