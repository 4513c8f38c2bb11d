"""Copy an SQLite store into an empty PostgreSQL one (`mnemo migrate-to-postgres`): every row of every table, ids
as they are, resumable.

Tables go in the order of their foreign keys (the target's catalogue says which), each in batches in SQLite's
rowid order; a batch and the key it reached (a `meta` row `migrated_from_sqlite:<table>` in the target) commit
together, so a copy that was stopped goes on after the last committed batch and never writes a row twice. A column
pointing into its own table (a note's `superseded_by`, a person's `merged_into`) may point forward past a batch:
it is copied as NULL first and set in a second pass. Only the vectors' layout differs: SQLite's vec0 table
`vec_docs` (its bits as they are) goes into PostgreSQL's plain table of the same name. The end: every identity
sequence set past the highest id, the row counts of both sides, the target's index integrity.
"""
from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.errors import CopyRefused
from memory.migrations import applied_migrations, migrate, pending
from memory.search import integrity
from memory.search.vectors import vec_table
from memory.storage.db import Database, Tx
from memory.storage.postgres import PostgresDatabase, shown_url

PROGRESS = "migrated_from_sqlite:"  # meta key prefix in the target: the last key copied of one table (or pass)
DONE = "migrated_from_sqlite"  # meta key in the target once the copy was verified: when it finished
BATCH = 1000
VECTORS = "vec_docs"  # a vec0 table on SQLite (its shadow tables are skipped), a plain table on PostgreSQL
OWN = ("migrations",)  # each side records its own migrations (both must be complete)
# SQLite's internals of FTS5 and vec0, and the side table of a reindex left half done (reindex starts it over).
SHADOW = re.compile(r"^(fts_|docs_fts|vec_docs_|vec_reindex)")
# Rows the target writes itself (the triggers on docs count into scope_changes; opening a store records its model
# in meta): copied last, replacing what is there (`INSERT OR REPLACE`, `memory.storage.sql_dialect.REPLACE_KEYS`).
REPLACED = ("meta", "scope_changes")


@dataclass(frozen=True)
class TableCount:
    """One table's rows on both sides after the copy."""

    table: str
    source: int
    target: int

    @property
    def equal(self) -> bool:
        """Whether the target holds as many rows as the source."""
        return self.source == self.target


@dataclass
class CopyReport:
    """What a run of the copy did and found."""

    counts: list[TableCount] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # the target's index integrity (`memory.search.integrity`)
    copied: dict[str, int] = field(default_factory=dict)  # rows written in this run, per table
    resumed: bool = False  # an earlier run had copied some
    already_done: bool = False  # an earlier run had finished and verified the copy

    @property
    def verified(self) -> bool:
        """Whether every count matches and the target's index is whole."""
        return all(c.equal for c in self.counts) and not self.problems


@dataclass(frozen=True)
class Plan:
    """How one table is copied: its columns (the inbox's `rowid` is SQLite's implicit one), its key in SQLite, and
    the columns that point into the table itself."""

    table: str
    columns: tuple[str, ...]
    key: str = "rowid"
    self_links: tuple[str, ...] = ()


async def copy_to_postgres(source: Database, target: PostgresDatabase, *, batch: int = BATCH) -> CopyReport:
    """Copy the migrated SQLite store `source` into the PostgreSQL store `target` (migrated here first), or go on
    with a copy that was stopped; verify it. Refuses (CopyRefused) a source with pending migrations and a target
    that holds other data."""
    if source.dialect != "sqlite":
        raise CopyRefused("the copy goes from an SQLite file to a PostgreSQL database")
    todo = pending(await applied_migrations(source))
    if todo:
        raise CopyRefused(f"the SQLite database {source.path} is not fully migrated ({len(todo)} pending, from "
                          f"{todo[0]}): start this version of mnemo once without MNEMO_DATABASE_URL, stop it, "
                          "then copy")
    await migrate(target)
    report = CopyReport()
    progress = await _progress(target)
    report.already_done = DONE in progress
    report.resumed = bool(progress) and not report.already_done
    if not progress:
        await _refuse_other_data(target)
    await _vector_table(source, target)
    plans = await _plans(source, target)
    if not report.already_done:
        for plan in plans:
            report.copied[plan.table] = await _copy_table(source, target, plan, progress, batch)
            await _copy_links(source, target, plan, progress, batch)
        await _advance_sequences(target)
    report.counts = [await _count(source, target, plan.table) for plan in plans]
    report.problems = await integrity.check_database(target)
    if report.verified and not report.already_done:
        async with target.transaction() as tx:
            await tx.execute("DELETE FROM meta WHERE key LIKE ?", (PROGRESS + "%",))
            await tx.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (DONE, repr(time.time())))
    return report


async def _progress(target: Database) -> dict[str, str]:
    """The target's progress rows: the last key copied per table (or pass), and DONE once verified."""
    async with target.reading() as tx:
        rows = await tx.fetchall("SELECT key, value FROM meta WHERE key = ? OR key LIKE ?", (DONE, PROGRESS + "%"))
    return {key.removeprefix(PROGRESS): value for key, value in rows}


async def _refuse_other_data(target: PostgresDatabase) -> None:
    """A target that holds scopes but no copy of ours is someone's data: never write into it."""
    async with target.reading() as tx:
        scopes = (await tx.fetchone("SELECT count(*) FROM scopes"))[0]
    if scopes:
        raise CopyRefused(f"{shown_url(target.server)} already holds a memory ({scopes} companion-user pairs) that no "
                          "copy of this command wrote; copy into an empty database (CREATE DATABASE …)")


async def _plans(source: Database, target: Database) -> list[Plan]:
    """Every table to copy, in an order that satisfies the target's foreign keys; rows the target writes itself
    last."""
    async with source.reading() as tx:
        have = await tx.table_names() | ({VECTORS} if await tx.has_table(VECTORS) else set())
        source_columns = {t: await tx.column_names(t) for t in have if t != VECTORS}
    async with target.reading() as tx:
        wanted = await tx.table_names()
        columns = {t: await _written_columns(tx, t) for t in wanted}
        links = await _foreign_keys(tx)
    missing = sorted(t for t in have - wanted if not SHADOW.match(t))
    if missing:
        raise CopyRefused(f"tables of the SQLite database have no place in PostgreSQL: {', '.join(missing)}")
    names = sorted((have & wanted) - set(OWN))
    plans = []
    for table in _in_key_order(names, links):
        if table == VECTORS:
            plans.append(Plan(table, tuple(columns[table]), key="doc_id"))
            continue
        lost = sorted(set(source_columns[table]) - set(columns[table]))
        if lost:
            raise CopyRefused(f"columns of {table} have no place in PostgreSQL: {', '.join(lost)}")
        # A column only PostgreSQL has is SQLite's implicit rowid made explicit (the inbox's), or takes its default.
        kept = [c for c in columns[table] if c in source_columns[table] or c == "rowid"]
        own = tuple(column for column, other in links.get(table, []) if other == table)
        plans.append(Plan(table, tuple(kept), self_links=own))
    return plans


async def _written_columns(tx: Tx, table: str) -> list[str]:
    """A target table's columns that a row is written with (not the generated ones, like docs.words)."""
    rows = await tx.fetchall("SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()"
                             " AND table_name = ? AND is_generated = 'NEVER' ORDER BY ordinal_position", (table,))
    return [r[0] for r in rows]


async def _foreign_keys(tx: Tx) -> dict[str, list[tuple[str, str]]]:
    """Per table, its foreign-key columns and the table each points to."""
    rows = await tx.fetchall(
        "SELECT c.conrelid::regclass::text, a.attname, c.confrelid::regclass::text FROM pg_constraint c"
        " JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)"
        " WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace")
    found: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for table, column, other in rows:
        found[table.strip('"')].append((column, other.strip('"')))
    return found


def _in_key_order(names: Sequence[str], links: dict[str, list[tuple[str, str]]]) -> list[str]:
    """The tables so that each comes after the tables it points to (by name among equals); REPLACED ones last."""
    ordered: list[str] = []
    waiting = [n for n in names if n not in REPLACED]
    while waiting:
        ready = [t for t in waiting if all(o in ordered or o == t or o not in names for _, o in links.get(t, []))]
        if not ready:
            raise CopyRefused(f"the foreign keys of {', '.join(waiting)} point in a circle")
        ordered.append(min(ready))
        waiting.remove(min(ready))
    return ordered + [n for n in REPLACED if n in names]


async def _vector_table(source: Database, target: Database) -> None:
    """PostgreSQL's vec_docs, as opening a store creates it, for the source's recorded model."""
    async with source.reading() as tx:
        row = await tx.fetchone("SELECT value FROM meta WHERE key = 'embedding_dim'")
    async with target.transaction() as tx:
        if row is not None and not await tx.has_table(VECTORS):
            await tx.execute(vec_table(VECTORS, int(row[0]), tx.dialect))


async def _copy_table(source: Database, target: Database, plan: Plan, progress: dict[str, str], batch: int) -> int:
    """Copy one table's rows after the recorded key, a batch per transaction; how many were copied."""
    last = int(progress.get(plan.table, 0))
    verb = "INSERT OR REPLACE" if plan.table in REPLACED else "INSERT"
    insert = (f"{verb} INTO {plan.table}({', '.join(_quoted(c) for c in plan.columns)})"
              f" VALUES ({', '.join('?' * len(plan.columns))})")
    cut = [i for i, c in enumerate(plan.columns) if c in plan.self_links]
    import psycopg

    copied = 0
    while True:
        async with source.reading() as tx:
            rows = await _batch(tx, plan, last, batch)
        if not rows:
            return copied
        values = [[None if i in cut else v for i, v in enumerate(row[1:])] for row in rows]
        try:
            async with target.transaction() as tx:
                await tx.execute("PRAGMA defer_foreign_keys = ON")
                await tx.executemany(insert, values)
                await _record(tx, plan.table, rows[-1][0])
        except (psycopg.DataError, psycopg.IntegrityError) as exc:  # nothing of this batch was written
            raise CopyRefused(f"PostgreSQL refused a row of {plan.table} with {plan.key} {rows[0][0]}…{rows[-1][0]}"
                              f" ({str(exc).strip()}); correct it in the SQLite file and run the command again: "
                              f"it goes on after {plan.key} {last}") from exc
        except psycopg.Error as exc:  # the connection or the server: nothing of this batch was written either
            raise CopyRefused(f"copying {plan.table} stopped ({str(exc).strip()}); run the command again: it goes on "
                              f"after {plan.key} {last}") from exc
        last = rows[-1][0]
        copied += len(rows)


async def _batch(tx: Tx, plan: Plan, last: int, size: int) -> list[Any]:
    """The next rows after key `last`, each led by its key."""
    reads = ", ".join([plan.key, *(_quoted(c) for c in plan.columns)])
    if plan.table != VECTORS:
        return await tx.fetchall(f"SELECT {reads} FROM {plan.table} WHERE {plan.key} > ? ORDER BY {plan.key} LIMIT ?",
                                 (last, size))
    # vec0 reads a range of keys by scanning every vector (0.4-1 s per batch of 1000 among 100k 384-bit vectors);
    # it finds them one key at a time directly, and its own table of row ids gives the keys: all 100k read in 5.0 s
    # (a throwaway script, 2026-12-01, load 8.5 on 2 cores).
    ids = [r[0] for r in await tx.fetchall(f"SELECT rowid FROM {VECTORS}_rowids WHERE rowid > ? ORDER BY rowid"
                                           " LIMIT ?", (last, size))]
    return await tx.fetchall(f"SELECT {reads} FROM json_each(?) j CROSS JOIN {VECTORS} ON {plan.key} = j.value"
                             f" ORDER BY {plan.key}", (json.dumps(ids),)) if ids else []


async def _copy_links(source: Database, target: Database, plan: Plan, progress: dict[str, str], batch: int) -> None:
    """Set the columns that point into the table itself, now that every row they point to is there."""
    if not plan.self_links:
        return
    step = f"{plan.table}.links"
    last = int(progress.get(step, 0))
    sets = ", ".join(f"{_quoted(c)} = ?" for c in plan.self_links)
    select = (f"SELECT rowid, {', '.join(plan.self_links)}, id FROM {plan.table} WHERE rowid > ?"
              f" AND ({' OR '.join(f'{c} IS NOT NULL' for c in plan.self_links)}) ORDER BY rowid LIMIT ?")
    while True:
        async with source.reading() as tx:
            rows = await tx.fetchall(select, (last, batch))
        if not rows:
            return
        last = rows[-1][0]
        async with target.transaction() as tx:
            await tx.executemany(f"UPDATE {plan.table} SET {sets} WHERE id = ?", [row[1:] for row in rows])
            await _record(tx, step, last)


async def _record(tx: Tx, step: str, last: int) -> None:
    await tx.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (PROGRESS + step, str(last)))


async def _advance_sequences(target: Database) -> None:
    """Every identity column's sequence past the highest id copied, so the next row gets a new one."""
    async with target.transaction() as tx:
        identities = await tx.fetchall("SELECT table_name, column_name FROM information_schema.columns"
                                       " WHERE table_schema = current_schema() AND is_identity = 'YES'")
        for table, column in identities:
            await tx.fetchall(f"SELECT setval(pg_get_serial_sequence(?, ?), top) FROM (SELECT max({_quoted(column)})"
                              f" AS top FROM {table}) m WHERE top IS NOT NULL", (table, column))


async def _count(source: Database, target: Database, table: str) -> TableCount:
    """A table's rows on both sides (the target's meta without the copy's own progress rows)."""
    async with source.reading() as tx:
        there = (await tx.fetchone(f"SELECT count(*) FROM {table}"))[0]
    ours = " WHERE key != ? AND key NOT LIKE ?" if table == "meta" else ""
    async with target.reading() as tx:
        here = (await tx.fetchone(f"SELECT count(*) FROM {table}{ours}", (DONE, PROGRESS + "%") if ours else ()))[0]
    return TableCount(table, int(there), int(here))


def _quoted(column: str) -> str:
    return f'"{column}"'

