"""Erasure: what a user deletes for good (/deleteme, /forget, /people forget) leaves no byte in the data folder.

Deleting the rows is not enough. SQLite keeps deleted bytes in free space and in the write-ahead log; FTS5
keeps a deleted document's words in the older segments of its index; the embedding cache keeps a hash of
the exact text with its vector; the audit log keeps each item before and after every change; and the
backups keep everything. So:

- every connection zeroes what it deletes (`PRAGMA secure_delete`, memory.storage.db), and both full-text indexes
  take a deleted document's entries out of their segments (FTS5's 'secure-delete' option, m022);
- `erase_note`, `erase_person` and `erase_scope` delete the rows with their documents, vectors and
  full-text entries, reduce the item's audit entries to what happened (action, kind, id, time; the item
  itself becomes `ERASED`, and the entry can no longer be undone), and drop the cached embeddings that no
  remaining document uses;
- `record` leaves a tombstone (scope, kind, id: never text) and a final audit entry;
- `settle` empties the write-ahead log and applies to each backup in the backups folder the tombstones it
  has not seen (`scrub_backups`, also at every start). An update still unhandled in the inbox may hold the
  words too (the message under a pressed button), so the log is emptied once more when it is handled
  (memory.ledgers.inbox).
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memory.ledgers import audit
from memory.ledgers.inbox import hold_for_erasure
from memory.search.search_text import content_hash
from memory.storage.db import Database, Tx

log = logging.getLogger(__name__)

ERASED = audit.ERASED  # what an erased item's audit entries keep of it
_APPLIED = "erasures_applied"  # meta key of a backup: the last tombstone applied to it
_FULL_TEXT = ("fts_words", "fts_trigram")
# Tables with a scope id that /deleteme keeps: the scope (tombstones name it), the tombstones, the last
# number given per kind (a count only), so numbers go on after /deleteme and an old button hits nothing, and the
# counts of its documents' changes (numbers only; they go on counting, so no process searches what was erased).
_NOT_SCOPED = ("scopes", "erasures", "item_number_counters", "scope_changes")
# One document's secure delete costs about as much as merging this many documents' entries into one segment
# (bench/erasure.py: 5 ms against 16 µs a document at 50k documents).
SECURE_DELETE_COST = 300


@dataclass(frozen=True)
class Tombstone:
    """That something was erased: a whole scope, a note or a person (with their earlier records)."""

    id: int
    scope_id: int
    kind: str  # 'scope', 'note', 'person'; or a copy rewritten without them: 'diary', 'thought', 'topic',
    # 'summary', 'relationship' (a backup loses that copy, since the tombstone carries no text to rewrite it)
    item_id: int | None


# --- erasing, in any database of mnemo's (the live one, or a backup of an older schema) ---------------------


async def erase_note(tx: Tx, scope_id: int, note_id: int) -> None:
    """Delete a note with its document, vector, full-text entries, audit history and cached embeddings."""
    row = await tx.fetchone("SELECT text FROM notes WHERE id = ? AND scope_id = ?", (note_id, scope_id))
    texts = await _audit_texts(tx, scope_id, "note", note_id) | ({row[0]} if row else set())
    hashes = await _remove_docs(tx, scope_id, "note", [note_id])
    await tx.execute("UPDATE notes SET superseded_by = NULL WHERE superseded_by = ? AND scope_id = ?",
                     (note_id, scope_id))
    await tx.execute("DELETE FROM notes WHERE id = ? AND scope_id = ?", (note_id, scope_id))
    await _drop_candidates(tx, scope_id, "fact", [note_id])
    await scrub_audit(tx, scope_id, "note", [note_id], texts)
    await drop_cached(tx, hashes | {content_hash(t) for t in texts})


async def _drop_candidates(tx: Tx, scope_id: int, kind: str, item_ids: Sequence[int]) -> None:
    """The imported candidates an erased item came from go with it (they hold its text and the person's words)."""
    if item_ids and await _has(tx, "review_candidates"):
        marks = ", ".join("?" for _ in item_ids)
        await tx.execute(f"DELETE FROM review_candidates WHERE scope_id = ? AND kind = ? AND stored_id IN ({marks})",
                         (scope_id, kind, *item_ids))


async def erase_person(tx: Tx, scope_id: int, person_id: int) -> list[int]:
    """Delete a person, their earlier (merged) records, relations, yearly dates and notes; returns the notes' ids."""
    if not await _has(tx, "people"):
        return []
    ids = await _records_of(tx, scope_id, person_id)
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    notes = [r[0] for r in await tx.fetchall(
        f"SELECT id FROM notes WHERE scope_id = ? AND person_id IN ({marks}) ORDER BY id", (scope_id, *ids))]
    for note_id in notes:
        await erase_note(tx, scope_id, note_id)
    relations = [r[0] for r in await tx.fetchall(
        f"SELECT id FROM person_relations WHERE scope_id = ? AND (a IN ({marks}) OR b IN ({marks}))",
        (scope_id, *ids, *ids))]
    dates = [r[0] for r in await tx.fetchall(
        f"SELECT id FROM person_dates WHERE scope_id = ? AND person_id IN ({marks})", (scope_id, *ids))
    ] if await _has(tx, "person_dates") else []
    await tx.execute("PRAGMA defer_foreign_keys = ON")  # merged records point at each other
    await tx.executemany("DELETE FROM person_relations WHERE id = ?", [(r,) for r in relations])
    await tx.executemany("DELETE FROM person_dates WHERE id = ?", [(d,) for d in dates])
    await _remove_docs(tx, scope_id, "person", ids)
    await tx.execute(f"DELETE FROM people WHERE scope_id = ? AND id IN ({marks})", (scope_id, *ids))
    await _drop_candidates(tx, scope_id, "person", ids)
    await scrub_audit(tx, scope_id, "person", ids)
    await scrub_audit(tx, scope_id, "person_relation", relations)
    await scrub_audit(tx, scope_id, "person_date", dates)
    await prune_cache(tx)  # the documents of the person's every earlier name
    return notes


async def erase_scope(tx: Tx, scope_id: int) -> int:
    """Delete every row of a scope (each table with a scope id), its vectors and full text; returns rows removed.

    Many documents leave the full-text indexes faster all at once: deleted without secure-delete, then both
    indexes merged into one segment without them (`_bulk`).
    """
    if await _has(tx, "vec_docs"):
        await tx.execute("DELETE FROM vec_docs WHERE doc_id IN (SELECT id FROM docs WHERE scope_id = ?)", (scope_id,))
    bulk = await _bulk(tx, scope_id)
    if bulk:
        await _full_text(tx, "secure-delete", 0)
    await tx.execute("PRAGMA defer_foreign_keys = ON")  # notes point at notes and people, people at people
    removed = 0
    for table in await scoped_tables(tx):
        await tx.execute(f"DELETE FROM {table} WHERE scope_id = ?", (scope_id,))
        removed += await tx.changes()
    if bulk:
        await _full_text(tx, "optimize")
        await _full_text(tx, "secure-delete", 1)
    await prune_cache(tx)
    return removed


async def _bulk(tx: Tx, scope_id: int) -> bool:
    """Whether the scope's documents leave the full-text indexes faster in one merge than one by one."""
    scope, total = await tx.fetchone(  # the highest id stands for the number of documents: no count of all
        "SELECT (SELECT count(*) FROM docs WHERE scope_id = ?), (SELECT max(id) FROM docs)", (scope_id,))
    return scope * SECURE_DELETE_COST > (total or 0)


async def _full_text(tx: Tx, command: str, value: int | None = None) -> None:
    """Run an FTS5 command ('optimize', 'rebuild'), or set an option ('secure-delete', 1), on both full-text
    indexes where they exist.
    """
    for table in _FULL_TEXT:
        if not await _has(tx, table):
            continue
        if value is None:
            await tx.execute(f"INSERT INTO {table}({table}) VALUES (?)", (command,))
        else:
            await tx.execute(f"INSERT INTO {table}({table}, rank) VALUES (?, ?)", (command, value))


async def scoped_tables(tx: Tx) -> list[str]:
    """The ordinary tables that hold rows of a scope (a `scope_id` column), in this database's schema."""
    names = [t for t in sorted(await tx.table_names()) if t not in _NOT_SCOPED]
    return [t for t in names if "scope_id" in await tx.column_names(t)]


async def scrub_audit(tx: Tx, scope_id: int, item_type: str, item_ids: Sequence[int],
                      texts: Iterable[str] = ()) -> None:
    """Make the audit entries of erased items final and textless; take the texts out of other entries' reasons."""
    erased, now = json.dumps(ERASED), time.time()
    for item_id in item_ids:
        await tx.execute(
            "UPDATE audit_log SET before = CASE WHEN before IS NULL THEN NULL ELSE ? END,"
            " after = CASE WHEN after IS NULL THEN NULL ELSE ? END, undone_at = COALESCE(undone_at, ?)"
            " WHERE scope_id = ? AND item_type = ? AND item_id = ?",
            (erased, erased, now, scope_id, item_type, item_id))
    for text in texts:
        if text.strip():  # e.g. "contradicted by: <the note's text>" on the note it closed
            await tx.execute("UPDATE audit_log SET reason = replace(reason, ?, '…') WHERE scope_id = ?"
                             " AND instr(reason, ?) > 0", (text, scope_id, text))


async def drop_cached(tx: Tx, hashes: Iterable[str]) -> None:
    """Drop the cached embeddings of these content hashes that no remaining document uses."""
    wanted = sorted(set(hashes))
    for start in range(0, len(wanted), 400):
        part = wanted[start:start + 400]
        marks = ",".join("?" * len(part))
        await tx.execute(
            f"DELETE FROM embedding_cache WHERE content_hash IN ({marks}) AND content_hash NOT IN"
            f" (SELECT content_hash FROM docs WHERE content_hash IN ({marks}))", (*part, *part))


async def prune_cache(tx: Tx) -> int:
    """Drop every cached embedding no document uses (texts deleted, closed, rewritten or never stored)."""
    await tx.execute("DELETE FROM embedding_cache WHERE content_hash NOT IN (SELECT content_hash FROM docs)")
    return await tx.changes()


async def _remove_docs(tx: Tx, scope_id: int, source: str, item_ids: Sequence[int]) -> set[str]:
    """Delete the documents of items with their vectors (the full text follows by trigger); their content hashes."""
    if not item_ids:
        return set()
    marks = ",".join("?" * len(item_ids))
    rows = await tx.fetchall(f"SELECT id, content_hash FROM docs WHERE scope_id = ? AND source = ?"
                             f" AND item_id IN ({marks})", (scope_id, source, *item_ids))
    for doc_id, _hash in rows:
        if await _has(tx, "vec_docs"):
            await tx.execute("DELETE FROM vec_docs WHERE doc_id = ?", (doc_id,))
        await tx.execute("DELETE FROM docs WHERE id = ?", (doc_id,))
    if source in ("note", "person"):
        await tx.execute(f"UPDATE {'notes' if source == 'note' else 'people'} SET doc_id = NULL"
                         f" WHERE scope_id = ? AND id IN ({marks})", (scope_id, *item_ids))
    return {r[1] for r in rows}


async def _audit_texts(tx: Tx, scope_id: int, item_type: str, item_id: int) -> set[str]:
    """Every text an item had, from its audit entries (each edit's before and after)."""
    texts: set[str] = set()
    for before, after in await tx.fetchall("SELECT before, after FROM audit_log WHERE scope_id = ? AND item_type = ?"
                                           " AND item_id = ?", (scope_id, item_type, item_id)):
        for value in (before, after):
            item = json.loads(value) if value else None
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                texts.add(item["text"])
    return texts


async def _records_of(tx: Tx, scope_id: int, person_id: int) -> list[int]:
    """A person's id with the ids of the records merged into them (directly or through others)."""
    rows = await tx.fetchall(
        "WITH RECURSIVE r(id) AS (SELECT id FROM people WHERE id = ? AND scope_id = ? UNION"
        " SELECT p.id FROM people p JOIN r ON p.merged_into = r.id WHERE p.scope_id = ?) SELECT id FROM r ORDER BY id",
        (person_id, scope_id, scope_id))
    return [r[0] for r in rows]


async def _has(tx: Tx, table: str) -> bool:
    return await tx.has_table(table)


# --- the live database -----------------------------------------------------------------------------------


async def record(tx: Tx, scope_id: int, items: Sequence[tuple[str, int | None]], reason: str) -> None:
    """Leave a tombstone for each erased item and one final audit entry for each (none for a whole scope)."""
    now, processing = time.time(), audit.new_processing("erase")
    for kind, item_id in items:
        await tx.execute("INSERT INTO erasures(scope_id, kind, item_id, created_at) VALUES (?, ?, ?, ?)",
                         (scope_id, kind, item_id, now))
        if kind != "scope":
            await tx.execute(
                "INSERT INTO audit_log(scope_id, processing_id, action, item_type, item_id, reason, created_at,"
                " undone_at) VALUES (?, ?, 'erase', ?, ?, ?, ?, ?)",
                (scope_id, processing, kind, item_id, reason, now, now))
    await hold_for_erasure(tx)


async def record_copies(tx: Tx, scope_id: int, items: Sequence[tuple[str, int | None]]) -> None:
    """Leave a tombstone for each copy rewritten without what was erased (their audit is the caller's)."""
    now = time.time()
    await tx.executemany("INSERT INTO erasures(scope_id, kind, item_id, created_at) VALUES (?, ?, ?, ?)",
                         [(scope_id, kind, item_id, now) for kind, item_id in items])


async def settle(db: Database) -> None:
    """After an erasure: empty the write-ahead log, then bring the backups in line."""
    await db.checkpoint()
    await scrub_backups(db)


async def on_open(db: Database, fresh: bool) -> None:
    """At start: once, rewrite a database from before erasure without its free space; always `settle`."""
    async with db.reading() as tx:
        done = await tx.fetchone("SELECT 1 FROM meta WHERE key = 'erasure_vacuumed'")
    if done is None:
        if not fresh and db.dialect == "sqlite":  # PostgreSQL's files are the server's (docs/user-guide.md: Privacy)
            started = time.monotonic()
            await db.vacuum()  # free pages and free space in pages still hold what was deleted before
            log.warning("rewrote %s once without the free space that held deleted text (%.1f s)", db.path,
                        time.monotonic() - started)
        async with db.transaction() as tx:
            await tx.execute("INSERT INTO meta(key, value) VALUES ('erasure_vacuumed', ?)", (str(time.time()),))
    await settle(db)


# --- backups ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScopeErased:
    """That a whole scope was erased (/deleteme), when (time.time()), and the tombstone's id."""

    id: int
    scope_id: int
    at: float


async def scopes_erased(db: Database, after: int) -> list[ScopeErased]:
    """The /deleteme tombstones after the one with id `after`, oldest first (a worker catching up with the others')."""
    async with db.reading() as tx:
        rows = await tx.fetchall("SELECT id, scope_id, created_at FROM erasures WHERE kind = 'scope' AND id > ?"
                                 " ORDER BY id", (after,))
    return [ScopeErased(int(r[0]), int(r[1]), float(r[2])) for r in rows]


async def tombstones(db: Database) -> list[Tombstone]:
    """Every erasure so far, oldest first."""
    async with db.reading() as tx:
        rows = await tx.fetchall("SELECT id, scope_id, kind, item_id FROM erasures ORDER BY id")
    return [Tombstone(*r) for r in rows]


async def scrub_backups(db: Database) -> list[Path]:
    """Apply to every backup in the backups folder the tombstones it has not seen; returns the files changed.

    A backup that cannot be opened is logged and tried again at the next erasure and the next start.
    """
    folder = db.backup_dir
    if not folder.is_dir():
        return []
    stones = await tombstones(db)
    changed = []
    for path in sorted(folder.glob("*.sqlite3")):
        try:
            if await scrub_backup(path, stones):
                changed.append(path)
        except Exception:
            log.warning("could not erase deleted data from the backup %s; trying again at the next start", path,
                        exc_info=True)
    return changed


async def scrub_backup(path: Path, stones: Sequence[Tombstone]) -> bool:
    """Erase from one backup what the tombstones name and it has not seen; True when it changed.

    A backup from before erasure existed (no `erasures` table) is cleaned once: its full-text indexes are
    rebuilt in secure-delete mode, orphaned embeddings dropped, and the file rewritten without free space.
    """
    copy = await Database.open(path, journal="DELETE")
    try:
        async with copy.reading() as tx:
            legacy, applied = await _applied(tx)
        todo = [s for s in stones if s.id > applied]
        if not legacy and not todo:
            return False
        async with copy.transaction() as tx:
            if legacy:  # drop what deletes before erasure left in the full-text indexes
                await _full_text(tx, "secure-delete", 1)
                await _full_text(tx, "rebuild")
                await prune_cache(tx)
            for stone in todo:
                await _apply(tx, stone)
            if await _has(tx, "inbox"):  # unhandled updates copied with the backup: whose words, nobody knows
                await tx.execute("UPDATE inbox SET payload = NULL, shown = '[]' WHERE payload IS NOT NULL")
            await tx.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                             (_APPLIED, str(max([applied, *(s.id for s in todo)]))))
        if legacy:
            await copy.vacuum()
    finally:
        await copy.close()
    return True


async def _applied(tx: Tx) -> tuple[bool, int]:
    """(whether the backup predates erasure, the last tombstone it has seen): its own tombstones count as seen."""
    row = await tx.fetchone("SELECT value FROM meta WHERE key = ?", (_APPLIED,))
    own = await tx.fetchone("SELECT max(id) FROM erasures") if await _has(tx, "erasures") else None
    legacy = row is None and own is None
    return legacy, max(int(row[0]) if row else 0, int(own[0] or 0) if own else 0)


async def _apply(tx: Tx, stone: Tombstone) -> None:
    if stone.kind == "scope":
        await erase_scope(tx, stone.scope_id)
    elif stone.kind == "note" and stone.item_id is not None:
        await erase_note(tx, stone.scope_id, stone.item_id)
    elif stone.kind == "person" and stone.item_id is not None:
        await erase_person(tx, stone.scope_id, stone.item_id)
    elif stone.kind in COPIES:
        await _erase_copy(tx, stone.scope_id, stone.kind, stone.item_id)


# Copies of an erased fact (rewritten in the live database), as a backup drops them: table, source of its documents.
COPIES = {"diary": ("diary_entries", "diary"), "thought": ("thoughts", "thought"), "topic": ("open_topics", ""),
          "summary": ("conversation_state", ""), "relationship": ("relationships", "")}


async def _erase_copy(tx: Tx, scope_id: int, kind: str, item_id: int | None) -> None:
    """In a backup: drop a copy that the live database rewrote without an erased fact."""
    table, source = COPIES[kind]
    if not await _has(tx, table):
        return
    if kind == "summary":
        await tx.execute("UPDATE conversation_state SET summary = '' WHERE scope_id = ?", (scope_id,))
    elif kind == "relationship":
        await tx.execute("UPDATE relationships SET mood = '', notes = '', intentions = '[]', evolving = '{}'"
                         " WHERE scope_id = ?", (scope_id,))
    elif item_id is not None:
        hashes = await _remove_docs(tx, scope_id, source, [item_id]) if source else set()
        await tx.execute(f"DELETE FROM {table} WHERE id = ? AND scope_id = ?", (item_id, scope_id))
        await drop_cached(tx, hashes)
    await scrub_audit(tx, scope_id, kind, [item_id] if item_id is not None else [scope_id])
