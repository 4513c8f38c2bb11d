"""Undo: revert the latest processing of a scope (or one named processing) in reverse order, restoring deleted items
with their ids."""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any, Literal

from memory.errors import ReminderFired
from memory.ledgers import audit
from memory.models import AuditEntry, Scope
from memory.search.search_text import content_hash, normalize
from memory.store import MemoryStore

log = logging.getLogger(__name__)


async def latest_processing(store: MemoryStore, scope: Scope) -> list[AuditEntry]:
    """The entries of the newest processing not yet undone (undo processings themselves are skipped).

    Right after an erasure (/forget, /people forget) there is nothing to undo: it is final, and an /undo
    meant for it must not take back an older change instead.
    """
    async with store.db.reading() as tx:
        newest = await tx.fetchone("SELECT action, processing_id FROM audit_log WHERE scope_id = ?"
                                   " ORDER BY id DESC LIMIT 1", (scope.id,))
        if newest is None:
            return []
        if newest[0] == audit.ERASE:  # its entries, all final: the caller says there is nothing to restore
            rows = await tx.fetchall(f"SELECT {audit.AUDIT_COLUMNS} FROM audit_log WHERE scope_id = ?"
                                     " AND processing_id = ? AND action = ? ORDER BY id DESC",
                                     (scope.id, newest[1], audit.ERASE))
            return [audit.entry_from_row(r) for r in rows]
        row = await tx.fetchone(
            "SELECT processing_id FROM audit_log WHERE scope_id = ? AND undone_at IS NULL"
            " AND processing_id NOT LIKE 'undo-%' ORDER BY id DESC LIMIT 1", (scope.id,),
        )
        if row is None:
            return []
        rows = await tx.fetchall(
            f"SELECT {audit.AUDIT_COLUMNS} FROM audit_log WHERE scope_id = ? AND processing_id = ?"
            " AND undone_at IS NULL ORDER BY id DESC",  # an erased item's entries are final (memory.account.erasure)
            (scope.id, row[0]),
        )
    return [audit.entry_from_row(r) for r in rows]


def is_final(entry: AuditEntry) -> bool:
    """Whether an entry records a final erasure, which /undo cannot and must not take back."""
    return entry.action == audit.ERASE


async def undo_latest(store: MemoryStore, scope: Scope) -> list[AuditEntry]:
    """Revert the newest processing; returns its entries (empty when there is nothing to undo).

    Entries of a final erasure (`is_final`) are returned but change nothing: the old text is gone. ReminderFired
    (nothing changes) when it created or moved a reminder that has fired since.
    """
    entries = await latest_processing(store, scope)
    if entries:
        fired = await fired_since(store, scope, entries)
        if fired:
            raise ReminderFired(fired)
        await _undo(store, scope, entries)
    return entries


async def fired_since(store: MemoryStore, scope: Scope, entries: list[AuditEntry]) -> list[str]:
    """The texts of the reminders these entries created or moved (a time set) that fired at or after that time."""
    fired: list[str] = []
    async with store.db.reading() as tx:
        for e in entries:
            if e.item_type != "reminder" or e.item_id is None or "due_at" not in (e.after or {}):
                continue
            row = await tx.fetchone("SELECT text, fired_at FROM reminders WHERE id = ? AND scope_id = ?",
                                    (e.item_id, scope.id))
            if row is not None and row[1] is not None and row[1] >= float((e.after or {})["due_at"]):
                fired.append(str(row[0]))
    return fired


async def standing_entries(store: MemoryStore, scope: Scope, processing_id: str) -> list[AuditEntry]:
    """The entries of one processing that are neither undone nor erased since, newest first."""
    async with store.db.reading() as tx:
        rows = await tx.fetchall(f"SELECT {audit.AUDIT_COLUMNS} FROM audit_log WHERE scope_id = ?"
                                 " AND processing_id = ? AND undone_at IS NULL ORDER BY id DESC",
                                 (scope.id, processing_id))
    return [audit.entry_from_row(r) for r in rows]


@dataclass(frozen=True)
class Undone:
    """What undoing one named processing did: 'done' (its entries reverted), or why nothing changed.

    'missing': the scope has no such processing (never, or gone with /deleteme); 'undone': it was undone
    before; 'final': it was a final erasure; 'later': a later processing changed one of its items, so taking it
    back alone would break that one (the later one must be undone first); 'fired': it created or moved a reminder
    that has fired since (`fired_since`).
    """

    status: Literal["done", "missing", "undone", "final", "later", "fired"]
    entries: tuple[AuditEntry, ...] = ()


async def undo_processing(store: MemoryStore, scope: Scope, processing_id: str) -> Undone:
    """Revert exactly one processing of the scope (not the newest one), when nothing later depends on it.

    Like /undo, the entries of an item erased for good since are left alone (the erasure marked them undone).
    """
    async with store.db.reading() as tx:
        rows = await tx.fetchall(f"SELECT {audit.AUDIT_COLUMNS}, undone_at FROM audit_log WHERE scope_id = ?"
                                 " AND processing_id = ? ORDER BY id DESC", (scope.id, processing_id))
        if not rows:
            return Undone("missing")
        standing = tuple(audit.entry_from_row(r[:-1]) for r in rows if r[-1] is None)
        if not standing:
            final = any(is_final(audit.entry_from_row(r[:-1])) for r in rows)
            return Undone("final" if final else "undone")
        later = await tx.fetchall(  # changes after its first entry by processings still standing (an undo restores)
            "SELECT item_type, item_id FROM audit_log WHERE scope_id = ? AND id > ? AND processing_id != ?"
            " AND undone_at IS NULL AND processing_id NOT LIKE 'undo-%'", (scope.id, standing[-1].id, processing_id))
    if {(e.item_type, e.item_id) for e in standing}.intersection((kind, item) for kind, item in later):
        return Undone("later", standing)
    if await fired_since(store, scope, list(standing)):
        return Undone("fired", standing)
    await _undo(store, scope, list(standing))
    return Undone("done", standing)


async def _undo(store: MemoryStore, scope: Scope, entries: list[AuditEntry]) -> None:
    """Revert the entries of one processing (newest first) and mark it undone."""
    processing = f"undo-{entries[0].processing_id}"
    for entry in entries:
        await _revert(store, scope, entry, processing)
    async with store.db.transaction() as tx:
        await tx.execute("UPDATE audit_log SET undone_at = ? WHERE scope_id = ? AND processing_id = ?",
                         (time.time(), scope.id, entries[0].processing_id))


async def _revert(store: MemoryStore, scope: Scope, e: AuditEntry, processing: str) -> None:
    """Apply the inverse of one audit entry."""
    before = e.before or {}
    kind, action, item_id = e.item_type, e.action, e.item_id
    assert item_id is not None
    if is_final(e):
        return
    if action == "update" and kind in ("diary", "thought", "summary", "topic"):
        await _revert_rewrite(store, scope, e, processing)
    elif kind == "diary" and action == "delete":
        await _restore_diary(store, scope, before, processing)
    elif kind == "note":
        if action == "create":
            await store.notes.delete(scope, item_id, processing=processing, reason="undo")
        elif action == "update":
            await store.notes.edit(scope, item_id, before["text"], importance=before["importance"],
                                   processing=processing, reason="undo")
        elif action in ("close", "delete"):
            await _restore_note(store, scope, before, processing, reopen=action == "close")
    elif kind == "profile":
        if action == "create":
            await store.profile.delete(scope, item_id, processing=processing, reason="undo")
        else:
            await store.profile.set(scope, before["category"], before["key"], before["value"],
                                    importance=before.get("importance", 5), processing=processing, reason="undo")
    elif kind == "thought":
        if action == "create":
            await store.thoughts.delete(scope, item_id, processing=processing, reason="undo")
        else:
            await _restore_thought(store, scope, before, processing)
    elif kind == "rule":
        if action == "update":
            await _set_rule(store, scope, item_id, before["status"])
        elif action == "delete":
            await _restore_rule(store, scope, before)
    elif kind == "topic" and action == "create":
        await store.topics.set_status(scope, item_id, "dropped")
    elif kind == "relationship" and action == "update":
        await store.relationships.restore(scope, before, processing)
    elif kind in ("person", "person_relation"):
        await store.people.revert(scope, e, processing)
    elif kind == "person_date":
        await store.person_dates.revert(scope, e, processing)
    elif kind == "reminder":
        await store.reminders.revert(scope, e)
    elif kind == "import":
        await store.imports.revert(scope, e)
    else:
        log.warning("undo does not know how to revert %s %s", action, kind)


async def _restore_note(store: MemoryStore, scope: Scope, note: dict[str, Any], processing: str, reopen: bool) -> None:
    """Put a note back (same id) with its vector and full-text entries; its vector comes from the cache."""
    vector = (await store.index.embed([note["text"]]))[0]
    async with store.db.transaction() as tx:
        if reopen:
            await tx.execute("UPDATE notes SET valid_to = NULL, superseded_by = NULL, updated_at = ? WHERE id = ?"
                             " AND scope_id = ?", (time.time(), note["id"], scope.id))
        else:
            await tx.execute(
                "INSERT INTO notes(id, scope_id, kind, text, importance, created_at, updated_at, valid_from, valid_to,"
                " superseded_by, source_message_ids, norm_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)",
                (note["id"], scope.id, note["kind"], note["text"], note["importance"], note["created_at"],
                 time.time(), note.get("valid_from"), note.get("valid_to"),
                 json.dumps(list(note.get("source_message_ids") or [])), content_hash(normalize(note["text"]))),
            )
        doc = await store.index.add(tx, scope.id, "note", note["id"], note["text"], vector, note["created_at"],
                                    note["importance"])
        await tx.execute("UPDATE notes SET doc_id = ? WHERE id = ?", (doc, note["id"]))
        await audit.record(tx, scope.id, processing, "restore", "note", note["id"], after=note, reason="undo")


async def _restore_thought(store: MemoryStore, scope: Scope, thought: dict[str, Any], processing: str) -> None:
    vector = (await store.index.embed([thought["text"]]))[0]
    async with store.db.transaction() as tx:
        await tx.execute("INSERT INTO thoughts(id, scope_id, text, origin, created_at) VALUES (?, ?, ?, ?, ?)",
                         (thought["id"], scope.id, thought["text"], thought["origin"], thought["created_at"]))
        doc = await store.index.add(tx, scope.id, "thought", thought["id"], thought["text"], vector,
                                    thought["created_at"])
        await tx.execute("UPDATE thoughts SET doc_id = ? WHERE id = ?", (doc, thought["id"]))
        await audit.record(tx, scope.id, processing, "restore", "thought", thought["id"], after=thought, reason="undo")


async def _revert_rewrite(store: MemoryStore, scope: Scope, e: AuditEntry, processing: str) -> None:
    """Put back the text of a diary entry, a thought or the summary, or the status of a topic."""
    before, item_id = e.before or {}, e.item_id
    assert item_id is not None
    if e.item_type == "diary":
        await store.diary.edit(scope, item_id, before["text"], processing=processing, reason="undo")
    elif e.item_type == "thought":
        await store.thoughts.edit(scope, item_id, before["text"], processing=processing, reason="undo")
    elif e.item_type == "summary":
        await store.conversations.rewrite_summary(scope, before["summary"], processing=processing, reason="undo")
    else:
        await store.topics.set_status(scope, item_id, before["status"])


async def _restore_diary(store: MemoryStore, scope: Scope, entry: dict[str, Any], processing: str) -> None:
    vector = (await store.index.embed([entry["text"]]))[0]
    async with store.db.transaction() as tx:
        await tx.execute("INSERT INTO diary_entries(id, scope_id, day, text, created_at) VALUES (?, ?, ?, ?, ?)",
                         (entry["id"], scope.id, entry["day"], entry["text"], entry["created_at"]))
        doc = await store.index.add(tx, scope.id, "diary", entry["id"], entry["text"], vector, entry["created_at"])
        await tx.execute("UPDATE diary_entries SET doc_id = ? WHERE id = ?", (doc, entry["id"]))
        await audit.record(tx, scope.id, processing, "restore", "diary", entry["id"], after=entry, reason="undo")


async def _set_rule(store: MemoryStore, scope: Scope, rule_id: int, status: str) -> None:
    async with store.db.transaction() as tx:
        await tx.execute("UPDATE learned_rules SET status = ? WHERE id = ? AND scope_id = ?",
                         (status, rule_id, scope.id))


async def _restore_rule(store: MemoryStore, scope: Scope, rule: dict[str, Any]) -> None:
    async with store.db.transaction() as tx:
        await tx.execute("INSERT INTO learned_rules(id, scope_id, text, status, created_at) VALUES (?, ?, ?, ?, ?)",
                         (rule["id"], scope.id, rule["text"], rule["status"], rule["created_at"]))
