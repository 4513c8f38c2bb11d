"""Many users' notes for a benchmark without ingesting each one: SQL copies of users the real store built.

`bench/scale.py --spread-copies K` builds `users / K` users through the real store (`Notes.add_many`), then K-1
further sets of as many users whose rows are copies of the first set's under new scopes. 1M notes over 1,000 users
through the store take about an hour (its write path does a few statements per note). With K = 10, measured
2026-12-02 on 2 shared cores (load 4-5): SQLite 119 s for the 100 users through the store + 165 s for the 900
copied, PostgreSQL 262 s + 122 s.

What a note is in the store, and what is copied here (the embedding cache is keyed by model and text, not by user:
a copied note's text is its origin's, so its cached vector is there already):
- `notes`, `docs` (on PostgreSQL its generated tsvector `words` follows), `vec_docs` (the bits), `audit_log`;
- SQLite's two FTS5 tables (rowid `(scope_id << 32) + doc id`) and `scope_changes` are written by the triggers on
  `docs`, as for every writer, so the copies go through them. On PostgreSQL the copies count `scope_changes` once
  per scope with the trigger off, and fill the words' GIN index through its pending list (`_bulk`).
Each copy's ids are its origin's plus a fixed offset per copy, so items and documents keep pointing at each other.
A copy's rows of a table are the origins' joined with a temporary table of who is whose: one statement.
The audit entries' `before`/`after` texts are the origin's (they name the origin's note id).
"""
from __future__ import annotations

from collections.abc import Sequence

from memory.models import Scope
from memory.storage.db import Tx
from memory.store import MemoryStore

COPIED = ("notes", "docs", "vec_docs", "audit_log")  # in this order: a document points at its note


async def copy_users(store: MemoryStore, origins: Sequence[Scope], copies: Sequence[Sequence[Scope]]) -> None:
    """Give each scope of copies[k] (k = 0, 1, ...) the notes of origins' scope at the same place, in SQL."""
    async with store.db.transaction() as tx:
        for table, kind in (("docs", "source"), ("audit_log", "item_type")):
            if await tx.fetchone(f"SELECT 1 FROM {table} WHERE {kind} != 'note' LIMIT 1"):
                raise ValueError(f"only a store of notes can be copied: {table} holds more than notes")
        top = {table: await _max_id(tx, table) for table in ("notes", "docs", "audit_log")}
        columns = {table: await tx.column_names(table) for table in COPIED}
        columns["docs"] = [c for c in columns["docs"] if c != "words"]  # PostgreSQL's generated column
        vector_columns = ", ".join(columns["vec_docs"])
        # vec0 cannot read and write one table in one statement: its rows are read from a plain copy
        await tx.execute(f"CREATE TEMP TABLE copied_vectors AS SELECT {vector_columns} FROM vec_docs"
                         f" WHERE scope_id IN ({','.join('?' * len(origins))})", [s.id for s in origins])
        await tx.execute("CREATE TEMP TABLE copied_scopes (origin BIGINT NOT NULL, scope BIGINT NOT NULL)")
        if tx.dialect == "postgres":
            await _bulk(tx, True)
        for k, scopes in enumerate(copies, start=1):
            if len(scopes) != len(origins):
                raise ValueError(f"copy {k} has {len(scopes)} users for {len(origins)} origins")
            await tx.execute("DELETE FROM copied_scopes")
            await tx.executemany("INSERT INTO copied_scopes(origin, scope) VALUES (?, ?)",
                                 [(origin.id, scope.id) for origin, scope in zip(origins, scopes)])
            await _copy(tx, columns, {table: top_id * k for table, top_id in top.items()})
            if tx.dialect == "postgres":  # what the trigger docs_added counts row by row, once per scope
                await tx.execute("INSERT INTO scope_changes AS c(scope_id, added) SELECT scope_id, count(*) FROM docs"
                                 " WHERE scope_id IN (SELECT scope FROM copied_scopes) GROUP BY scope_id"
                                 " ON CONFLICT (scope_id) DO UPDATE SET added = c.added + excluded.added")
        await tx.execute("DROP TABLE copied_scopes")
        await tx.execute("DROP TABLE copied_vectors")
        if tx.dialect == "postgres":
            await _bulk(tx, False)
            # ids given explicitly leave the identity sequences behind
            for table in top:
                await tx.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                                 f" (SELECT max(id) FROM {table}))")


async def _bulk(tx: Tx, on: bool) -> None:
    """PostgreSQL: turn on (or back off) bulk writing of docs for the copies.

    Two per-row costs of an INSERT into docs make copying 900k documents take 8 minutes instead of one: the change
    counts' trigger (a PL/pgSQL upsert per row; `copy_users` counts per scope instead) and the GIN index of the
    words with fastupdate off (each row's entries merged at once; on, they go to the pending list, which
    gin_clean_pending_list merges in bulk at the end). The store is left as the store writes it: the same rows,
    counts and index, the trigger back on, fastupdate off.
    """
    if on:
        await tx.execute("ALTER TABLE docs DISABLE TRIGGER docs_added")
        await tx.execute("ALTER INDEX docs_words SET (fastupdate = on)")
        return
    await tx.execute("ALTER TABLE docs ENABLE TRIGGER docs_added")
    await tx.fetchone("SELECT gin_clean_pending_list('docs_words'::regclass)")
    await tx.execute("ALTER INDEX docs_words SET (fastupdate = off)")


async def _max_id(tx: Tx, table: str) -> int:
    row = await tx.fetchone(f"SELECT coalesce(max(id), 0) FROM {table}")
    return int(row[0])


async def _copy(tx: Tx, columns: dict[str, list[str]], shift: dict[str, int]) -> None:
    """Copy the rows of each COPIED table of every origin in `copied_scopes` under its scope, ids moved by shift."""
    note, doc, entry = shift["notes"], shift["docs"], shift["audit_log"]
    moved = {  # table -> column -> the copy's value (SQL over the origin's row t); other columns stay as they are
        "notes": {"id": f"t.id + {note}", "doc_id": f"t.doc_id + {doc}", "superseded_by": f"t.superseded_by + {note}"},
        "docs": {"id": f"t.id + {doc}", "item_id": f"t.item_id + {note}"},
        # vec0 takes a bit vector only through vec_bit in an INSERT (memory/search/index.py); PostgreSQL's is bytea
        "vec_docs": {"doc_id": f"t.doc_id + {doc}",
                     "embedding": "t.embedding" if tx.dialect == "postgres" else "vec_bit(t.embedding)"},
        "audit_log": {"id": f"t.id + {entry}", "item_id": f"t.item_id + {note}"},
    }
    for table in COPIED:
        names = columns[table]
        values = [moved[table].get(c, "m.scope" if c == "scope_id" else f"t.{c}") for c in names]
        # no ORDER BY: the ids are given, and a sort would lose vec_bit's type on SQLite
        await tx.execute(f"INSERT INTO {table}({', '.join(names)}) SELECT {', '.join(values)}"
                         f" FROM {'copied_vectors' if table == 'vec_docs' else table} t"
                         " JOIN copied_scopes m ON m.origin = t.scope_id")
